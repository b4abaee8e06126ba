//! A reply that trickles in over a real socket is read in batches (its
//! socket left quiet between reads), loses nothing, is not held back at its
//! end, and leaves its connection as it found it for the next request.
//! The server is a real HTTP/1.1 server on 127.0.0.1 with keep-alive and
//! chunked framing, writing one OpenAI stream chunk per token.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

use tock::llm::openai::OpenAi;
use tock::llm::{ChatMessage, ChatRequest, Provider, ProviderKind, ProviderSpec, StreamEvent};

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

struct Server {
    base: String,
    connections: Arc<AtomicUsize>,
    /// When the server wrote the end of each response.
    ended_at: Arc<Mutex<Vec<Instant>>>,
}

impl Server {
    /// Serves `paces` in order, as many requests per connection as the
    /// client sends on it.
    async fn start(paces: Vec<Pace>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let ended_at: Arc<Mutex<Vec<Instant>>> = Arc::default();
        let paces = Arc::new(Mutex::new(paces.into_iter()));
        let (count, ended) = (connections.clone(), ended_at.clone());
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(sock, paces.clone(), ended.clone()));
            }
        });
        Server {
            base,
            connections,
            ended_at,
        }
    }
}

async fn serve(
    mut sock: TcpStream,
    paces: Arc<Mutex<std::vec::IntoIter<Pace>>>,
    ended: Arc<Mutex<Vec<Instant>>>,
) {
    sock.set_nodelay(true).unwrap();
    while read_request(&mut sock).await {
        let Some(pace) = paces.lock().unwrap().next() else {
            return;
        };
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
        if sock.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for i in 0..pace.tokens {
            tokio::time::sleep(pace.gap).await;
            let data = chunk(&sse(json!({"content": format!("t{i} ")}), None));
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
        ended.lock().unwrap().push(Instant::now());
    }
}

/// Reads one request (headers and a `Content-Length` body); false at the
/// end of the connection.
async fn read_request(sock: &mut TcpStream) -> bool {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return true;
            }
        }
        match sock.read(&mut tmp).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    }
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
    ChatRequest {
        model: "m".into(),
        system: None,
        messages: vec![ChatMessage::User {
            text: "hi".into(),
            images: vec![],
        }],
        tools: vec![],
    }
}

/// The texts of one reply, each with when the reader got it, and when the
/// reply's Done came.
async fn read_reply(p: &OpenAi) -> (Vec<(Instant, String)>, Instant) {
    let mut stream = p.start(&request()).await.expect("the request is accepted");
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

/// Groups of texts the reader got together (within 2 ms of each other):
/// one per read of the socket.
fn reads(texts: &[(Instant, String)]) -> usize {
    texts
        .windows(2)
        .filter(|w| w[1].0 - w[0].0 > Duration::from_millis(2))
        .count()
        + 1
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
    let n = reads(&texts);
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
    assert_eq!(reads(&texts), 8, "one read per token");
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
async fn the_connection_is_reused_as_it_was_found() {
    // Two trickling replies, one after the other, on one keep-alive
    // connection: a socket left quiet would hold the second reply's head.
    // (A reply that ends with `[DONE]` is dropped there, before the end of
    // its body, so its connection is closed; one without is read to the end
    // and its connection goes back to the client's pool.)
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
    assert_eq!(
        server.connections.load(Ordering::SeqCst),
        1,
        "both replies came on one connection"
    );
    // 40 tokens 5 ms apart take 0.2 s; a stall would wait for the idle timeout (10 s).
    assert!(started.elapsed() < Duration::from_secs(3));
}
