//! HTTP plumbing shared by the network providers: timeouts, status
//! classification, readable and secret-free error messages, and the driver
//! that turns a response body into an [`EventStream`].

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use tokio::time::Instant;

use super::{ErrorKind, EventStream, LlmError, ProviderSpec, StreamEvent};

/// Longest error message handed to the user.
const MAX_MESSAGE_CHARS: usize = 300;
/// How much of an error response body is read to find its message.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// How long the socket of a stream that trickles is left unread after a
/// read (see `quiet`): tokens that arrive meanwhile are read together, and
/// the last one is on its way to the screen at most this late.
const READ_EVERY: Duration = Duration::from_millis(40);
/// Upper bound on an honoured `Retry-After`, so a silly header cannot park a
/// message for weeks.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

pub type Item = Result<StreamEvent, LlmError>;

/// Turns body bytes into events. `feed` may return any number of items;
/// `finish` is called at the end of the body when no `Done` or error was
/// produced yet, and must end with one of them (the driver adds "stream
/// ended early" otherwise).
pub trait Decoder: Send + 'static {
    fn feed(&mut self, chunk: &[u8]) -> Vec<Item>;
    fn finish(&mut self) -> Vec<Item>;
}

/// One provider's HTTP client, key and timeouts.
pub struct Http {
    label: &'static str,
    /// Building can only fail if the TLS backend cannot initialise; that is
    /// reported on first use instead of panicking at startup.
    client: Result<reqwest::Client, String>,
    key: Option<String>,
    idle: Duration,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("label", &self.label)
            .field("key", &self.key.as_ref().map(|_| "<redacted>"))
            .field("idle", &self.idle)
            .finish()
    }
}

impl Http {
    pub fn new(label: &'static str, spec: &ProviderSpec) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(spec.connect_timeout)
            // A POST that is redirected would be replayed as a GET, and a
            // custom auth header could follow it to another host: report
            // the redirect instead so the user can fix the base URL.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("tock/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| e.to_string());
        // Whitespace around a key (a newline from `echo`, a space pasted
        // with it) is no part of it: sent, it fails; and a server that
        // echoes the key back trims it, so it would escape redaction.
        let key = spec
            .api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(str::to_string);
        Self {
            label,
            client,
            key,
            idle: spec.idle_timeout,
        }
    }

    /// Add the API key (if any) as a sensitive header: `prefix` + key, e.g.
    /// `Authorization: Bearer …` or `x-api-key: …`.
    pub fn add_key_header(
        &self,
        headers: &mut reqwest::header::HeaderMap,
        name: impl reqwest::header::IntoHeaderName,
        prefix: &str,
    ) -> Result<(), LlmError> {
        let Some(key) = self.key() else { return Ok(()) };
        let mut v =
            reqwest::header::HeaderValue::from_str(&format!("{prefix}{key}")).map_err(|_| {
                self.error(LlmError::permanent(
                    "the API key contains characters not allowed in a header",
                ))
            })?;
        v.set_sensitive(true);
        headers.insert(name, v);
        Ok(())
    }

    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// Parses and checks an endpoint URL.
    pub fn url(&self, url: &str) -> Result<reqwest::Url, LlmError> {
        match reqwest::Url::parse(url) {
            Ok(u) if u.scheme() == "http" || u.scheme() == "https" => Ok(u),
            Ok(u) => Err(self.error(LlmError::permanent(format!(
                "unsupported URL scheme '{}' in {url}",
                u.scheme()
            )))),
            Err(e) => Err(self.error(LlmError::permanent(format!(
                "invalid base URL '{url}': {e}"
            )))),
        }
    }

    /// POSTs a JSON body and waits (at most the idle timeout) for the
    /// response headers. Returns the response only if the status is 2xx.
    pub async fn post(
        &self,
        url: reqwest::Url,
        headers: HeaderMap,
        body: &serde_json::Value,
    ) -> Result<reqwest::Response, LlmError> {
        let host = host_of(&url);
        tracing::debug!(provider = self.label, %host, path = url.path(), "sending request");
        // The server is asked to close the connection after the reply: the
        // close is what tells a quiet socket that the reply has ended
        // (`Http::stream`). It costs no reuse: a reply is dropped at its
        // end marker, before the end of its body, which closes the
        // connection anyway.
        let close = reqwest::header::HeaderValue::from_static("close");
        self.send(
            |c| {
                c.post(url)
                    .headers(headers)
                    .header(reqwest::header::CONNECTION, close)
                    .json(body)
            },
            &host,
        )
        .await
    }

