#!/usr/bin/env bash
# Decisions per server core (docs/benchmarks.md, "Per core"): every server and its database pinned
# to one core (`taskset -c $SERVER_CORE`), the load generator to another (`taskset -c
# $CLIENT_CORE`), so that a server spending less CPU per decision shows it as rate instead of
# handing the saved CPU to the load generator. seatclaim runs on its defaults (the API with its
# in-process worker); the peer is the synchronous Redis design (tests/bench/peers, one Lua script,
# AOF appendfsync always). Both modes: two requests per decision (`two`: the 202, then long polls)
# and one (`one`: Prefer: wait). Each mode runs $RUNS times per system, the systems alternating,
# then an open loop at half of each system's median rate. Last, the floor: a bare axum server that
# stores and decides nothing (`seatclaim-bench bare`), pinned the same way, once in each mode: what
# the HTTP exchange alone costs a server core, and the most decisions per second this load
# generator can ask of any server from its one core. Then the durable floor: the same server
# answering a reservation only once its body is synced to a log (`--durable`, group commit):
# what any server that makes a request durable before answering pays at least. Writes to $BENCH_OUT:
#   pinned-{seatclaim,redis}-{two,one}-N.json    the closed loop's report, run N
#   pinned-{seatclaim,redis}-{two,one}-N.ticks   CPU ticks of the server and its database in it
#   pinned-{seatclaim,redis}-{two,one}-N.decider-ticks   those of the thread deciding every write
#   pinned-{seatclaim,redis}-one-half.json       the open loop at half its median rate
#   pinned-bare-{two,one}.{json,ticks}           the floor's closed loop and its CPU ticks
#   pinned-bare-one-half.json                    the floor's open loop at seatclaim's half rate
#   pinned-durable-{two,one,one-half}.*          the same of the durable floor
#   pinned.env                                   the cores and the number of runs
# Run as BENCH_OUT=<dir> bash tests/bench/pinned.sh (run.sh does, as its headline). Fails if a
# run's invariants do not hold.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${BENCH_OUT:?set BENCH_OUT to the output directory}
DURATION=${DURATION:-20s}
RUNS=${PINNED_RUNS:-3}
SERVER_CORE=${SERVER_CORE:-0}
CLIENT_CORE=${CLIENT_CORE:-1}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "pinned: $*" >&2; }
command -v taskset >/dev/null || { log "taskset (util-linux) is needed"; exit 1; }
command -v redis-server >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }
[ "$(nproc)" -ge 2 ] || { log "needs two cores, one for the servers and one for the load generator"; exit 1; }

