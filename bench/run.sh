#!/usr/bin/env bash
# Measure the real tock binary against its performance targets and print a
# Markdown table (figure, target, result, pass/fail).
#
#   bench/run.sh [--quick] [--no-criterion]
#
#   --quick         3 first-frame runs instead of 10, 5 s idle windows instead of
#                   30 s, no 100 and 30 tokens/s replies (nor the daemon's), 20 replies
#                   instead of 100
#   --no-criterion  skip the criterion benches (frames, scheduler, TUI reloads)
#
# The large database: 1,000 conversations, 200,000 messages, 1,000,000
# finished outbox rows, 100,000 items scheduled 1 hour to 30 days ahead.
#
# Needs: the Rust toolchain, bash, python3 (standard library only), Linux /proc.
# Uses CARGO_TARGET_DIR if set (default: target/); the criterion benches build
# in <target>/criterion-build, at the same time as the release build and the
# seeding, before anything is measured. Everything it creates lives
# in a temporary directory that is removed at the end (kept, and named, with
# TOCK_BENCH_KEEP=1); it never touches your own database, config or logs.
set -euo pipefail

QUICK=0
CRITERION=1
for arg in "$@"; do
    case "$arg" in
        --quick) QUICK=1 ;;
        --no-criterion) CRITERION=0 ;;
        -h | --help)
            sed -n "2,20p" "$0"
            exit 0
            ;;
        *)
            echo "unknown option: $arg" >&2
            exit 2
            ;;
    esac
done

cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case "$TARGET" in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
PROBE=(python3 "$ROOT/bench/pty_probe.py")
RUNS=10
IDLE=30
RATES="2000 100 30"
REPLIES=100
if [ "$QUICK" = 1 ]; then
    RUNS=3
    IDLE=5
    RATES=2000
    REPLIES=20
fi

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