    /// Sends the request `build` makes and waits (at most the idle timeout)
    /// for the response headers; a status other than 2xx becomes a
    /// classified, worded error (the body's detail, a redirect's target).
    async fn send(
        &self,
        build: impl FnOnce(&reqwest::Client) -> reqwest::RequestBuilder,
        host: &str,
    ) -> Result<reqwest::Response, LlmError> {
        let client = self.client.as_ref().map_err(|e| {
            self.error(LlmError::permanent(format!(
                "cannot create HTTP client: {e}"
            )))
        })?;
        let fut = build(client).send();
        let resp = match tokio::time::timeout(self.idle, fut).await {
            Err(_) => {
                return Err(self.error(LlmError::transient(format!(
                    "no response from {host} for {}",
                    fmt_duration(self.idle)
                ))));
            }
            Ok(Err(e)) => return Err(self.error(request_error(&e, host))),
            Ok(Ok(resp)) => resp,
        };
        let status = resp.status();
        tracing::debug!(
            provider = self.label,
            status = status.as_u16(),
            "response headers"
        );
        if status.is_success() {
            return Ok(resp);
        }
        let retry_after = retry_after(resp.headers(), std::time::SystemTime::now());
        let location = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = read_limited(resp, self.idle, self.key.as_deref()).await;
        let mut msg = status_line(status);
        if let Some(detail) = error_detail(&body) {
            msg = format!("{msg}: {detail}");
        } else if let Some(loc) = location.filter(|_| status.is_redirection()) {
            msg = format!("{msg}: redirected to {loc} (check the base URL)");
        }
        let kind = match classify(status) {
            // OpenAI answers an exhausted balance with 429 too; waiting will
            // not refill it.
            Class::Transient if out_of_quota(&body) => ErrorKind::Permanent,
            Class::Transient => ErrorKind::Transient { retry_after },
            Class::Permanent => ErrorKind::Permanent,
        };
        Err(self.error(LlmError { kind, message: msg }))
    }

    /// GETs `url` and returns its JSON body (read within the idle timeout,
    /// at most `max_body` bytes). Failures are classified and worded as
    /// for [`Http::post`].
    pub async fn get_json(
        &self,
        url: reqwest::Url,
        headers: HeaderMap,
        max_body: usize,
    ) -> Result<serde_json::Value, LlmError> {
        let host = host_of(&url);
        tracing::debug!(provider = self.label, %host, path = url.path(), "GET");
        let resp = self.send(|c| c.get(url).headers(headers), &host).await?;
        let mut body = Vec::new();
        let mut stream = resp.bytes_stream();
        loop {
            match tokio::time::timeout(self.idle, stream.next()).await {
                Err(_) => {
                    return Err(self.error(LlmError::transient(format!(
                        "{host} stopped sending for {}",
                        fmt_duration(self.idle)
                    ))));
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => return Err(self.error(request_error(&e, &host))),
                Ok(Some(Ok(chunk))) => {
                    body.extend_from_slice(&chunk);
                    if body.len() > max_body {
                        return Err(self.error(LlmError::permanent(format!(
                            "the answer from {host} is over {} KB",
                            max_body / 1024
                        ))));
                    }
                }
            }
        }
        serde_json::from_slice(&body).map_err(|e| {
            self.error(LlmError::permanent(format!(
                "the answer from {host} is not JSON ({e})"
            )))
        })
    }

    /// Drives `decoder` over the body of an accepted response. Every gap
    /// between chunks is bounded by the idle timeout; the stream ends after
    /// the first `Done` or error. `text_every`: how often the caller takes
    /// text, which paces the reads of a stream that trickles.
    pub fn stream<D: Decoder>(
        &self,
        resp: reqwest::Response,
        decoder: D,
        text_every: &super::TextPace,
    ) -> EventStream {
        // Both or neither: a socket is only left quiet with a timer to end it.
        let socket = super::quiet::QuietSocket::of(&resp)
            .and_then(|s| super::quiet::QuietTimer::new().map(|t| (s, t)));
        let read_every = closes_after(&resp).then(|| text_every.clone());
        // What the server said it sends, when it is no stream: named if
        // nothing in it could be read (a proxy's web page, a JSON answer).
        let not_a_stream = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|ct| {
                ct.split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase()
            })
            .filter(|ct| !ct.is_empty() && !ct.contains("event-stream") && !ct.contains("ndjson"));
        let driver = Driver {
            label: self.label,
            key: self.key.clone(),
            idle: self.idle,
            body: Some(resp.bytes_stream().boxed()),
            decoder,
            queue: VecDeque::new(),
            got_bytes: false,
            read_any: false,
            not_a_stream,
            ended: false,
            socket,
            read_every,
            spell_at: None,
            pace: Pace::Listening,
            last_read: None,
            trickles: false,
            read_since_listen: false,
            last_data: Instant::now(),
        };
        Box::pin(futures::stream::unfold(driver, |mut d| async move {
            let item = d.next_item().await?;
            Some((item, d))
        }))
    }

