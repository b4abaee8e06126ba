//! The models a provider's server offers, cached in memory for the process
//! (per endpoint, for [`MODELS_TTL`]) so completion never waits on the
//! network: a front end asks for the cached list and, when there is none
//! or it is old, a fetch starts on the runtime in the background.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};

use super::{Engine, lock};
use crate::llm::{LlmError, ModelInfo};

/// How long a fetched list is used before it is fetched again.
pub const MODELS_TTL: Duration = Duration::from_secs(10 * 60);
/// How long a failed fetch is remembered before it is tried again.
const FAILED_TTL: Duration = Duration::from_secs(30);

/// What is known of one endpoint's model list.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelList {
    /// Not fetched yet (a fetch may be on its way).
    Unknown,
    /// As the server listed them, sorted by id.
    Listed(Arc<Vec<ModelInfo>>),
    /// The last fetch failed: the provider's one-line reason.
    Failed(String),
}

/// A model the user chose that its server does not list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownModel {
    /// The model id requests would name.
    pub name: String,
    /// The provider label ("openai", "ollama", …).
    pub provider: &'static str,
    /// Ids the server does list, closest first (at most 5).
    pub suggestions: Vec<String>,
}

struct Entry {
    at: Instant,
    list: ModelList,
    fetching: bool,
}

#[derive(Default)]
struct Cache {
    by_endpoint: HashMap<String, Entry>,
    /// Names already warned about (each once per process).
    warned: HashSet<String>,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The cache key of a resolved model's endpoint.
fn endpoint(kind: crate::llm::ProviderKind, base_url: &str) -> String {
    format!("{}|{base_url}", kind.label())
}

fn fresh(e: &Entry) -> bool {
    let ttl = match e.list {
        ModelList::Failed(_) => FAILED_TTL,
        _ => MODELS_TTL,
    };
    e.at.elapsed() < ttl
}

impl Engine {
    /// The models the server of `model` (a config name or model id; `None`:
    /// the default model) offers, fetched now unless cached and fresh.
    pub async fn fetch_models(&self, model: Option<&str>) -> Result<Arc<Vec<ModelInfo>>> {
        let resolved = self.config().resolve(model).map_err(|e| anyhow!(e))?;
        let key = endpoint(resolved.kind, &resolved.base_url);
        if let Some(ModelList::Listed(l)) = lock(cache())
            .by_endpoint
            .get(&key)
            .filter(|e| fresh(e))
            .map(|e| e.list.clone())
        {
            return Ok(l);
        }
        let got = resolved.provider.list_models().await;
        Ok(store_result(&key, got)?)
    }