LOAD_START=$(load)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tock-bench.XXXXXX")
SERVER_PID=
DAEMON_PID=
BENCH_BUILD_PID=
SEED_PID=
IDLE_PIDS=()
cleanup() {
    for pid in "$DAEMON_PID" "$SERVER_PID" "$SEED_PID" "$BENCH_BUILD_PID" "${IDLE_PIDS[@]}"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    if [ -n "${TOCK_BENCH_KEEP:-}" ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# Nothing is measured until every build and the seeding are done, and
# those run together. The criterion benches build in a target directory of
# their own: their dev-dependencies change the features of the library's
# dependencies, so nothing of the release build can be reused for them, and
# in one directory cargo's lock would make the two builds take turns.
BENCH_TARGET=$TARGET/criterion-build
if [ "$CRITERION" = 1 ]; then
    log "building the criterion benches in the background (target dir $BENCH_TARGET)…"
    CARGO_TARGET_DIR=$BENCH_TARGET cargo bench --locked --no-run \
        --bench render --bench scheduler --bench tui_store >"$WORK/bench-build.log" 2>&1 &
    BENCH_BUILD_PID=$!
fi
log "building (release)…"
cargo build --release --locked --bin tock --bin tock-seed >&2
TOCK=$TARGET/release/tock
SEED=$TARGET/release/tock-seed

# A clean environment: an empty config file, logs in the work dir, and the local
# server as the only provider.
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL OLLAMA_HOST TOCK_MODEL TOCK_LOG TMUX
# The config files in a directory of their own, where nothing else is
# written: tock watches its config file's directory, and the server's log
# and the results written into $WORK would wake the idle windows below.
mkdir -m 700 "$WORK/config"
export TOCK_CONFIG=$WORK/config/none.toml
: >"$TOCK_CONFIG"
export TOCK_LOG_DIR=$WORK/log
RESULTS=$WORK/results.jsonl
: >"$RESULTS"
record() { # record STEP JSON
    python3 -c 'import json,sys; d=json.loads(sys.argv[2]); d["step"]=sys.argv[1]; print(json.dumps(d))' \
        "$1" "$2" >>"$RESULTS"
}

SERVER_LOG=$WORK/server.jsonl
"${PROBE[@]}" server --port-file "$WORK/port" --log "$SERVER_LOG" --tokens 4000 &
SERVER_PID=$!
for _ in $(seq 100); do
    [ -s "$WORK/port" ] && break
    sleep 0.05
done
export OPENAI_BASE_URL="http://127.0.0.1:$(cat "$WORK/port")/v1"
export OPENAI_API_KEY=bench

# Each database in a directory of its own: tock watches its database's
# directory for other processes' commits, and is woken by a write to any
# file in it, so the idle windows below, run beside a reply, would be woken
# by that reply's writes in a shared one.
for dir in empty large configured idle-empty; do
    mkdir -m 700 "$WORK/$dir"
done
EMPTY=$WORK/empty/tock.db
LARGE=$WORK/large/tock.db

log "seeding the large database${BENCH_BUILD_PID:+ (while the benches build)}…"
"$SEED" --db "$LARGE" --conversations 1000 --messages 200000 --outbox-history 1000000 --scheduled 100000 &
SEED_PID=$!
wait "$SEED_PID"
SEED_PID=
# The memory sessions below each start from this copy, so that neither
# opens on the replies of another (no process has the file open now).
cp "$LARGE" "$WORK/large-seeded.db"
if [ -n "$BENCH_BUILD_PID" ]; then
    log "waiting for the criterion benches' build…"
    if ! wait "$BENCH_BUILD_PID"; then
        BENCH_BUILD_PID=
        cat "$WORK/bench-build.log" >&2
        echo "building the criterion benches failed" >&2
        exit 1
    fi
    BENCH_BUILD_PID=
fi
BUILT_AT=$SECONDS

log "first frame, empty database ($RUNS runs after one that creates it)…"
export TOCK_DB=$EMPTY
"${PROBE[@]}" first-frame --bin "$TOCK" --runs 1 >/dev/null
record first_frame_empty "$("${PROBE[@]}" first-frame --bin "$TOCK" --runs "$RUNS")"

export TOCK_DB=$LARGE
log "first frame, large database ($RUNS runs after one that warms the page cache)…"
"${PROBE[@]}" first-frame --bin "$TOCK" --runs 1 >/dev/null
record first_frame_large "$("${PROBE[@]}" first-frame --bin "$TOCK" --runs "$RUNS")"

log "F2 on the large database: $RUNS openings, 20 arrow keys in each…"
record f2_large "$("${PROBE[@]}" f2 --bin "$TOCK" --runs "$RUNS" --keys 20)"

log "tock search on the large database ($RUNS runs each, after one that warms the page cache)…"
"$TOCK" search --json buffered >/dev/null
for q in "rare answer 123457" "common buffered reader" "prefix buf" "none zebra"; do
    set -- $q
    step=$1
    shift
    record "search_$step" "$("${PROBE[@]}" cli-time --bin "$TOCK" --runs "$RUNS" -- search --json "$@")"
done

for db in empty large; do
    if [ "$db" = empty ]; then export TOCK_DB=$EMPTY; else export TOCK_DB=$LARGE; fi
    log "session, $db database: memory, a 4,000-token reply at full speed…"
    record "session_$db" "$("${PROBE[@]}" session --bin "$TOCK" \
        --send "stream full speed ($db)" --server-log "$SERVER_LOG")"
done

# Idle with what could keep an engine busy configured: recurring series
# (each waits for its next occurrence, hours away) and MCP servers (started
# on the first turn that offers tools, so never while idle). Measured below,
# with the idle windows of the other two databases.
CONFIGURED_TOML=$WORK/config/configured.toml
cat >"$CONFIGURED_TOML" <<TOML
[mcp.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "$WORK"]

[mcp.web]
url = "http://127.0.0.1:9/mcp"
TOML
chmod 600 "$CONFIGURED_TOML"
export TOCK_DB=$WORK/configured/tock.db TOCK_CONFIG=$CONFIGURED_TOML
for i in $(seq 20); do
    every=("every 6h" "every 12h" "every 3d" "every 2w")
    "$TOCK" send --new "series $i" --every "${every[i % 4]}" "a recurring task, number $i" >/dev/null
done
export TOCK_CONFIG=$WORK/config/none.toml

log "session, large database as seeded: memory after a 1 MB reply…"
export TOCK_DB=$WORK/large-copy.db
cp "$WORK/large-seeded.db" "$TOCK_DB"
record session_1mb "$("${PROBE[@]}" session --bin "$TOCK" --timeout 120 \
    --send "stream%1048576 one megabyte" --server-log "$SERVER_LOG")"
log "session, large database as seeded: memory after $REPLIES replies of 1,000 tokens…"
rm -f "$TOCK_DB" "$TOCK_DB-wal" "$TOCK_DB-shm"
cp "$WORK/large-seeded.db" "$TOCK_DB"
record session_100 "$("${PROBE[@]}" session --bin "$TOCK" --timeout 60 --send-count "$REPLIES" \
    --send "stream#1000 many replies" --server-log "$SERVER_LOG")"
rm -f "$TOCK_DB" "$TOCK_DB-wal" "$TOCK_DB-shm" "$WORK/large-seeded.db"

log "the machine's floor: CPU time of a bare sleep-and-wake (200 × 20 ms)…"
record wake_floor "$("${PROBE[@]}" wake-floor)"

# The three idle windows run side by side, alongside the slowest reply:
# what they count (each idle process's own wake-ups, CPU time and output)
# no other process can add to, as none of them shares a database's or a
# config file's directory, which another process's writes would wake. Their starts are over before the
# reply is sent; the three together wake the machine 6 times in 30 s.
# Run one after the other, they took a minute and a half more.
idle_windows() {
    local name db config
    for name in empty large configured; do
        case $name in
            empty) db=$WORK/idle-empty/tock.db config=$WORK/config/none.toml ;;
            large) db=$LARGE config=$WORK/config/none.toml ;;
            configured) db=$WORK/configured/tock.db config=$CONFIGURED_TOML ;;
        esac
        TOCK_DB=$db TOCK_CONFIG=$config "${PROBE[@]}" session --bin "$TOCK" --idle "$IDLE" \
            >"$WORK/idle_$name.json" &
        IDLE_PIDS+=("$!")
    done
}