    /// Makes `err` presentable: provider label, one line, no key, bounded length.
    pub fn error(&self, err: LlmError) -> LlmError {
        finalize(self.label, self.key.as_deref(), err)
    }
}

struct Driver<D> {
    label: &'static str,
    key: Option<String>,
    idle: Duration,
    /// Dropped as soon as the stream is over, which closes the connection.
    body: Option<BoxStream<'static, reqwest::Result<Bytes>>>,
    decoder: D,
    queue: VecDeque<Item>,
    got_bytes: bool,
    /// The decoder read an event (text, a call, an error) from the body.
    read_any: bool,
    /// The body's type when it is not a stream's (`text/html`).
    not_a_stream: Option<String>,
    ended: bool,
    /// The connection's socket, when it could be found, and the timer that
    /// ends its quiet spells (`quiet`).
    socket: Option<(super::quiet::QuietSocket, super::quiet::QuietTimer)>,
    /// How long the socket is left quiet after a read: the caller's pace
    /// when the server's close will announce the end, else `READ_EVERY`.
    read_every: Option<super::TextPace>,
    /// The caller's pace at the last quiet spell: a spell at a new pace is
    /// the first at it, as long as `TextPace::first`.
    spell_at: Option<Duration>,
    pace: Pace,
    /// When data was last read, and whether it comes faster than
    /// `read_every` (then the socket is left quiet after each read).
    last_read: Option<Instant>,
    trickles: bool,
    /// Data was read since the socket last went back to listening.
    read_since_listen: bool,
    /// For the idle timeout.
    last_data: Instant,
}

/// Whether arrivals wake the reader.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pace {
    Listening,
    /// Quiet until the timer fires; data read meanwhile (the peer closed, a
    /// burst) is taken as usual.
    Quiet,
}

/// How long the socket is left quiet after a read, now. When the server
/// closes the connection after the response (which every streamed request
/// asks for), the close wakes a quiet socket at once, so the end of a reply
/// is never held back, and the pause only bounds how late text in the
/// middle of it is taken: as often as the caller takes text
/// (`ChatRequest::text_every`, never less than `READ_EVERY`). The engine
/// hands text to a screen at most ten times a second (the TUI asks for
/// fewer), so a read at that pace makes one hand-over per wake-up, against
/// two and a half wake-ups per hand-over at 40 ms. Otherwise `READ_EVERY`.
fn quiet_for(read_every: &Option<super::TextPace>) -> Duration {
    read_every
        .as_ref()
        .map_or(READ_EVERY, |pace| pace.get().max(READ_EVERY))
}

/// How long the next quiet spell lasts: `quiet_for`, or the caller's first
/// gap at a pace where the last spell (`spell_at`) was at another (its text
/// has just come on screen, and its second hand-over is due sooner than the
/// rest).
fn spell(read_every: &Option<super::TextPace>, spell_at: &mut Option<Duration>) -> Duration {
    let Some(pace) = read_every else {
        return READ_EVERY;
    };
    let every = pace.get();
    let spell = if spell_at.replace(every) == Some(every) {
        every
    } else {
        pace.first()
    };
    spell.max(READ_EVERY)
}

