//! Stream framing throughput (SSE, NDJSON) and time-expression parsing.
//!
//! `cargo bench --bench parse` (add `-- --quick` for a fast pass).
//!
//! The streams are what providers really send for a 4,000-token reply
//! (OpenAI `chat.completion.chunk` events; Ollama `/api/chat` lines), fed in
//! 1,460-byte pieces (one TCP segment) and, for SSE, in 16 KB reads. The
//! `+json` variants also decode each event's JSON with serde_json, as the
//! providers do, to show what the framing costs next to it.
use std::hint::black_box;

use chrono::{FixedOffset, TimeZone};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tock::llm::ndjson::NdjsonParser;
use tock::llm::sse::SseParser;
use tock::when::{Mode, parse_time, split_time_prefix};

const TOKENS: usize = 4_000;

fn word(i: usize) -> &'static str {
    const W: [&str; 8] = [
        " the",
        " reader",
        " line",
        "\\n",
        " `BufRead`",
        " é",
        " count",
        ".",
    ];
    W[i % W.len()]
}

fn openai_sse() -> String {
    let mut s = String::new();
    for i in 0..TOKENS {
        s.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\",\"object\":\"chat.completion.chunk\",\
             \"created\":1741569952,\"model\":\"gpt-4o-mini-2024-07-18\",\"service_tier\":\"default\",\
             \"system_fingerprint\":\"fp_06737a9306\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{}\"}},\
             \"logprobs\":null,\"finish_reason\":null}}]}}\n\n",
            word(i)
        ));
    }
    s.push_str("data: [DONE]\n\n");
    s
}

fn ollama_ndjson() -> String {
    let mut s = String::new();
    for i in 0..TOKENS {
        s.push_str(&format!(
            "{{\"model\":\"llama3.2\",\"created_at\":\"2025-01-01T00:00:00.{i:06}Z\",\
             \"message\":{{\"role\":\"assistant\",\"content\":\"{}\"}},\"done\":false}}\n",
            word(i)
        ));
    }
    s.push_str("{\"model\":\"llama3.2\",\"created_at\":\"2025-01-01T00:00:01Z\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n");
    s
}

fn bench_streams(c: &mut Criterion) {
    let sse = openai_sse();
    let nd = ollama_ndjson();
    let mut g = c.benchmark_group("sse_openai_4000_tokens");
    g.throughput(Throughput::Bytes(sse.len() as u64));
    for chunk in [1460usize, 16 * 1024] {
        g.bench_function(format!("chunks_{chunk}"), |b| {
            b.iter(|| {
                let mut p = SseParser::new();
                let mut n = 0;
                for piece in sse.as_bytes().chunks(chunk) {
                    n += p.push(black_box(piece)).expect("sse").len();
                }
                n += p.finish().expect("sse").len();
                assert_eq!(n, TOKENS + 1);
            })
        });
    }
    g.bench_function("chunks_1460+json", |b| {
        b.iter(|| {
            let mut p = SseParser::new();
            let mut text = 0;
            for piece in sse.as_bytes().chunks(1460) {
                for ev in p.push(black_box(piece)).expect("sse") {
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&ev.data) {
                        text += v["choices"][0]["delta"]["content"]
                            .as_str()
                            .map_or(0, str::len);
                    }
                }
            }
            black_box(text)
        })
    });
    g.finish();

    let mut g = c.benchmark_group("ndjson_ollama_4000_tokens");
    g.throughput(Throughput::Bytes(nd.len() as u64));
    g.bench_function("chunks_1460", |b| {
        b.iter(|| {
            let mut p = NdjsonParser::new();
            let mut n = 0;
            for piece in nd.as_bytes().chunks(1460) {
                n += p.push(black_box(piece)).expect("ndjson").len();
            }
            n += p.finish().len();
            assert_eq!(n, TOKENS + 1);
        })
    });
    g.bench_function("chunks_1460+json", |b| {
        b.iter(|| {
            let mut p = NdjsonParser::new();
            let mut text = 0;
            for piece in nd.as_bytes().chunks(1460) {
                for line in p.push(black_box(piece)).expect("ndjson") {
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                        text += v["message"]["content"].as_str().map_or(0, str::len);
                    }
                }
            }
            black_box(text)
        })
    });
    g.finish();
}

fn bench_when(c: &mut Criterion) {
    // Sun 29 Nov 2026 20:15 at UTC+01:00.
    let tz = FixedOffset::east_opt(3600).expect("offset");
    let now = tz
        .with_ymd_and_hms(2026, 11, 29, 20, 15, 0)
        .single()
        .expect("now");
    let mut g = c.benchmark_group("parse_time");
    for (name, expr, mode) in [
        ("duration_10m", "10m", Mode::Later),
        ("duration_words", "1 hour and 30 minutes", Mode::Later),
        ("clock_9am", "9am", Mode::At),
        ("weekday_time", "fri 5pm", Mode::At),
        ("next_weekday_at", "next monday at 9 am", Mode::At),
        ("iso", "2026-12-01 09:00", Mode::At),
        ("month_name", "1st of december 2027", Mode::At),
        ("unrecognised", "whenever you like", Mode::At),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| black_box(parse_time(black_box(expr), &now, mode)))
        });
    }
    // What the composer runs on every keystroke of `/at …`: the longest
    // leading time expression, then the text.
    g.bench_function("split_prefix_at", |b| {
        b.iter(|| {
            black_box(split_time_prefix(
                black_box("tomorrow at 9am check the build logs and the release notes"),
                &now,
                Mode::At,
            ))
        })
    });
    g.finish();
}

criterion_group!(benches, bench_streams, bench_when);
criterion_main!(benches);
