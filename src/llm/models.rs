//! The models a provider's server offers: OpenAI-compatible `GET /models`,
//! Anthropic `GET /v1/models`, Ollama `GET /api/tags`.

use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::Value;

use super::LlmError;
use super::http::{self, Http};

/// One model a server offers.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ModelInfo {
    /// What a request names it by.
    pub id: String,
    /// A display name, where the server gives one (Anthropic).
    pub display_name: Option<String>,
}

/// Largest model list read (Ollama lists with details run to a few hundred KB).
const MAX_LIST_BYTES: usize = 8 * 1024 * 1024;

fn json_headers() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(ACCEPT, HeaderValue::from_static("application/json"));
    h
}

fn sorted(mut v: Vec<ModelInfo>) -> Vec<ModelInfo> {
    v.sort_by(|a, b| a.id.cmp(&b.id));
    v.dedup_by(|a, b| a.id == b.id);
    v
}

/// `GET {base}/models` (`base` ends in `/v1` as for chat completions).
pub async fn openai(http: &Http, base_url: &str) -> Result<Vec<ModelInfo>, LlmError> {
    let url = http.url(&format!("{}/models", http::base(base_url)))?;
    let mut headers = json_headers();
    http.add_key_header(&mut headers, AUTHORIZATION, "Bearer ")?;
    let v = http.get_json(url, headers, MAX_LIST_BYTES).await?;
    Ok(sorted(parse_data_ids(&v)))
}

/// `GET {base}/v1/models`, every page.
pub async fn anthropic(
    http: &Http,
    base_url: &str,
    version: &'static str,
) -> Result<Vec<ModelInfo>, LlmError> {
    let base = match http::base(base_url) {
        "" => super::anthropic::DEFAULT_BASE_URL,
        b => b,
    };
    let base = base.strip_suffix("/v1").unwrap_or(base);
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    // A bound on pages, so a server that always says `has_more` cannot loop forever.
    for _ in 0..20 {
        let mut url = http.url(&format!("{base}/v1/models"))?;
        url.query_pairs_mut().append_pair("limit", "1000");
        if let Some(a) = &after {
            url.query_pairs_mut().append_pair("after_id", a);
        }
        let mut headers = json_headers();
        headers.insert("anthropic-version", HeaderValue::from_static(version));
        http.add_key_header(&mut headers, "x-api-key", "")?;
        let v = http.get_json(url, headers, MAX_LIST_BYTES).await?;
        out.extend(parse_data_ids(&v));
        let more = v.get("has_more").and_then(Value::as_bool) == Some(true);
        match v.get("last_id").and_then(Value::as_str) {
            Some(last) if more => after = Some(last.to_string()),
            _ => break,
        }
    }
    Ok(sorted(out))
}

/// `GET {host}/api/tags`: the models pulled on that Ollama.
pub async fn ollama(http: &Http, base_url: &str) -> Result<Vec<ModelInfo>, LlmError> {
    let url = http.url(&format!("{}/api/tags", http::base(base_url)))?;
    let mut headers = json_headers();
    // Ollama needs no key, but one set for a proxy in front of it is sent.
    http.add_key_header(&mut headers, AUTHORIZATION, "Bearer ")?;
    let v = http.get_json(url, headers, MAX_LIST_BYTES).await?;
    let list = v
        .get("models")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let id = m
                .get("name")
                .or_else(|| m.get("model"))
                .and_then(Value::as_str)?;
            Some(ModelInfo {
                id: id.to_string(),
                display_name: None,
            })
        })
        .collect();
    Ok(sorted(list))
}

/// `{"data": [{"id": …, "display_name"?: …}, …]}` (OpenAI and Anthropic).
fn parse_data_ids(v: &Value) -> Vec<ModelInfo> {
    v.get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let id = m.get("id").and_then(Value::as_str)?;
            Some(ModelInfo {
                id: id.to_string(),
                display_name: m
                    .get("display_name")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            })
        })
        .collect()
}