impl<D: Decoder> Driver<D> {
    async fn next_item(&mut self) -> Option<Item> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                if matches!(item, Err(_) | Ok(StreamEvent::Done { .. })) {
                    self.end();
                }
                return Some(item.map_err(|e| finalize(self.label, self.key.as_deref(), e)));
            }
            if self.ended {
                return None;
            }
            let body = self.body.as_mut()?;
            let next = match body.next().now_or_never() {
                Some(next) => Ok(next),
                None => {
                    // Only after a read: the signal that listening again
                    // gave is checked against the low-water mark when the
                    // runtime collects it, so quietening the socket before
                    // the data it announced is read would lose the signal.
                    if let (Pace::Listening, Some((socket, timer))) =
                        (self.pace, self.socket.as_mut())
                        && self.trickles
                        && std::mem::take(&mut self.read_since_listen)
                        && timer.arm(spell(&self.read_every, &mut self.spell_at))
                        && socket.quiet()
                    {
                        self.pace = Pace::Quiet;
                    }
                    let quiet = self.pace == Pace::Quiet;
                    let timer = self.socket.as_ref().map(|(_, t)| t);
                    let idle_at = self.last_data + self.idle;
                    // The caller's pace changing (its text now shown, or no
                    // longer) ends the spell: the next follows the new pace.
                    let paced = self.read_every.as_ref();
                    tokio::select! {
                        biased;
                        next = body.next() => Ok(next),
                        _ = async {
                            tokio::select! {
                                _ = async { if let Some(t) = timer { t.fired().await } } => {}
                                _ = async { match paced { Some(p) => p.changed().await, None => std::future::pending().await } } => {}
                            }
                        }, if quiet => {
                            self.pace = Pace::Listening;
                            if let Some((socket, _)) = self.socket.as_mut() {
                                // Nothing came while quiet: slower than the
                                // pause, so read each arrival as it comes.
                                self.trickles = socket.waiting() > 0;
                                socket.listen();
                            }
                            continue;
                        }
                        _ = tokio::time::sleep_until(idle_at) => Err(()),
                    }
                }
            };
            match next {
                Err(()) => self.queue.push_back(Err(LlmError::transient(format!(
                    "no data for {}",
                    fmt_duration(self.idle)
                )))),
                Ok(Some(Ok(bytes))) => {
                    let now = Instant::now();
                    // Any chunk, empty ones too, shows the connection alive.
                    self.last_data = now;
                    if !bytes.is_empty() {
                        self.got_bytes = true;
                        if self.pace == Pace::Listening {
                            // Two reads closer than the pause: it trickles.
                            self.trickles |= self.last_read.is_some_and(|at| {
                                now.duration_since(at) < quiet_for(&self.read_every)
                            });
                            self.last_read = Some(now);
                            self.read_since_listen = true;
                        }
                        let items = self.decoder.feed(&bytes);
                        self.read_any |= !items.is_empty();
                        self.queue.extend(items);
                    }
                }
                Ok(Some(Err(e))) => self.queue.push_back(Err(LlmError::transient(format!(
                    "stream ended early: connection lost ({})",
                    root_cause(&e)
                )))),
                Ok(None) => {
                    if !self.got_bytes {
                        self.queue
                            .push_back(Err(LlmError::transient("empty response")));
                    } else if let Some(ct) = self.not_a_stream.as_deref().filter(|_| !self.read_any)
                    {
                        // Nothing in it was a stream's: say what it was.
                        self.queue.push_back(Err(LlmError::transient(format!(
                            "the server answered {ct}, not a stream (a proxy or portal in the way, or streaming off?)"
                        ))));
                    } else {
                        self.queue.extend(self.decoder.finish());
                        let terminal = matches!(
                            self.queue.back(),
                            Some(Err(_) | Ok(StreamEvent::Done { .. }))
                        );
                        if !terminal {
                            self.queue
                                .push_back(Err(LlmError::transient("stream ended early")));
                        }
                    }
                }
            }
        }
    }

    fn end(&mut self) {
        self.ended = true;
        self.queue.clear();
        // As it was found, before the connection can go back to the pool.
        self.socket = None;
        self.body = None;
    }
}

/// Whether the server closes the connection after this response (HTTP/1.1
/// with `Connection: close`, HTTP/1.0 without `keep-alive`): then its end
/// comes with the close.
fn closes_after(resp: &reqwest::Response) -> bool {
    let has = |token: &str| {
        resp.headers()
            .get_all(reqwest::header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    match resp.version() {
        reqwest::Version::HTTP_11 => has("close"),
        reqwest::Version::HTTP_10 => !has("keep-alive"),
        _ => false,
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Class {
    Transient,
    Permanent,
}

/// Which failed statuses are worth retrying.
pub fn classify(status: StatusCode) -> Class {
    match status.as_u16() {
        408 | 409 | 425 | 429 | 500..=599 => Class::Transient,
        _ => Class::Permanent,
    }
}

fn out_of_quota(body: &[u8]) -> bool {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
        return false;
    };
    let err = v.get("error");
    ["code", "type"]
        .iter()
        .any(|k| err.and_then(|e| e.get(k)).and_then(|c| c.as_str()) == Some("insufficient_quota"))
}

fn status_line(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        // 529 (Anthropic "overloaded") has no standard reason phrase.
        None if status.as_u16() == 529 => "529 Overloaded".to_string(),
        None => status.as_u16().to_string(),
    }
}

/// `retry-after-ms` (OpenAI) or `Retry-After` in seconds or as an HTTP date.
pub fn retry_after(headers: &HeaderMap, now: std::time::SystemTime) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let parsed = if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        Duration::try_from_secs_f64(ms / 1000.0).ok()
    } else {
        let v = get("retry-after")?;
        if let Ok(secs) = v.parse::<f64>() {
            Duration::try_from_secs_f64(secs).ok()
        } else {
            let at = chrono::DateTime::parse_from_rfc2822(v).ok()?;
            let at = std::time::SystemTime::from(at);
            // A date in the past means "now".
            Some(at.duration_since(now).unwrap_or(Duration::ZERO))
        }
    };
    parsed.map(|d| d.min(MAX_RETRY_AFTER))
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of an error body, with the key
/// (`key`) taken out: a slow or broken body just yields what arrived. The
/// key is looked for in a little more than is kept, so one that straddles
/// the cut is replaced whole (and the `<redacted>` that replaces it is not
/// cut); a beginning of the key at the end of what arrived (a body that
/// stopped mid-key) goes too.
async fn read_limited(resp: reqwest::Response, idle: Duration, key: Option<&str>) -> Vec<u8> {
    let key = key.filter(|k| looks_like_a_secret(k));
    let want = MAX_ERROR_BODY + key.map_or(0, str::len);
    let mut out = Vec::new();
    let mut body = resp.bytes_stream();
    while out.len() < want {
        match tokio::time::timeout(idle, body.next()).await {
            Ok(Some(Ok(chunk))) => out.extend_from_slice(&chunk),
            _ => break,
        }
    }
    match key {
        Some(key) => redact_bytes(&out, key.as_bytes(), MAX_ERROR_BODY),
        None => {
            out.truncate(MAX_ERROR_BODY);
            out
        }
    }
}

/// The shortest beginning of a key taken out at the end of a cut text: a
/// shorter one says too little of the key to be worth mangling the text.
const MIN_KEY_PREFIX: usize = 4;

/// `text` with every `key` replaced, cut once `limit` bytes are written
/// (a replacement is never cut), and a beginning of `key` left at its end
/// replaced too.
fn redact_bytes(text: &[u8], key: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len().min(limit));
    let mut i = 0;
    while i < text.len() && out.len() < limit {
        if !key.is_empty() && text[i..].starts_with(key) {
            out.extend_from_slice(REDACTED.as_bytes());
            i += key.len();
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    drop_key_prefix_at_end(&mut out, key);
    out
}

/// `text` with every secret in `secrets` (longest first, so one that holds
/// another goes whole) replaced. With `cut`, `text` is the beginning of a
/// longer text (a reply still streaming): a beginning of a secret at its end
/// goes too, since the rest of the secret may be in the next chunk.
pub fn redact_secrets(text: &str, secrets: &[String], cut: bool) -> String {
    let mut out = text.to_string();
    for s in secrets.iter().filter(|s| !s.is_empty()) {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), REDACTED);
        }
    }
    if cut {
        let mut bytes = out.into_bytes();
        for s in secrets {
            drop_key_prefix_at_end(&mut bytes, s.as_bytes());
        }
        // A secret's beginning starts at a character of the text and ends
        // the (whole) text, so the cut is at a character boundary.
        out = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    }
    out
}

