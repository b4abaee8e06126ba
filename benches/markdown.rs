//! Markdown rendering cost: a typical reply, and a 1 MB one, at width 100.
//!
//! `cargo bench --bench markdown -- --quick`
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tock::tui::highlight::clear_cache;
use tock::tui::markdown::render_markdown;

/// About 2 KB: prose, a list, inline markup and a Rust code block.
const TYPICAL: &str = r#"## Reading a file line by line

You can use `BufReader` to read a file **line by line** without loading it into
memory at once. This is the idiomatic approach for large files, and it works with
any type implementing `Read` (see the [std docs](https://doc.rust-lang.org/std/io/struct.BufReader.html)).

```rust
use std::fs::File;
use std::io::{self, BufRead, BufReader};

fn count_lines(path: &str) -> io::Result<usize> {
    let file = File::open(path)?;
    let reader = BufReader::new(file);
    let mut count = 0;
    for line in reader.lines() {
        let line = line?;
        if !line.trim().is_empty() {
            count += 1; // only non-blank lines
        }
    }
    Ok(count)
}
```

A few things to note:

1. `lines()` strips the trailing `\n` (and `\r\n`), so you never see line endings.
2. Each line is a fresh `String`; if that allocation matters, reuse a buffer with
   `read_line` instead:
   - call `buf.clear()` before each read,
   - stop when it returns `Ok(0)`.
3. Errors are reported *per line*, which is why the loop uses `?` inside.

| Approach | Allocation | Speed |
|---|---|---|
| `lines()` | per line | good |
| `read_line` + reuse | once | better |
| `mmap` | none | best, but `unsafe` |

> Tip: for truly huge inputs, consider memory-mapping the file, but be aware
> that another process may modify it while you read.

That should cover most cases.
"#;

fn bench(c: &mut Criterion) {
    // Load syntect's sets outside the measurement.
    black_box(render_markdown(TYPICAL, 100));

    let mut group = c.benchmark_group("render_markdown");
    group.throughput(Throughput::Bytes(TYPICAL.len() as u64));
    // Re-rendering a reply seen before (width change): highlights cached.
    group.bench_function("typical_2k_w100", |b| {
        b.iter(|| render_markdown(black_box(TYPICAL), 100))
    });
    // First render of a reply: nothing cached.
    group.bench_function("typical_2k_w100_cold", |b| {
        b.iter(|| {
            clear_cache();
            render_markdown(black_box(TYPICAL), 100)
        })
    });

    // Distinct code blocks (the highlight cache would otherwise hit).
    let big: String = (0..(1 << 20) / TYPICAL.len() + 1)
        .map(|i| {
            TYPICAL.replacen(
                "use std::fs::File;",
                &format!("use std::fs::File; // {i}"),
                1,
            )
        })
        .collect();
    group.throughput(Throughput::Bytes(big.len() as u64));
    group.sample_size(10);
    group.bench_function("mixed_1m_w100", |b| {
        b.iter(|| render_markdown(black_box(&big), 100))
    });
    group.bench_function("mixed_1m_w100_cold", |b| {
        b.iter(|| {
            clear_cache();
            render_markdown(black_box(&big), 100)
        })
    });

    let prose = "Lorem ipsum dolor sit amet, *consectetur* adipiscing elit, sed do `eiusmod` \
                 tempor incididunt ut labore et dolore magna aliqua.\n\n"
        .repeat((1 << 20) / 128);
    group.throughput(Throughput::Bytes(prose.len() as u64));
    group.bench_function("prose_1m_w100", |b| {
        b.iter(|| render_markdown(black_box(&prose), 100))
    });

    let code_line = "    let value = compute(&items[index], \"text\", 42) + other; // note\n";
    let code = format!(
        "```rust\n{}```\n",
        code_line.repeat((1 << 20) / code_line.len())
    );
    group.throughput(Throughput::Bytes(code.len() as u64));
    group.bench_function("one_code_block_1m_w100_cold", |b| {
        b.iter(|| {
            clear_cache();
            render_markdown(black_box(&code), 100)
        })
    });

    // A ~16 KB (about 4,000 tokens) reply streamed in 64-byte chunks, the
    // whole message re-rendered after each chunk (the worst case for a
    // caller that does not split off the tail).
    let reply: String = (0..12)
        .map(|i| {
            TYPICAL.replacen(
                "use std::fs::File;",
                &format!("use std::fs::File; // {i}"),
                1,
            )
        })
        .collect();
    let cuts: Vec<usize> = (1..)
        .map(|i| i * 64)
        .take_while(|&c| c < reply.len())
        .filter(|&c| reply.is_char_boundary(c))
        .chain([reply.len()])
        .collect();
    group.throughput(Throughput::Bytes(reply.len() as u64));
    group.bench_function("stream_16k_64b_chunks_w100", |b| {
        b.iter(|| {
            clear_cache();
            for &cut in &cuts {
                black_box(render_markdown(&reply[..cut], 100));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
