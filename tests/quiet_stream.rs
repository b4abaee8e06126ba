//! A reply that trickles in over a real socket is read in batches (its
//! socket left quiet between reads), loses nothing, and is not held back at
//! its end, whether or not the server closes the connection after it as
//! tock asks. The server is a real HTTP/1.1 server on 127.0.0.1 with
//! keep-alive and chunked framing, writing one OpenAI stream chunk per
//! token; it either honours `Connection: close` or ignores it.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

use tock::llm::openai::OpenAi;
use tock::llm::{
    ChatMessage, ChatRequest, Provider, ProviderKind, ProviderSpec, StreamEvent, TextPace,
};

/// How one response is paced: `tokens` texts `gap` apart, then (after
/// `tail_after`) the finish chunk, `[DONE]` (unless `no_done_marker`, as
/// several compatible servers do) and the end of the body.
#[derive(Clone, Copy, Default)]
struct Pace {
    tokens: usize,
    gap: Duration,
    tail_after: Duration,
    no_done_marker: bool,
}

#[derive(Clone, Default)]
struct Server {
    base: String,
    connections: Arc<AtomicUsize>,
    /// When the server wrote the end of each response.
    ended_at: Arc<Mutex<Vec<Instant>>>,
    /// When the server wrote each token of its first response.
    first_tokens_at: Arc<Mutex<Vec<Instant>>>,
    /// The head of each request, lowercased.
    requests: Arc<Mutex<Vec<String>>>,
    /// Whether a request's `Connection: close` is honoured (said in the
    /// response, and the connection closed after it) or ignored.
    honours_close: bool,
}

impl Server {
    /// Serves `paces` in order, as many requests per connection as the
    /// client sends on it, keeping connections open whatever is asked.
    async fn start(paces: Vec<Pace>) -> Server {
        Self::serving(paces, false).await
    }

    /// The same, closing a connection after a response when asked to.
    async fn start_closing(paces: Vec<Pace>) -> Server {
        Self::serving(paces, true).await
    }

    async fn serving(paces: Vec<Pace>, honours_close: bool) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = Server {
            base: format!("http://{}", listener.local_addr().unwrap()),
            honours_close,
            ..Server::default()
        };
        let paces = Arc::new(Mutex::new(paces.into_iter()));
        let shared = server.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                shared.connections.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(sock, paces.clone(), shared.clone()));
            }
        });
        server
    }
}

async fn serve(mut sock: TcpStream, paces: Arc<Mutex<std::vec::IntoIter<Pace>>>, server: Server) {
    sock.set_nodelay(true).unwrap();
    while let Some(request) = read_request(&mut sock).await {
        let close = server.honours_close
            && request
                .lines()
                .any(|l| l.starts_with("connection:") && l.contains("close"));
        server.requests.lock().unwrap().push(request);
        let Some(pace) = paces.lock().unwrap().next() else {
            return;
        };
        let first = server.ended_at.lock().unwrap().is_empty();
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n{}\r\n",
            if close { "Connection: close\r\n" } else { "" }
        );
        if sock.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for i in 0..pace.tokens {
            tokio::time::sleep(pace.gap).await;
            let data = chunk(&sse(json!({"content": format!("t{i} ")}), None));
            // Taken before the write, so never after the reader could have it.
            if first {
                server.first_tokens_at.lock().unwrap().push(Instant::now());
            }
            if sock.write_all(&data).await.is_err() {
                return;
            }
        }
        tokio::time::sleep(pace.tail_after).await;
        let mut tail = chunk(&sse(json!({}), Some("stop")));
        if !pace.no_done_marker {
            tail.extend(chunk("data: [DONE]\n\n"));
        }
        tail.extend(b"0\r\n\r\n");
        if sock.write_all(&tail).await.is_err() {
            return;
        }
        server.ended_at.lock().unwrap().push(Instant::now());
        if close {
            return;
        }
    }
}

/// Reads one request and returns its head, lowercased; None at the end of
/// the connection.
async fn read_request(sock: &mut TcpStream) -> Option<String> {
    Some(
        common::read_http_request(sock)
            .await?
            .head
            .to_ascii_lowercase(),
    )
}

fn sse(delta: serde_json::Value, finish: Option<&str>) -> String {
    let v = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {v}\n\n")
}

fn chunk(data: &str) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data.as_bytes());
    out.extend_from_slice(b"\r\n");
    out
}

fn provider(base: &str) -> OpenAi {
    let mut spec = ProviderSpec::new(ProviderKind::Openai, base, Some("k".into()));
    spec.connect_timeout = Duration::from_secs(2);
    spec.idle_timeout = Duration::from_secs(10);
    OpenAi::new(spec)
}

fn request() -> ChatRequest {
    request_every(Duration::from_millis(100))
}

/// A request whose caller takes text every `text_every`.
fn request_every(text_every: Duration) -> ChatRequest {
    ChatRequest {
        model: "m".into(),
        system: None,
        messages: vec![ChatMessage::User {
            text: "hi".into(),
            images: vec![],
        }],
        tools: vec![],
        text_every: TextPace::new(text_every),
    }
}