/// A reply's text on its way to the front ends, redacted of `secrets` as it
/// streams: no secret reaches them, also one split over chunks. Text that
/// could be the beginning of a secret (it ends what arrived so far) is held
/// back until what follows settles it; all the rest goes on at once.
///
/// What it hands on adds up to [`redact_secrets`] of the whole text (with
/// `cut` as [`StreamRedactor::finish`] is given), so the offsets it gives
/// are those of the text as it is stored.
pub struct StreamRedactor {
    secrets: Vec<String>,
    /// Arrived, not handed on: a secret's beginning may be in it.
    held: String,
    /// Bytes handed on so far (the offset of the next text).
    sent: usize,
}

impl StreamRedactor {
    /// `secrets` longest first, as [`redact_secrets`] takes them.
    pub fn new(secrets: &[String]) -> Self {
        Self {
            secrets: secrets.iter().filter(|s| !s.is_empty()).cloned().collect(),
            held: String::new(),
            sent: 0,
        }
    }

    /// Take `text`; returns what may go on now (maybe nothing) and where it
    /// starts in the redacted reply.
    pub fn push(&mut self, text: &str) -> (usize, String) {
        self.held.push_str(text);
        let split = self.safe_end();
        let rest = self.held.split_off(split);
        let out = redact_secrets(
            &std::mem::replace(&mut self.held, rest),
            &self.secrets,
            false,
        );
        let at = self.sent;
        self.sent += out.len();
        (at, out)
    }

    /// The end of the reply: what was held back, redacted (with `cut`, a
    /// beginning of a secret at its end goes too, as for a stored reply cut
    /// there), and where it starts.
    pub fn finish(&mut self, cut: bool) -> (usize, String) {
        let out = redact_secrets(&std::mem::take(&mut self.held), &self.secrets, cut);
        let at = self.sent;
        self.sent += out.len();
        (at, out)
    }

    /// How much of `held` can go now: up to the first place where a secret
    /// may begin and not be complete yet (the rest of it may come), moved
    /// back to before any secret that would straddle it.
    fn safe_end(&self) -> usize {
        let held = self.held.as_str();
        if self.secrets.is_empty() {
            return held.len();
        }
        // The earliest start from which the rest of `held` is a beginning
        // (or the whole) of a secret: a longer one may still come.
        let mut split = held.len();
        for (i, _) in held.char_indices() {
            let tail = &held[i..];
            if self.secrets.iter().any(|s| s.starts_with(tail)) {
                split = i;
                break;
            }
        }
        // A whole secret across the split is held back whole.
        loop {
            let straddling = self.secrets.iter().find_map(|s| {
                held.match_indices(s.as_str())
                    .map(|(at, m)| (at, at + m.len()))
                    .find(|&(at, end)| at < split && end > split)
            });
            match straddling {
                Some((at, _)) => split = at,
                None => return split,
            }
        }
    }
}

