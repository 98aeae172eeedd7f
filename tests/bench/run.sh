#!/usr/bin/env bash
# seatclaim's benchmarks (docs/benchmarks.md): each figure is a ratio against a baseline measured
# in the same run on the same machine. Writes target/bench/REPORT.md and target/bench/latency.svg.
# Needs root for apt (PostgreSQL, Redis, wrk come from the OS packages) and takes ~20 minutes.
#   0. per core, the headline: seatclaim against the synchronous Redis design with every server and
#      its database pinned to one core and the load generator to another (tests/bench/pinned.sh)
#   1. claim step: seatclaim's embedded decision (and, for reference, its whole worker path) vs PostgreSQL (conditional UPDATE, one durable
#      transaction per claim) vs Redis (Lua claim, AOF appendfsync always), uniform and hot seats
#   2. admission: POST req/s of the real endpoint vs a bare axum 202 handler (wrk), pinned, and
#      that handler making each body durable first (the durable floor)
#   3. end to end: seatclaim-loadgen, closed loop for the sustained rate, then open loop at half,
#      each in two modes: two requests per decision (202, then polls) and one (Prefer: wait)
#   4. AWS cost: requests per reservation on the emulator (tests/tests/aws/requests.rs), priced
#   5. memory: peak RSS of the API and the worker during run 3
#   6. read path: seat-map req/s under 1,000 readers vs a bare handler, rebuilds per second, and
#      the reservation p99 with and without that storm (tests/bench/read_path.sh, also alone)
#   7. end-to-end peers: the v1 subset decided synchronously in the POST by one Lua script on Redis
#      and by one SQL function on PostgreSQL (tests/bench/peers.sh), under the load of run 3
#   Run 3 also measures CPU per decision, the load generator's CPU share, authentication on
#   against off, and the API and worker as two processes against one.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=tests/bench
OUT=${BENCH_OUT:-target/bench}
INTENTS=${BENCH_INTENTS:-20000}
SEATS=${BENCH_SEATS:-2000}
HOT=10
DURATION=${BENCH_DURATION:-20s}
rm -rf "$OUT" && mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "bench: $*" >&2; }
# Every server listens below 32768, outside Linux's ephemeral range: the tens of thousands of client
# connections the runs open would otherwise sometimes hold a port a later server needs.

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v redis-server >/dev/null || need+=(redis-server)
[ -x /usr/lib/postgresql/15/bin/initdb ] || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

log "building release binaries"
cargo build --release --locked --bin seatclaim-api --bin seatclaim-worker --bin seatclaim-loadgen --bin seatclaim-bench 2>&1 | tail -1 >&2
BIN=target/release

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; [ -n "${PGDATA:-}" ] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" stop -m fast >/dev/null 2>&1 || true; }
trap cleanup EXIT
# Stops services and waits until they have exited: a service drains for up to a second, and the
# next one binds the same metrics port.
stop() { kill "$@"; wait "$@" 2>/dev/null || true; }
wait_http() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; log "$1 never answered"; return 1; }

# ---- 0. per core, pinned ---------------------------------------------------------------------
BENCH_OUT="$OUT" DURATION="$DURATION" bash "$HERE/pinned.sh"

# ---- 1. claim step ----------------------------------------------------------------------------
PGDATA="$OUT/pg"
install -d -o postgres "$PGDATA"
runuser -u postgres -- "$PGBIN/initdb" -D "$PGDATA" -A trust >/dev/null
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -o "-p 25432 -k /tmp -c fsync=on -c synchronous_commit=on" -l "$PGDATA/server.log" start >/dev/null
PSQL=(psql -h /tmp -p 25432 -U postgres -q)
redis-server --port 26379 --dir "$OUT" --appendonly yes --appendfsync always --save "" --daemonize no >"$OUT/redis.log" 2>&1 &
pids+=($!)
sleep 1
REDIS_SCRIPT=$(cat "$HERE/claim.lua")