cargo build --release --locked --bin seatclaim-api --bin seatclaim-loadgen --bin seatclaim-bench 2>&1 | tail -1 >&2
cargo build --release --locked --manifest-path tests/bench/peers/Cargo.toml --target-dir target 2>&1 | tail -1 >&2
BIN=target/release
echo "SERVER_CORE=$SERVER_CORE CLIENT_CORE=$CLIENT_CORE RUNS=$RUNS DURATION=$DURATION" > "$OUT/pinned.env"

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
wait_http() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; log "$1 never answered"; return 1; }
# CPU ticks (utime + stime, and those of reaped children) of the given processes.
ticks() {
    local sum=0 pid t
    for pid in "$@"; do
        t=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $12 + $13 + $14 + $15}') || t=0
        sum=$((sum + ${t:-0}))
    done
    echo "$sum"
}
# taskset execs its command: the pid `$!` gives is the server's own, whose ticks are counted.
# CPU ticks of the one thread of PID named COMM: the thread that decides every write, seatclaim's
# SQLite writer or Redis's main thread, whose core is where each system stops scaling.
thread_ticks() {
    local pid=$1 comm=$2 task
    for task in /proc/"$pid"/task/*; do
        if [ "$(cat "$task/comm" 2>/dev/null)" = "$comm" ]; then
            sed 's/.*) //' "$task/stat" | awk '{print $12 + $13}'
            return
        fi
    done
    echo 0
}

rm -rf "$OUT/pinned-e2e" "$OUT/pinned-redis-data" && mkdir -p "$OUT/pinned-redis-data"
SEATCLAIM_DATA_DIR="$OUT/pinned-e2e" SEATCLAIM_LISTEN=127.0.0.1:28181 RUST_LOG=warn taskset -c "$SERVER_CORE" "$BIN/seatclaim-api" &
api=$!; pids+=("$api")
taskset -c "$SERVER_CORE" redis-server --port 26381 --appendonly yes --appendfsync always --save "" \
    --dir "$OUT/pinned-redis-data" --daemonize no > "$OUT/pinned-redis-server.log" 2>&1 &
redis_pid=$!; pids+=("$redis_pid")
for _ in $(seq 100); do redis-cli -p 26381 ping >/dev/null 2>&1 && break; sleep 0.1; done
taskset -c "$SERVER_CORE" "$BIN/peer-redis" --listen 127.0.0.1:28191 --redis redis://127.0.0.1:26381/ > "$OUT/pinned-peer-redis.log" 2>&1 &
peer=$!; pids+=("$peer")
wait_http http://127.0.0.1:28181/healthz
wait_http http://127.0.0.1:28191/healthz
for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { log "a server exited as it started (is its port taken?)"; exit 1; }
done
declare -A URL=([seatclaim]=http://127.0.0.1:28181 [redis]=http://127.0.0.1:28191 [bare]=http://127.0.0.1:28193
                [durable]=http://127.0.0.1:28193)
declare -A CPU=([seatclaim]="$api" [redis]="$peer $redis_pid")
# The bare server has no thread that decides: its decider ticks are 0.
declare -A DECIDER=([seatclaim]="$api seatclaim-write" [redis]="$redis_pid redis-server" [bare]="$$ none"
                    [durable]="$$ none")
declare -A MODE=([two]="" [one]="--prefer-wait 5")

# run SYSTEM NAME LOADGEN_ARGS...: the load generator on its own core, the server's ticks around it.
run() {
    local system=$1 name=$2; shift 2
    local before decider; before=$(ticks ${CPU[$system]}); decider=$(thread_ticks ${DECIDER[$system]})
    taskset -c "$CLIENT_CORE" "$BIN/seatclaim-loadgen" --url "${URL[$system]}" --seats 10000 \
        --duration "$DURATION" --quiet --json "$OUT/$name.json" "$@" > "$OUT/$name.txt"
    echo $(( $(ticks ${CPU[$system]}) - before )) > "$OUT/$name.ticks"
    echo $(( $(thread_ticks ${DECIDER[$system]}) - decider )) > "$OUT/$name.decider-ticks"
    python3 - "$OUT/$name.json" <<'EOF' >&2
import json, sys
r = json.load(open(sys.argv[1]))
print(f"pinned: {sys.argv[1]}: {r['decided_per_sec']:.0f} decided/s, p99 {r['latency_ms']['p99']} ms, invariants {'ok' if r['invariants_ok'] else 'BROKEN'}")
sys.exit(0 if r["invariants_ok"] else 1)
EOF
}
median_half() {
    python3 -c "import json, statistics, sys; print(max(1, round(statistics.median(json.load(open(f))['decided_per_sec'] for f in sys.argv[1:]) / 2)))" "$@"
}

for mode in two one; do
    for n in $(seq "$RUNS"); do
        for system in seatclaim redis; do
            log "$system, $mode request(s) per decision, run $n of $RUNS"
            # shellcheck disable=SC2086
            run "$system" "pinned-$system-$mode-$n" --concurrency 256 ${MODE[$mode]}
        done
    done
done
for system in seatclaim redis; do
    half=$(median_half "$OUT"/pinned-$system-one-[0-9]*.json)
    log "$system, one request per decision: open loop at $half/s"
    run "$system" "pinned-$system-one-half" --rate "$half" --prefer-wait 5
done
# The floors are loaded at seatclaim's half rate too: the tail any server shows at that rate here.
half=$(median_half "$OUT"/pinned-seatclaim-one-[0-9]*.json)
kill "$api" "$peer" "$redis_pid"
# floor KIND WHAT BARE_ARGS...: the bare server (with BARE_ARGS) pinned, as system KIND, in both
# closed-loop modes and in the open loop at seatclaim's half rate; stopped after.
floor() {
    local kind=$1 what=$2 server mode; shift 2
    taskset -c "$SERVER_CORE" "$BIN/seatclaim-bench" bare --listen 127.0.0.1:28193 "$@" &
    server=$!; pids+=("$server"); CPU[$kind]=$server
    wait_http http://127.0.0.1:28193/v1/events/any/seats
    for mode in two one; do
        log "$what, $mode request(s) per decision"
        # shellcheck disable=SC2086
        run "$kind" "pinned-$kind-$mode" --concurrency 256 ${MODE[$mode]}
    done
    log "$what, one request per decision: open loop at seatclaim's $half/s"
    run "$kind" "pinned-$kind-one-half" --rate "$half" --prefer-wait 5
    kill "$server"; wait "$server" 2>/dev/null || true
}
floor bare "the floor (a bare axum server)"
floor durable "the durable floor (the bare server, each reservation synced to a log first)" \
    --durable "$OUT/pinned-durable.log"
rm -f "$OUT/pinned-durable.log"
log "done: $OUT/pinned-*"