/// Replaces a beginning of `key` (at least [`MIN_KEY_PREFIX`] bytes) that
/// ends `text`: what is left of a key a cut went through.
fn drop_key_prefix_at_end(text: &mut Vec<u8>, key: &[u8]) {
    let longest = key.len().saturating_sub(1).min(text.len());
    if let Some(n) = (MIN_KEY_PREFIX..=longest)
        .rev()
        .find(|&n| text.ends_with(&key[..n]))
    {
        text.truncate(text.len() - n);
        text.extend_from_slice(REDACTED.as_bytes());
    }
}

/// The human part of an error body: `error.message` (OpenAI, Anthropic),
/// `error` as a string (Ollama), `message`, or `detail`; else short plain text.
pub fn error_detail(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => json_error_message(&v),
        // HTML error pages say nothing the status line does not.
        Err(_) if text.starts_with('<') => None,
        Err(_) => Some(text.to_string()),
    }
}

/// Finds the message in a JSON error object.
pub fn json_error_message(v: &serde_json::Value) -> Option<String> {
    let nonempty = |v: Option<&serde_json::Value>| {
        v.and_then(|s| s.as_str())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let err = v.get("error");
    nonempty(err.and_then(|e| e.get("message")))
        .or_else(|| nonempty(err))
        .or_else(|| nonempty(v.get("message")))
        .or_else(|| nonempty(v.get("detail")))
        .or_else(|| nonempty(err.and_then(|e| e.get("type"))))
        .or_else(|| match (v.get("detail"), err) {
            (Some(d), _) if !d.is_null() => Some(d.to_string()),
            (_, Some(e)) if !e.is_null() => Some(e.to_string()),
            _ => None,
        })
}

fn host_of(url: &reqwest::Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        _ => url.to_string(),
    }
}