    /// The cached list for the server of `model`, at once. When there is
    /// none or it is old, a fetch starts in the background (inside a tokio
    /// runtime; without one nothing is fetched) and a later call sees it.
    pub fn cached_models(&self, model: Option<&str>) -> ModelList {
        // Called while drawing and completing: the key (and `api_key_cmd`)
        // is only needed by the fetch, which resolves it off this thread.
        let Ok(facts) = self.config().facts(model) else {
            return ModelList::Unknown;
        };
        let key = endpoint(facts.kind, &facts.base_url);
        let (list, start) = {
            let mut c = lock(cache());
            let e = c.by_endpoint.entry(key.clone()).or_insert(Entry {
                at: Instant::now(),
                list: ModelList::Unknown,
                fetching: false,
            });
            let start = !e.fetching && (matches!(e.list, ModelList::Unknown) || !fresh(e));
            if start {
                e.fetching = true;
            }
            (e.list.clone(), start)
        };
        if start {
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    let config = self.config().clone();
                    let name = model.map(str::to_string);
                    rt.spawn(async move {
                        let resolved =
                            tokio::task::spawn_blocking(move || config.resolve(name.as_deref()))
                                .await;
                        let got = match resolved {
                            Ok(Ok(r)) => r.provider.list_models().await,
                            Ok(Err(e)) => Err(crate::llm::LlmError::permanent(e)),
                            Err(e) => Err(crate::llm::LlmError::transient(e.to_string())),
                        };
                        if let Err(e) = store_result(&key, got) {
                            tracing::info!("listing models: {e:#}");
                        }
                    });
                }
                Err(_) => {
                    if let Some(e) = lock(cache()).by_endpoint.get_mut(&key) {
                        e.fetching = false;
                    }
                }
            }
        }
        list
    }

    /// Names to offer when choosing a model: the config's entries, `echo`,
    /// and the ids the server of `current` lists (once fetched), without
    /// repeats, in that order.
    pub fn model_candidates(&self, current: Option<&str>) -> Vec<String> {
        let config = self.config();
        let mut out = config.model_names();
        if let ModelList::Listed(l) = self.cached_models(current) {
            for m in l.iter() {
                if !out.contains(&m.id) {
                    out.push(m.id.clone());
                }
            }
        }
        // The other servers' ids, as `ENTRY/ID` (each list is asked for
        // the first time it is wanted, as the current one is).
        for entry in other_servers_entries(config, current) {
            if let ModelList::Listed(l) = self.cached_models(Some(&entry)) {
                for m in l.iter() {
                    let name = format!("{entry}/{}", m.id);
                    if !out.contains(&name) {
                        out.push(name);
                    }
                }
            }
        }
        out
    }

    /// Why the lists of servers could not be read: the server of
    /// `current` (named None) first, then each other server by its first
    /// entry.
    pub fn model_list_failures(&self, current: Option<&str>) -> Vec<(Option<String>, String)> {
        let config = self.config();
        let mut out = Vec::new();
        if let ModelList::Failed(why) = self.cached_models(current) {
            out.push((None, why));
        }
        for entry in other_servers_entries(config, current) {
            if let ModelList::Failed(why) = self.cached_models(Some(&entry)) {
                out.push((Some(entry), why));
            }
        }
        out
    }

    /// The name to keep for a model the user chose (`/model`, `/with`):
    /// as typed when it is the config's (an entry, `ENTRY/ID`); else, when
    /// a configured entry's server lists it as an id (its cached list; the
    /// server of `current` first, as completion offers its ids),
    /// `ENTRY/ID`. Otherwise as typed: the environment's provider's, or
    /// leading nowhere, which choosing it says.
    pub fn model_name_for(&self, name: &str, current: Option<&str>) -> String {
        let config = self.config();
        if config.names_a_config_model(name) {
            return name.to_string();
        }
        // An id a configured server lists goes to that server before the
        // environment's provider takes it: with OPENAI_API_KEY exported for
        // an entry's `api_key_env`, `/model o3` went to api.openai.com, with
        // that key and the conversation, rather than to the configured
        // server Tab had listed it from.
        let entries = config.model_names();
        let current_entry = entry_of(config, current);
        let order = current_entry.iter().chain(
            entries
                .iter()
                .filter(|e| Some(*e) != current_entry.as_ref()),
        );
        for entry in order {
            if entry == "echo" {
                continue;
            }
            if let ModelList::Listed(l) = self.cached_models(Some(entry))
                && l.iter().any(|m| m.id == name)
            {
                return format!("{entry}/{name}");
            }
        }
        name.to_string()
    }

    /// Whether the model list of a configured entry's server (other than
    /// echo) is not in yet and its fetch is on its way (started here where
    /// none was): [`Self::model_name_for`] may find a bare id once it is.
    pub fn model_lists_coming(&self) -> bool {
        let config = self.config();
        config
            .model_names()
            .iter()
            .filter(|entry| entry.as_str() != "echo")
            .any(|entry| self.model_list_coming(Some(entry)))
    }

    /// Whether the list of the server of `model` (None: the default) is
    /// being fetched for the first time, not in yet: worth a short wait.
    pub fn model_list_coming(&self, model: Option<&str>) -> bool {
        if self.cached_models(model) != ModelList::Unknown {
            return false;
        }
        let Ok(facts) = self.config().facts(model) else {
            return false;
        };
        facts.kind != crate::llm::ProviderKind::Echo
            && lock(cache())
                .by_endpoint
                .get(&endpoint(facts.kind, &facts.base_url))
                .is_some_and(|e| e.fetching)
    }

    /// `Some` the first time (per process) a model is chosen whose id its
    /// server does not list: a model id typed for the environment's
    /// provider, or the `model` of a config entry. `None` when it is
    /// listed, was warned about already, cannot be resolved (choosing it
    /// reports that), or the list is not fetched yet (the fetch is started:
    /// ask again when it has arrived).
    pub fn unknown_model(&self, name: &str) -> Option<UnknownModel> {
        let resolved = self.config().facts(Some(name)).ok()?;
        if resolved.kind == crate::llm::ProviderKind::Echo {
            return None;
        }
        let ModelList::Listed(list) = self.cached_models(Some(name)) else {
            return None;
        };
        let id = resolved.model.as_str();
        if list.is_empty() || list.iter().any(|m| m.id == id) {
            return None;
        }
        if !lock(cache()).warned.insert(format!(
            "{}|{id}",
            endpoint(resolved.kind, &resolved.base_url)
        )) {
            return None;
        }
        let lower = id.to_lowercase();
        let mut suggestions: Vec<(usize, String)> = list
            .iter()
            .map(|m| {
                (
                    strsim::levenshtein(&lower, &m.id.to_lowercase()),
                    m.id.clone(),
                )
            })
            .collect();
        suggestions.sort();
        Some(UnknownModel {
            name: id.to_string(),
            provider: resolved.kind.label(),
            suggestions: suggestions.into_iter().take(5).map(|(_, s)| s).collect(),
        })
    }
}