for workload in uniform hot; do
    pool=$SEATS; [ "$workload" = hot ] && pool=$HOT
    for timed in decision worker; do
        log "claim step, $workload: seatclaim embedded, $timed"
        "$BIN/seatclaim-bench" claim --intents "$INTENTS" --seats "$SEATS" --hot "$([ "$workload" = hot ] && echo $HOT || echo 0)" \
            --timed "$timed" --data-dir "$OUT/claim-$workload-$timed" > "$OUT/claim-seatclaim-$workload-$timed.json"
    done
    log "claim step, $workload: PostgreSQL"
    "${PSQL[@]}" -c "DROP TABLE IF EXISTS seats; CREATE TABLE seats (seat_id int PRIMARY KEY, state text NOT NULL, job_id bigint);
                     INSERT INTO seats SELECT g, 'AVAILABLE', NULL FROM generate_series(1, $SEATS) g;"
    pgbench -h /tmp -p 25432 -U postgres -n -c 8 -j 2 -t $((INTENTS / 8)) -D seats="$pool" -f "$HERE/claim.sql" postgres > "$OUT/pgbench-$workload.txt" 2>&1
    log "claim step, $workload: Redis"
    redis-cli -p 26379 FLUSHALL >/dev/null
    redis-cli -p 26379 EVAL "for i = 0, tonumber(ARGV[1]) - 1 do redis.call('SET', 'seat:' .. string.format('%012d', i), 'AVAILABLE') end" 0 "$SEATS" >/dev/null
    redis-benchmark -p 26379 -c 8 -n "$INTENTS" -r "$pool" -q EVAL "$REDIS_SCRIPT" 1 "seat:__rand_int__" job > "$OUT/redis-$workload.txt" 2>&1
done
# Seats together: two seats of the section, best first, against two adjacent in one row.
for requests in section together; do
    log "claim step: two seats, $requests"
    "$BIN/seatclaim-bench" claim --intents "$INTENTS" --seats "$SEATS" --requests "$requests" \
        --timed decision --data-dir "$OUT/claim-$requests" > "$OUT/claim-seatclaim-$requests.json"
done

# ---- 2. admission -----------------------------------------------------------------------------
log "admission: the real endpoint"
# Pinned, as the headline: the server on one core, wrk on the other.
SEATCLAIM_DATA_DIR="$OUT/admission" SEATCLAIM_LISTEN=127.0.0.1:28080 SEATCLAIM_EMBEDDED_WORKER=false RUST_LOG=warn taskset -c 0 "$BIN/seatclaim-api" &
pids+=($!)
wait_http http://127.0.0.1:28080/healthz
curl -s -X POST localhost:28080/v1/events -H 'content-type: application/json' \
    -d '{"event_id": "adm", "name": "admission", "max_seats_per_buyer": 0, "sections": [{"section": "S0", "rows": 50, "seats_per_row": 20}]}' >/dev/null
taskset -c 1 wrk -t1 -c64 -d10s -s "$HERE/post.lua" http://127.0.0.1:28080/v1/events/adm/reservations > "$OUT/wrk-real.txt"
log "admission: the bare handler"
taskset -c 0 "$BIN/seatclaim-bench" bare --listen 127.0.0.1:28090 &
pids+=($!)
wait_http http://127.0.0.1:28090/v1/events/adm/seats
taskset -c 1 wrk -t1 -c64 -d10s -s "$HERE/post.lua" http://127.0.0.1:28090/v1/events/adm/reservations > "$OUT/wrk-bare.txt"
stop "${pids[-1]}" "${pids[-2]}"
log "admission: the bare handler, each body synced to a log before the 202 (the durable floor)"
taskset -c 0 "$BIN/seatclaim-bench" bare --listen 127.0.0.1:28090 --durable "$OUT/admission-durable.log" &
pids+=($!)
wait_http http://127.0.0.1:28090/v1/events/adm/seats
taskset -c 1 wrk -t1 -c64 -d10s -s "$HERE/post.lua" http://127.0.0.1:28090/v1/events/adm/reservations > "$OUT/wrk-durable.txt"
stop "${pids[-1]}"
rm -f "$OUT/admission-durable.log"