/// The texts of one reply, each with when the reader got it, and when the
/// reply's Done came.
async fn read_reply(p: &OpenAi) -> (Vec<(Instant, String)>, Instant) {
    read_reply_to(p, &request()).await
}

async fn read_reply_to(p: &OpenAi, req: &ChatRequest) -> (Vec<(Instant, String)>, Instant) {
    let mut stream = p.start(req).await.expect("the request is accepted");
    let mut texts = Vec::new();
    while let Some(item) = stream.next().await {
        match item.expect("no error") {
            StreamEvent::Text(t) => texts.push((Instant::now(), t)),
            StreamEvent::Done { .. } => return (texts, Instant::now()),
            _ => {}
        }
    }
    panic!("the stream ended without Done");
}

/// How many reads of the socket brought the texts of the server's first
/// response. A text starts a new read when the reader got it more than 2 ms
/// after the one before *and* the server wrote it after the reader got that
/// one: a text already written then was in the socket's buffer, so the same
/// read took it, even if a preempted thread handed it on late.
fn reads(texts: &[(Instant, String)], server: &Server) -> usize {
    let written = server.first_tokens_at.lock().unwrap().clone();
    let written_at = |text: &str| {
        let i: usize = text
            .trim()
            .strip_prefix('t')
            .and_then(|n| n.parse().ok())
            .expect("a token text");
        written[i]
    };
    texts
        .windows(2)
        .filter(|w| w[1].0 - w[0].0 > Duration::from_millis(2) && written_at(&w[1].1) > w[0].0)
        .count()
        + 1
}

/// A server that closes after a response of 100 tokens 10 ms apart, its
/// end 5 ms after the last.
async fn closing_second_of_tokens() -> Server {
    Server::start_closing(vec![Pace {
        tokens: 100,
        gap: Duration::from_millis(10),
        tail_after: Duration::from_millis(5),
        ..Pace::default()
    }])
    .await
}

/// The end of the server's first response was read within 60 ms of being
/// written (the close announced it; a quiet spell over would be later).
fn end_read_at_once(server: &Server, done: Instant) {
    let ended = server.ended_at.lock().unwrap()[0];
    assert!(
        done - ended < Duration::from_millis(60),
        "the end was read {:?} after it was written",
        done - ended
    );
}

fn joined(texts: &[(Instant, String)]) -> String {
    texts.iter().map(|(_, t)| t.as_str()).collect()
}