export TOCK_DB=$EMPTY
LAST_RATE=${RATES##* }
for rate in $RATES; do
    if [ "$rate" = "$LAST_RATE" ]; then
        log "idle windows, ${IDLE} s each: empty database, large database, 20 recurring series and two MCP servers configured…"
        idle_windows
        sleep 4
    fi
    log "session, empty database: a 4,000-token reply at $rate tokens/s…"
    # 4,000 tokens at 30 tokens/s take 133 s: the timeout follows the pace.
    record "session_paced_$rate" "$("${PROBE[@]}" session --bin "$TOCK" --timeout $((4000 / rate + 60)) \
        --send "stream@$rate paced" --server-log "$SERVER_LOG")"
done

for pid in "${IDLE_PIDS[@]}"; do
    wait "$pid"
done
IDLE_PIDS=()
for name in empty large configured; do
    record "idle_$name" "$(cat "$WORK/idle_$name.json")"
done

log "the mouse moving over the window: 300 motions, 10 ms apart…"
record mouse_motion "$("${PROBE[@]}" mouse-motion --bin "$TOCK")"

log "keys typed while a reply streams at 100 tokens/s (40 keys)…"
record keys_streaming "$("${PROBE[@]}" keys-streaming --bin "$TOCK" --timeout 60 --keys 40 \
    --send "stream@100#1500 keys")"

if [ "$QUICK" = 0 ]; then
    log "tock daemon, empty database: a 4,000-token reply at 100 tokens/s…"
    record daemon_reply "$("${PROBE[@]}" daemon-reply --bin "$TOCK" --timeout 120 \
        --send "stream@100 daemon" --server-log "$SERVER_LOG")"
fi

log "due-to-request latency: 100 items due over 10 s, tock daemon on the large database…"
export TOCK_DB=$LARGE
"$SEED" --db "$LARGE" --due 100 --due-start-ms 3000 --due-spread-ms 10000
"$TOCK" daemon 2>"$WORK/daemon.log" &
DAEMON_PID=$!
for _ in $(seq 300); do # up to 30 s
    n=$("${PROBE[@]}" count --server-log "$SERVER_LOG" --prefix "bench-due ")
    [ "$n" -ge 100 ] && break
    sleep 0.1
done
kill -TERM "$DAEMON_PID" 2>/dev/null || true
wait "$DAEMON_PID" 2>/dev/null || true
DAEMON_PID=
record latency "$("${PROBE[@]}" latency --server-log "$SERVER_LOG")"

CRITERION_DIR=
if [ "$CRITERION" = 1 ]; then
    # Built above; the benches' seeded database is the one `cargo bench`
    # run by hand keeps in <target>/bench-db.
    export CARGO_TARGET_DIR=$BENCH_TARGET
    export TOCK_BENCH_DB_DIR=${TOCK_BENCH_DB_DIR:-$TARGET/bench-db}
    log "criterion: frame benches (cargo bench --bench render -- --quick)…"
    cargo bench --locked --bench render -- --quick \
        'chat_5000/(warm|warm_top|cold)$|view_5000/warm|stream_token/view|stream_reply/|key_frame/(5000_messages|streaming_1000_pending)' >&2
    log "criterion: scheduler pass on 1,000,000 outbox rows / 100,000 scheduled (cargo bench --bench scheduler -- --quick)…"
    cargo bench --locked --bench scheduler -- --quick \
        'engine_pass/|pass/1m_rows_100k|tick/1m_rows_100k_scheduled$' >&2
    log "criterion: TUI reloads on the large database (cargo bench --bench tui_store -- --quick)…"
    cargo bench --locked --bench tui_store -- --quick >&2
    CRITERION_DIR=$BENCH_TARGET/criterion
fi
LOAD_END=$(load)

echo
echo "tock $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?') · $(date -u +%Y-%m-%dT%H:%MZ) ·" \
    "$(nproc) CPUs · load average $LOAD_START at start, $LOAD_END at the end ·" \
    "$((SECONDS / 60)) min $((SECONDS % 60)) s in all, of which $((BUILT_AT / 60)) min $((BUILT_AT % 60)) s building and seeding"
echo
"${PROBE[@]}" report --results "$RESULTS" ${CRITERION_DIR:+--criterion "$CRITERION_DIR"}
