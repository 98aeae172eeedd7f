#!/usr/bin/env bash
# Benchmark peers (tests/bench/peers/README.md): seatclaim's contract decided synchronously in
# Redis (Lua, AOF appendfsync always) and in PostgreSQL (plpgsql, fsync and synchronous_commit on),
# each under the same seatclaim-loadgen runs as seatclaim's end-to-end bench: a closed loop of 256
# buyers, then an open loop at half its decided rate. Writes to $BENCH_OUT:
#   peer-{redis,postgres}-{closed,half}[-prefer].json   the load generator's reports (-prefer:
#                                              one request per decision, --prefer-wait 5)
#   peer-{redis,postgres}-cpu.txt              CPU seconds of the peer and its database server(s)
#                                              during the closed loop
#   peer-{redis,postgres}-closed[-prefer].times the load generator's own CPU in the closed loop
# Run from anywhere as BENCH_OUT=<dir> DURATION=<dur> bash tests/bench/peers.sh (needs root for apt
# and for running PostgreSQL as user postgres). Fails if a run's invariants do not hold.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${BENCH_OUT:?set BENCH_OUT to the output directory}
DURATION=${DURATION:-20s}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "peers: $*" >&2; }

need=()
command -v redis-server >/dev/null || need+=(redis-server)
ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1 || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

log "building the peers"
cargo build --release --locked --manifest-path tests/bench/peers/Cargo.toml --target-dir target 2>&1 | tail -1 >&2
[ -x target/release/seatclaim-loadgen ] || cargo build --release --locked --bin seatclaim-loadgen 2>&1 | tail -1 >&2
BIN=target/release

pids=()
PGDATA=""
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ -n "$PGDATA" ]; then
        runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" stop -m fast >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT
wait_http() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; log "$1 never answered"; return 1; }

# CPU ticks (utime + stime, and those of reaped children) of the given processes.
ticks() {
    local sum=0 pid t
    for pid in "$@"; do
        # Fields 14-17 of /proc/PID/stat; the command name (field 2) may hold spaces.
        t=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $12 + $13 + $14 + $15}') || t=0
        sum=$((sum + ${t:-0}))
    done
    echo "$sum"
}
# The PostgreSQL cluster's processes: the postmaster and its children.
pg_pids() { local pm; pm=$(head -1 "$PGDATA/postmaster.pid"); echo "$pm" $(pgrep -P "$pm"); }

# bench NAME PORT CPU_PIDS_FUNCTION [SUFFIX LOADGEN_ARGS...]: the closed loop (with CPU), then
# the open loop at half, writing peer-NAME-{closed,half,cpu}SUFFIX.*; the arguments after SUFFIX
# go to every load generator run (e.g. --prefer-wait 5 for the one-request mode).
bench() {
    local name=$1 port=$2 pids_of=$3 suffix=${4:-} before after half rc
    local extra=("${@:5}")
    before=$(ticks $($pids_of))
    rc=0
    # The load generator's own CPU (its subshell's `times`), as run.sh records it for seatclaim.
    ( "$BIN/seatclaim-loadgen" --url "http://127.0.0.1:$port" --seats 10000 --concurrency 256 "${extra[@]}" \
        --duration "$DURATION" --quiet --json "$OUT/peer-$name-closed$suffix.json" > "$OUT/peer-$name-closed$suffix.txt"
      status=$?; times > "$OUT/peer-$name-closed$suffix.times"; exit $status ) || rc=$?
    after=$(ticks $($pids_of))
    python3 -c "import sys; print(round(($after - $before) / int(sys.argv[1]), 2))" "$(getconf CLK_TCK)" > "$OUT/peer-$name-cpu$suffix.txt"
    check "$OUT/peer-$name-closed$suffix.json" "$rc"
    half=$(python3 -c "import json; print(max(1, round(json.load(open('$OUT/peer-$name-closed$suffix.json'))['decided_per_sec'] / 2)))")
    log "$name$suffix: open loop at $half/s"
    rc=0
    "$BIN/seatclaim-loadgen" --url "http://127.0.0.1:$port" --seats 10000 --rate "$half" "${extra[@]}" \
        --duration "$DURATION" --quiet --json "$OUT/peer-$name-half$suffix.json" > "$OUT/peer-$name-half$suffix.txt" || rc=$?
    check "$OUT/peer-$name-half$suffix.json" "$rc"
}
check() {
    [ -f "$1" ] || { log "$1 missing (load generator exit $2)"; exit 1; }
    python3 - "$1" <<'EOF' >&2
import json, sys
r = json.load(open(sys.argv[1]))
print(f"peers: {sys.argv[1]}: {r['decided_per_sec']:.0f} decided/s, p99 {r['latency_ms']['p99']} ms, "
      f"http errors {r.get('http_errors')}, invariants {'ok' if r['invariants_ok'] else 'BROKEN'}")
sys.exit(0 if r["invariants_ok"] else 1)
EOF
}

# ---- Redis ----------------------------------------------------------------------------------
rm -rf "$OUT/peer-redis-data" && mkdir -p "$OUT/peer-redis-data"
redis-server --port 26380 --appendonly yes --appendfsync always --save "" \
    --dir "$OUT/peer-redis-data" --daemonize no > "$OUT/peer-redis-server.log" 2>&1 &
redis_pid=$!; pids+=("$redis_pid")
for _ in $(seq 100); do redis-cli -p 26380 ping >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN/peer-redis" --listen 127.0.0.1:28101 --redis redis://127.0.0.1:26380/ > "$OUT/peer-redis.log" 2>&1 &
peer=$!; pids+=("$peer")
wait_http http://127.0.0.1:28101/healthz
redis_cpu_pids() { echo "$peer $redis_pid"; }
log "redis: closed loop"
bench redis 28101 redis_cpu_pids
log "redis: closed loop, one request per decision"
bench redis 28101 redis_cpu_pids -prefer --prefer-wait 5
kill "$peer" "$redis_pid"; wait "$peer" "$redis_pid" 2>/dev/null || true
pids=()

# ---- PostgreSQL -----------------------------------------------------------------------------
PGDATA="$OUT/peer-pg"
rm -rf "$PGDATA" && install -d -o postgres "$PGDATA"
runuser -u postgres -- "$PGBIN/initdb" -D "$PGDATA" -A trust >/dev/null
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -w -l "$PGDATA/server.log" -o \
    "-p 25433 -k /tmp -c listen_addresses='' -c fsync=on -c synchronous_commit=on -c max_connections=64 -c shared_buffers=256MB" \
    start >/dev/null
"$BIN/peer-postgres" --listen 127.0.0.1:28102 --postgres "host=/tmp port=25433 user=postgres dbname=postgres" --pool 16 \
    > "$OUT/peer-postgres.log" 2>&1 &
peer=$!; pids+=("$peer")
wait_http http://127.0.0.1:28102/healthz
postgres_cpu_pids() { echo "$peer $(pg_pids)"; }
log "postgres: closed loop"
bench postgres 28102 postgres_cpu_pids
log "postgres: closed loop, one request per decision"
bench postgres 28102 postgres_cpu_pids -prefer --prefer-wait 5
log "done: $OUT/peer-*"