fn store_result(
    key: &str,
    got: Result<Vec<ModelInfo>, LlmError>,
) -> Result<Arc<Vec<ModelInfo>>, LlmError> {
    let mut c = lock(cache());
    let list = match &got {
        Ok(l) => ModelList::Listed(Arc::new(l.clone())),
        Err(e) => ModelList::Failed(e.message.clone()),
    };
    c.by_endpoint.insert(
        key.to_string(),
        Entry {
            at: Instant::now(),
            list: list.clone(),
            fetching: false,
        },
    );
    match (list, got) {
        (ModelList::Listed(l), _) => Ok(l),
        (_, Err(e)) => Err(e),
        (_, Ok(l)) => Ok(Arc::new(l)),
    }
}

/// The config entries (not `echo`) whose servers differ from the server
/// of `current` and from each other's: the first entry of each. Two entries
/// on one server (one model each, say) list the same ids; they are offered
/// once.
fn other_servers_entries(
    config: &crate::config::ConfigSource,
    current: Option<&str>,
) -> Vec<String> {
    let key = |model: Option<&str>| {
        config
            .facts(model)
            .ok()
            .map(|f| endpoint(f.kind, &f.base_url))
    };
    let mut seen: HashSet<String> = key(current).into_iter().collect();
    let current_entry = entry_of(config, current);
    config
        .model_names()
        .into_iter()
        .filter(|entry| entry != "echo" && Some(entry) != current_entry.as_ref())
        .filter(|entry| key(Some(entry)).is_some_and(|k| seen.insert(k)))
        .collect()
}

/// The config entry a model name resolves through (`claude` of
/// `claude/claude-fake-1`), if it resolves.
fn entry_of(config: &crate::config::ConfigSource, model: Option<&str>) -> Option<String> {
    config
        .facts(model)
        .ok()
        .map(|f| f.name.split('/').next().unwrap_or_default().to_string())
        // The environment's provider is no entry: its model's name is the
        // id itself (`gpt-4o-mini`), and `gpt-4o-mini/o3` leads nowhere.
        .filter(|entry| config.get().models.contains_key(entry))
}