# ---- 3 and 5. end to end, CPU and memory ---------------------------------------------------------
# CPU: user + system ticks of the service processes from /proc (over `getconf CLK_TCK`), read just
# before and after a run; the load generator's own CPU from its subshell's `times`.
getconf CLK_TCK > "$OUT/clk-tck"
ticks() { local sum=0 p; for p in "$@"; do sum=$((sum + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$sum"; }
# loadgen NAME PID... -- ARGS: runs the load generator with ARGS, writing NAME.json and NAME.txt,
# the service processes' CPU ticks during the run to NAME.ticks and its own CPU to NAME.times.
loadgen() {
    local name=$1; shift; local served=()
    while [ "$1" != "--" ]; do served+=("$1"); shift; done; shift
    local before; before=$(ticks "${served[@]}")
    ( "$BIN/seatclaim-loadgen" --seats 10000 --duration "$DURATION" --quiet --json "$OUT/$name.json" "$@" > "$OUT/$name.txt"; times > "$OUT/$name.times" )
    echo $(( $(ticks "${served[@]}") - before )) > "$OUT/$name.ticks"
}
# seatclaim runs with its defaults (no tuning variable beyond the address and the data folder).
# Two modes: two requests per decision (the POST's 202, then long polls) and one
# (`Prefer: wait`, the decision in the POST's own answer); the peers are driven the same ways.
half_of() { python3 -c "import json; print(max(1, round(json.load(open('$OUT/$1.json'))['decided_per_sec'] / 2)))"; }
log "end to end: the embedded deployment (API with its in-process worker)"
SEATCLAIM_DATA_DIR="$OUT/e2e" SEATCLAIM_LISTEN=127.0.0.1:28081 RUST_LOG=warn "$BIN/seatclaim-api" &
api=$!; pids+=($api)
wait_http http://127.0.0.1:28081/healthz
loadgen e2e-closed "$api" -- --url http://127.0.0.1:28081 --concurrency 256
loadgen e2e-closed-prefer "$api" -- --url http://127.0.0.1:28081 --concurrency 256 --prefer-wait 5
half=$(half_of e2e-closed)
log "end to end: open loop at $half/s"
loadgen e2e-half "$api" -- --url http://127.0.0.1:28081 --rate "$half" --plot "$OUT/latency.svg"
half_prefer=$(half_of e2e-closed-prefer)
log "end to end, one request per decision: open loop at $half_prefer/s"
loadgen e2e-half-prefer "$api" -- --url http://127.0.0.1:28081 --rate "$half_prefer" --prefer-wait 5 --plot "$OUT/latency-prefer.svg"
grep VmHWM /proc/$api/status | awk '{print $2}' > "$OUT/rss-api-kb"
stop "$api"
log "end to end: authentication on (an HS256 token per buyer, validated on every request)"
bench_secret=bench-secret-of-at-least-32-bytes   # the API refuses a shorter one
SEATCLAIM_DATA_DIR="$OUT/e2e-auth" SEATCLAIM_LISTEN=127.0.0.1:28084 SEATCLAIM_AUTH_HS256_SECRET=$bench_secret RUST_LOG=warn "$BIN/seatclaim-api" &
auth_api=$!; pids+=($auth_api)
wait_http http://127.0.0.1:28084/healthz
loadgen e2e-auth "$auth_api" -- --url http://127.0.0.1:28084 --concurrency 256 --hs256-secret "$bench_secret"
stop "$auth_api"
log "end to end: API and worker as two processes on one file, at the same half rate"
SEATCLAIM_DATA_DIR="$OUT/e2e-split" SEATCLAIM_LISTEN=127.0.0.1:28082 SEATCLAIM_EMBEDDED_WORKER=false RUST_LOG=warn "$BIN/seatclaim-api" &
split_api=$!; pids+=($split_api)
wait_http http://127.0.0.1:28082/healthz
SEATCLAIM_DATA_DIR="$OUT/e2e-split" SEATCLAIM_METRICS_LISTEN=127.0.0.1:29090 RUST_LOG=warn "$BIN/seatclaim-worker" &
worker=$!; pids+=($worker)
loadgen e2e-split "$split_api" "$worker" -- --url http://127.0.0.1:28082 --rate "$half"
grep VmHWM /proc/$split_api/status | awk '{print $2}' > "$OUT/rss-split-api-kb"
grep VmHWM /proc/$worker/status | awk '{print $2}' > "$OUT/rss-worker-kb"
stop "$split_api" "$worker"

# ---- 7. end-to-end peers: the same load generator against synchronous Redis and PostgreSQL designs
BENCH_OUT="$OUT" DURATION="$DURATION" bash "$HERE/peers.sh"

# ---- 6. the read path ------------------------------------------------------------------------
BENCH_OUT="$OUT" bash "$HERE/read_path.sh"

# ---- 4. AWS cost -------------------------------------------------------------------------------
log "AWS requests per reservation on the emulator"
eval "$(bash tests/emulator/start.sh)"
cargo test --locked -p seatclaim-e2e --test e2e -- aws::requests:: --nocapture > "$OUT/aws-requests.txt" 2>&1

python3 "$HERE/report.py" "$OUT"
log "report: $OUT/REPORT.md"