fn expected(tokens: usize) -> String {
    (0..tokens).map(|i| format!("t{i} ")).collect()
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_trickling_reply_is_read_in_batches_and_loses_nothing() {
    // 100 tokens 5 ms apart: half a second, 200 tokens/s.
    let pace = Pace {
        tokens: 100,
        gap: Duration::from_millis(5),
        ..Pace::default()
    };
    let server = Server::start(vec![pace]).await;
    let (texts, _) = read_reply(&provider(&server.base)).await;
    assert_eq!(joined(&texts), expected(100), "every token, once, in order");
    // Read as each token arrives, that is about 100 reads; left quiet for
    // 40 ms after each read, about 13.
    let n = reads(&texts, &server);
    assert!(n <= 30, "{n} reads for 100 tokens over 0.5 s");
}

#[tokio::test]
async fn a_slow_reply_is_read_as_each_token_arrives() {
    // Slower than the quiet pause: nothing waits for company.
    let pace = Pace {
        tokens: 8,
        gap: Duration::from_millis(60),
        ..Pace::default()
    };
    let server = Server::start(vec![pace]).await;
    let (texts, _) = read_reply(&provider(&server.base)).await;
    assert_eq!(joined(&texts), expected(8));
    assert_eq!(reads(&texts, &server), 8, "one read per token");
}

#[tokio::test]
async fn the_end_of_a_quiet_reply_is_not_held_back() {
    // The reply trickles (the socket goes quiet between reads), then its
    // end comes on a connection that stays open: it is read within the
    // pause, not when a timeout or more data would wake the socket.
    let pace = Pace {
        tokens: 60,
        gap: Duration::from_millis(5),
        tail_after: Duration::from_millis(300),
        ..Pace::default()
    };
    let server = Server::start(vec![pace]).await;
    let (texts, done) = read_reply(&provider(&server.base)).await;
    assert_eq!(joined(&texts), expected(60));
    let ended = server.ended_at.lock().unwrap()[0];
    assert!(
        done - ended < Duration::from_secs(1),
        "the end was read {:?} after it was written",
        done - ended
    );
}

#[tokio::test]
async fn each_reply_asks_for_its_connection_to_be_closed_and_a_server_that_ignores_it_is_read_as_usual()
 {
    // Two trickling replies, one after the other, from a server that keeps
    // connections open whatever it is asked: each request asks for the
    // close, so the second reply comes on a connection of its own and is
    // never held up behind a socket left quiet.
    let pace = Pace {
        tokens: 40,
        gap: Duration::from_millis(5),
        no_done_marker: true,
        ..Pace::default()
    };
    let server = Server::start(vec![pace, pace]).await;
    let p = provider(&server.base);
    let (first, _) = read_reply(&p).await;
    let started = Instant::now();
    let (second, _) = read_reply(&p).await;
    assert_eq!(joined(&first), expected(40));
    assert_eq!(joined(&second), expected(40));
    let requests = server.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert!(r.contains("\r\nconnection: close"), "{r}");
    }
    assert_eq!(server.connections.load(Ordering::SeqCst), 2);
    // 40 tokens 5 ms apart take 0.2 s; a stall would wait for the idle timeout (10 s).
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_reply_whose_connection_closes_is_read_less_often_and_its_end_at_once() {
    // 100 tokens 5 ms apart, the end 5 ms after the last: the server says it
    // will close, so the socket is left quiet for longer after each read
    // (the close will announce the end), and the end, written in the middle
    // of a quiet spell, is read when the close comes rather than when the
    // spell is over.
    let pace = Pace {
        tokens: 100,
        gap: Duration::from_millis(5),
        tail_after: Duration::from_millis(5),
        ..Pace::default()
    };
    let server = Server::start_closing(vec![pace]).await;
    let (texts, done) = read_reply(&provider(&server.base)).await;
    assert_eq!(joined(&texts), expected(100));
    // About 13 reads with 40 ms quiet spells; 5 or 6 with 100 ms ones.
    let n = reads(&texts, &server);
    assert!(n <= 9, "{n} reads for 100 tokens over 0.5 s");
    // A spell over would be up to 100 ms after the end was written.
    end_read_at_once(&server, done);
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_caller_that_takes_text_seldom_has_a_closing_reply_read_that_seldom() {
    // 100 tokens 10 ms apart (1 s), the end 5 ms after the last, from a
    // server that closes: a caller that takes text every 500 ms (the daemon
    // takes it once a second) has the socket left quiet that long between
    // reads, and the end is still read when the close comes.
    let server = closing_second_of_tokens().await;
    let p = provider(&server.base);
    let (texts, done) = read_reply_to(&p, &request_every(Duration::from_millis(500))).await;
    assert_eq!(joined(&texts), expected(100));
    // Over 1 s: the first token, then after a 500 ms spell, then the close
    // (or one more spell); 100 ms spells make about 11.
    let n = reads(&texts, &server);
    assert!(n <= 5, "{n} reads for 100 tokens over 1 s");
    end_read_at_once(&server, done);
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_quiet_spell_ends_when_the_caller_starts_taking_text_sooner() {
    // A closing server's 100 tokens 10 ms apart; the caller takes text once
    // a second, then (300 ms in) every 100 ms, as when a front end turns to
    // the reply's conversation: the spell under way ends at once rather
    // than a second after it began, and the reads that follow are 100 ms
    // apart.
    let server = closing_second_of_tokens().await;
    let p = provider(&server.base);
    let req = request_every(Duration::from_secs(1));
    let text_every = req.text_every.clone();
    let start = Instant::now();
    let sooner = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        text_every.set(Duration::from_millis(100));
        Instant::now()
    };
    let ((texts, _), changed) = tokio::join!(read_reply_to(&p, &req), sooner);
    assert_eq!(joined(&texts), expected(100));
    let first_after = texts
        .iter()
        .map(|(at, _)| *at)
        .find(|at| *at > changed)
        .expect("text read after the change");
    assert!(
        first_after - changed < Duration::from_millis(60),
        "read {:?} after the change (the spell began about {:?} before it)",
        first_after - changed,
        changed - start
    );
    // After the change: about 7 reads over 0.7 s; a second's spells, 1 or 2.
    let after: Vec<_> = texts
        .iter()
        .filter(|(at, _)| *at > changed)
        .cloned()
        .collect();
    let n = reads(&after, &server);
    assert!(n >= 5, "{n} reads in the 0.7 s after the change");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_first_quiet_spell_at_a_pace_is_as_long_as_the_callers_first_gap() {
    // A closing server's 100 tokens 10 ms apart; the caller takes text every
    // 400 ms, the first gap 200 ms (as the TUI paces a reply on screen):
    // after the first tokens the socket is left quiet for 200 ms, not 400,
    // then for 400 ms at a time.
    let server = closing_second_of_tokens().await;
    let p = provider(&server.base);
    let req = request_every(Duration::from_millis(400));
    req.text_every
        .set_with_first(Duration::from_millis(400), Duration::from_millis(200));
    let (texts, _) = read_reply_to(&p, &req).await;
    assert_eq!(joined(&texts), expected(100));
    let first = texts[0].0;
    // The reads that follow the first tokens (which come 10 ms apart, before
    // the socket is found to trickle).
    let later: Vec<Duration> = texts
        .iter()
        .map(|(at, _)| *at - first)
        .filter(|since| *since > Duration::from_millis(100))
        .collect();
    let second = later[0];
    assert!(
        second < Duration::from_millis(300),
        "the first spell ended {second:?} after the first text"
    );
    let next = later
        .iter()
        .find(|since| **since > second + Duration::from_millis(2))
        .expect("a read after the first spell's");
    assert!(
        *next - second >= Duration::from_millis(350),
        "the next read {:?} later",
        *next - second
    );
}