/// Classifies a failure to get response headers. Everything that is not a
/// malformed request is worth retrying: the network may come back.
fn request_error(e: &reqwest::Error, host: &str) -> LlmError {
    if e.is_builder() {
        LlmError::permanent(format!("invalid request: {}", error_chain(e)))
    } else if e.is_timeout() {
        LlmError::transient(format!("timed out connecting to {host}"))
    } else if e.is_connect() {
        // The innermost cause ("Connection refused", a DNS or TLS failure)
        // is the useful part; the layers above it only repeat "connect".
        LlmError::transient(format!("cannot connect to {host}: {}", root_cause(e)))
    } else {
        LlmError::transient(format!("request to {host} failed: {}", error_chain(e)))
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The causes of an error, outermost first, without reqwest's generic
/// wrapper text (which repeats the URL).
fn error_chain(e: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        src = s.source();
    }
    if parts.is_empty() {
        parts.push(e.to_string());
    }
    parts.join(": ")
}

pub fn fmt_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// Whether a configured key is worth redacting from messages. A dummy key
/// for a local server (`x`, `none`, `ollama`, `changeme`) is no secret, and
/// replacing it would mangle ordinary words ("une<redacted>pected" for `x`):
/// only values of a realistic length (8 or more characters) that are not a
/// plain lowercase word (they hold a digit, a capital, a symbol, or are 20
/// characters or longer) are redacted, always as the whole value.
pub fn looks_like_a_secret(key: &str) -> bool {
    let key = key.trim();
    let n = key.chars().count();
    if n < 8 {
        return false;
    }
    let plain_word = key.chars().all(|c| c.is_lowercase() && c.is_alphabetic());
    !plain_word || n >= 20
}

/// What a secret is replaced with.
const REDACTED: &str = "<redacted>";

/// Label prefix, key redaction, one line, length bound — in that order, so
/// truncation can never leave part of a key behind (what an error body's
/// 64 KB cut left of a key went when the body was read, `read_limited`).
/// The key is taken out as it is sent (trimmed), and again once the message
/// is one line, in case the key itself holds whitespace.
pub fn finalize(label: &str, key: Option<&str>, err: LlmError) -> LlmError {
    let key = key.map(str::trim).filter(|k| looks_like_a_secret(k));
    let mut msg = format!("{label}: {}", err.message);
    if let Some(k) = key {
        msg = msg.replace(k, REDACTED);
    }
    let mut line = one_line(&msg);
    if let Some(k) = key {
        let k = one_line(k);
        if !k.is_empty() {
            line = line.replace(&k, REDACTED);
        }
    }
    let line = line.trim_end();
    let message = if line.chars().count() > MAX_MESSAGE_CHARS {
        let cut: String = line.chars().take(MAX_MESSAGE_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    } else {
        line.to_string()
    };
    LlmError {
        kind: err.kind,
        message,
    }
}

/// `text` on one line: controls and runs of whitespace become one space, and
/// none is left at the start.
fn one_line(text: &str) -> String {
    let mut line = String::with_capacity(text.len());
    for c in text.chars() {
        let c = if c.is_control() || c.is_whitespace() {
            ' '
        } else {
            c
        };
        if c == ' ' && (line.is_empty() || line.ends_with(' ')) {
            continue;
        }
        line.push(c);
    }
    line
}

/// Trims a base URL's trailing slashes.
pub fn base(url: &str) -> &str {
    url.trim().trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    /// Every chunking of a text with secrets in it: what is handed on never
    /// holds a secret, adds up to the stored (redacted) text, and text that
    /// cannot begin a secret is not held back.
    #[test]
    fn a_streamed_reply_is_redacted_whatever_its_chunks() {
        let secrets = vec!["sk-live-12345".to_string(), "tok-ABCDEFGH".to_string()];
        let text = "key sk-live-12345 and tok-ABCDEFGH, sk-live-1234 not, é sk-live-12345";
        let stored = redact_secrets(text, &secrets, false);
        for a in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            for b in (a..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                let mut r = StreamRedactor::new(&secrets);
                let mut shown = String::new();
                for chunk in [&text[..a], &text[a..b], &text[b..]] {
                    let (at, out) = r.push(chunk);
                    assert_eq!(at, shown.len());
                    shown.push_str(&out);
                    for s in &secrets {
                        assert!(!shown.contains(s.as_str()), "{a} {b}: {shown}");
                    }
                }
                let (at, out) = r.finish(false);
                assert_eq!(at, shown.len());
                shown.push_str(&out);
                assert_eq!(shown, stored, "chunks at {a} and {b}");
            }
        }
        // Nothing that cannot start a secret waits.
        let mut r = StreamRedactor::new(&secrets);
        assert_eq!(r.push("hello wor"), (0, "hello wor".to_string()));
        assert_eq!(r.push("ld sk-li"), (9, "ld ".to_string()));
        // The last "s" may begin one: it waits for what follows.
        assert_eq!(r.push("ke this"), (12, "sk-like thi".to_string()));
        assert_eq!(r.push(" sk-live-1"), (23, "s ".to_string()));
        // Cut there: the beginning of the secret is not shown either.
        assert_eq!(r.finish(true), (25, REDACTED.to_string()));
        // With no secret configured, everything goes at once.
        let mut r = StreamRedactor::new(&[]);
        assert_eq!(r.push("sk-"), (0, "sk-".to_string()));
    }

    /// Secrets that overlap: one whole secret across the place where a
    /// longer one might begin is not handed on in part.
    #[test]
    fn overlapping_secrets_are_never_handed_on_in_part() {
        let secrets = vec!["cdxyz".to_string(), "abcd".to_string()];
        let mut r = StreamRedactor::new(&secrets);
        // "cdx" may begin the first; "abcd" holds that place: all waits.
        assert_eq!(r.push("abcdx"), (0, String::new()));
        assert_eq!(r.push("q"), (0, "<redacted>xq".to_string()));
        assert_eq!(
            redact_secrets("abcdxq", &secrets, false),
            "<redacted>xq",
            "as stored"
        );
    }

    #[test]
    fn classification() {
        for s in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert_eq!(
                classify(StatusCode::from_u16(s).unwrap()),
                Class::Transient,
                "{s}"
            );
        }
        for s in [301, 400, 401, 403, 404, 413, 422] {
            assert_eq!(
                classify(StatusCode::from_u16(s).unwrap()),
                Class::Permanent,
                "{s}"
            );
        }
    }

    #[test]
    fn retry_after_forms() {
        let now = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_400);
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h, now), None);
        h.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(7)));
        h.insert("retry-after", HeaderValue::from_static("1.5"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(1500)));
        // 2015-10-21T07:28:00Z is 80 s after `now`.
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(80)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:00:00 GMT"),
        );
        assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
        for junk in ["soon", "-3", "NaN", "1e300"] {
            h.insert("retry-after", HeaderValue::from_static(junk));
            let got = retry_after(&h, now);
            assert!(
                got.is_none() || got == Some(MAX_RETRY_AFTER),
                "{junk}: {got:?}"
            );
        }
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(250)));
    }

    #[test]
    fn error_detail_shapes() {
        let d = |s: &str| error_detail(s.as_bytes());
        assert_eq!(
            d(r#"{"error":{"message":"Incorrect API key","type":"x"}}"#).as_deref(),
            Some("Incorrect API key")
        );
        assert_eq!(
            d(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#)
                .as_deref(),
            Some("Overloaded")
        );
        assert_eq!(
            d(r#"{"error":"model 'x' not found"}"#).as_deref(),
            Some("model 'x' not found")
        );
        assert_eq!(
            d(r#"{"object":"error","message":"bad"}"#).as_deref(),
            Some("bad")
        );
        assert_eq!(d(r#"{"detail":"Not Found"}"#).as_deref(), Some("Not Found"));
        assert_eq!(
            d(r#"{"error":{"type":"rate_limit"}}"#).as_deref(),
            Some("rate_limit")
        );
        assert_eq!(d("<html><body>502</body></html>"), None);
        assert_eq!(
            d("upstream connect error").as_deref(),
            Some("upstream connect error")
        );
        assert_eq!(d("  "), None);
    }

    #[test]
    fn redact_secrets_takes_a_secret_cut_at_the_end_only_from_a_cut_text() {
        let secrets = vec![
            "sk-abcdefgh12345678".to_string(),
            "Tok3nValue99".to_string(),
        ];
        let text = "key sk-abcdefgh12345678, token Tok3nValue99 and é sk-abcd";
        assert_eq!(
            redact_secrets(text, &secrets, false),
            "key <redacted>, token <redacted> and é sk-abcd"
        );
        assert_eq!(
            redact_secrets(text, &secrets, true),
            "key <redacted>, token <redacted> and é <redacted>"
        );
        assert_eq!(redact_secrets("plain é", &secrets, true), "plain é");
    }

    #[test]
    fn finalize_redacts_then_truncates_to_one_line() {
        let key = "sk-SECRET-0123456789";
        let long = format!("{}{key}", "x".repeat(295));
        let e = finalize(
            "openai",
            Some(key),
            LlmError::permanent(format!("bad\nkey {key}\r\n\t{long}")),
        );
        assert!(!e.message.contains(key));
        assert!(!e.message.contains("sk-SEC"), "{}", e.message);
        assert!(!e.message.contains('\n'));
        assert!(e.message.starts_with("openai: bad key <redacted> xxx"));
        assert!(e.message.chars().count() <= MAX_MESSAGE_CHARS);
        assert_eq!(e.kind, ErrorKind::Permanent);
    }

    #[test]
    fn finalize_takes_out_a_key_as_sent_and_with_its_whitespace_collapsed() {
        // Given untrimmed (as read from a variable) and found trimmed.
        let e = finalize(
            "openai",
            Some("  sk-SECRET-0123456789 \n"),
            LlmError::permanent("Incorrect API key provided: sk-SECRET-0123456789"),
        );
        assert_eq!(e.message, "openai: Incorrect API key provided: <redacted>");
        // A key with whitespace inside, in a message that folded it.
        let e = finalize(
            "openai",
            Some("sk-SECRET  0123456789"),
            LlmError::permanent("bad key sk-SECRET\n\t0123456789!"),
        );
        assert_eq!(e.message, "openai: bad key <redacted>!");
    }

    #[test]
    fn dummy_keys_do_not_mangle_messages() {
        let text = "unexpected end of input: none of the models is ready; try again";
        for dummy in [
            "x", "none", "ollama", "dummy", "password", "changeme", "sk", "  ",
        ] {
            let e = finalize("openai", Some(dummy), LlmError::permanent(text));
            assert_eq!(e.message, format!("openai: {text}"), "key {dummy:?}");
        }
        for real in [
            "sk-proj-Ab12Cd34Ef56",
            "12345678",
            "AbCdEfGhIj",
            "abcdefghijklmnopqrstuvwxyz",
        ] {
            let e = finalize(
                "openai",
                Some(real),
                LlmError::permanent(format!("key {real} is invalid; unexpected")),
            );
            assert_eq!(
                e.message, "openai: key <redacted> is invalid; unexpected",
                "key {real:?}"
            );
        }
    }

    #[test]
    fn a_key_cut_at_the_limit_is_replaced_whole_and_its_beginning_at_the_end_too() {
        let key = b"sk-SECRET-0123456789";
        // The key straddles the limit: replaced whole, the marker uncut.
        let text = [b"ab ".as_slice(), key, b" cd"].concat();
        assert_eq!(redact_bytes(&text, key, 5), b"ab <redacted>");
        assert_eq!(redact_bytes(&text, key, 100), b"ab <redacted> cd");
        // The text stops inside the key: its beginning goes.
        assert_eq!(redact_bytes(b"ab sk-SECR", key, 100), b"ab <redacted>");
        // Too short a beginning to say anything is left as it is.
        assert_eq!(redact_bytes(b"ab sk-", key, 100), b"ab sk-");
        assert_eq!(redact_bytes(b"plain", key, 3), b"pla");
    }

    #[test]
    fn durations() {
        assert_eq!(fmt_duration(Duration::from_secs(90)), "90s");
        assert_eq!(fmt_duration(Duration::from_millis(300)), "0.3s");
    }
}
