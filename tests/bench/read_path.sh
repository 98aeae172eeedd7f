#!/usr/bin/env bash
# The read-path benchmark (docs/benchmarks.md, run 6), alone or from tests/bench/run.sh: the p99
# time from POST to decision of reservations made at a fixed rate while 1,000 readers pull the
# whole map of a 10,000-seat event as fast as they can (wrk), against the same load without them;
# the seat-map answers served and shed (503) in that storm, against the bare axum handler serving
# the same map from memory; and the seat-map rebuilds (backend reads) per second during it. The
# API runs on its defaults pinned to $SERVER_CORE, the readers and the load generator to
# $CLIENT_CORE, so the storm competes with reservations for the server's core alone. Writes
# read-*.txt/json into $OUT and prints the figures as ratios. Needs wrk, taskset and the release
# binaries (run.sh builds them).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${BENCH_OUT:-target/bench}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BIN=target/release
SERVER_CORE=${SERVER_CORE:-0}
CLIENT_CORE=${CLIENT_CORE:-1}
SERVER="taskset -c $SERVER_CORE"
CLIENT="taskset -c $CLIENT_CORE"
RATE=${BENCH_READ_RATE:-200}
STORM=${BENCH_READ_DURATION:-10s}
log() { echo "bench: $*" >&2; }
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
wait_http() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; log "$1 never answered"; return 1; }
rebuilds() { curl -s http://127.0.0.1:29093/metrics | awk '/^seatclaim_seat_map_rebuilds_total /{print $2}' | grep . || echo 0; }

rm -rf "$OUT/read"
SEATCLAIM_DATA_DIR="$OUT/read" SEATCLAIM_LISTEN=127.0.0.1:28083 SEATCLAIM_METRICS_LISTEN=127.0.0.1:29093 \
    RUST_LOG=warn $SERVER "$BIN/seatclaim-api" &
pids+=($!)
wait_http http://127.0.0.1:28083/healthz
sections=$(python3 -c 'import json; print(json.dumps([{"section": f"S{i}", "rows": 50, "seats_per_row": 20} for i in range(10)]))')
curl -s -X POST localhost:28083/v1/events -H 'content-type: application/json' \
    -d "{\"event_id\": \"map\", \"name\": \"read path\", \"max_seats_per_buyer\": 0, \"sections\": $sections}" >/dev/null

log "read path: warming up"
$CLIENT "$BIN/seatclaim-loadgen" --url http://127.0.0.1:28083 --seats 10000 --rate "$RATE" --duration 3s --quiet > /dev/null
# quiet N: the same reservations without readers, run N of three. The runs go before, between and
# after the storms, and their median is the baseline: the p99 of one run of a few thousand
# reservations swings with this machine's noise, and a ratio is only as steady as its baseline.
quiet() {
    log "read path: reservations at $RATE/s without readers ($1 of 3)"
    $CLIENT "$BIN/seatclaim-loadgen" --url http://127.0.0.1:28083 --seats 10000 --rate "$RATE" --duration "$STORM" --quiet \
        --json "$OUT/read-quiet-$1.json" > "$OUT/read-quiet-$1.txt"
}
quiet 1
MAP=http://127.0.0.1:28083/v1/events/map/seats
# storm NAME COMMAND...: the readers COMMAND for $STORM while reservations arrive at $RATE/s.
storm() {
    local name=$1; shift
    log "read path: readers of the seat map ($name), and reservations at $RATE/s"
    "$@" > "$OUT/read-readers-$name.txt" &
    local readers=$!
    $CLIENT "$BIN/seatclaim-loadgen" --url http://127.0.0.1:28083 --seats 10000 --rate "$RATE" --duration "$STORM" --quiet \
        --json "$OUT/read-storm-$name.json" > "$OUT/read-storm-$name.txt"
    wait "$readers"
}
before=$(rebuilds)
started=$(date +%s.%N)
# 1,000 connections asking as fast as they can, for the whole map.
storm real $CLIENT wrk -t2 -c1000 -d"$STORM" --latency "$MAP"
ended=$(date +%s.%N)
after=$(rebuilds)
python3 -c "import json; print(json.dumps({'rebuilds': $after - $before, 'seconds': $ended - $started}))" > "$OUT/read-rebuilds.json"
quiet 2
# The same, each with the tag of the map it has: 304s while nothing changes.
etag=$(curl -s -o /dev/null -D - "$MAP" | awk 'tolower($1) == "etag:" {print $2}' | tr -d '\r')
storm conditional $CLIENT wrk -t2 -c1000 -d"$STORM" --latency -H "If-None-Match: $etag" "$MAP"
# As 1,000 open web pages read it: each every 2 s, with If-None-Match.
storm paced $CLIENT "$BIN/seatclaim-bench" readers --url "$MAP" --readers 1000 --interval-ms 2000 --seconds "${STORM%s}"
quiet 3

log "read path: the bare handler"
$SERVER "$BIN/seatclaim-bench" bare --listen 127.0.0.1:28091 --seats 10000 &
pids+=($!)
wait_http http://127.0.0.1:28091/v1/events/map/seats
$CLIENT wrk -t2 -c1000 -d"$STORM" --latency http://127.0.0.1:28091/v1/events/map/seats > "$OUT/read-wrk-bare.txt"

python3 - "$OUT" <<'PY'
import json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
rps = lambda name: float(re.search(r"Requests/sec:\s+([\d.]+)", (out / name).read_text()).group(1))
def served(name):
    text = (out / name).read_text()
    total = int(re.search(r"(\d+) requests in ([\d.]+)s", text).group(1))
    seconds = float(re.search(r"(\d+) requests in ([\d.]+)s", text).group(2))
    shed = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    shed = int(shed.group(1)) if shed else 0
    return (total - shed) / seconds, shed / seconds
real, bare, conditional = rps("read-readers-real.txt"), rps("read-wrk-bare.txt"), rps("read-readers-conditional.txt")
real_served, real_shed = served("read-readers-real.txt")
conditional_served, conditional_shed = served("read-readers-conditional.txt")
paced_reads = json.loads((out / "read-readers-paced.txt").read_text())
rebuilt = json.loads((out / "read-rebuilds.json").read_text())
p99 = lambda name: json.loads((out / name).read_text())["latency_ms"]["p99"]
quiet = sorted(p99(f"read-quiet-{n}.json") for n in (1, 2, 3))[1]
storm, polite = p99("read-storm-real.json"), p99("read-storm-conditional.json")
paced = p99("read-storm-paced.json")
print(f"seat map, 10,000 seats, 1,000 readers: {real_served:,.0f} answers/s served and {real_shed:,.0f}/s shed (503) against the bare handler's {bare:,.0f} answers/s; with If-None-Match {conditional_served:,.0f}/s served (304s), {conditional_shed:,.0f}/s shed")
print(f"seat-map rebuilds during the storm: {rebuilt['rebuilds']:.0f} in {rebuilt['seconds']:.1f} s = {rebuilt['rebuilds'] / rebuilt['seconds']:.2f}/s (the storm's event and the load generator's; target <= 1/s per event per process)")
print(f"reservation p99 POST-to-decision without readers {quiet:.1f} ms (the median of 3 runs); with 1,000 full readers {storm:.1f} ms = {storm / quiet:.2f}x; with 1,000 conditional readers {polite:.1f} ms = {polite / quiet:.2f}x; with 1,000 paced readers ({paced_reads['requests_per_sec']:,.0f} req/s, {paced_reads['not_modified']} 304s, {paced_reads.get('shed', 0)} shed, {paced_reads['errors']} errors) {paced:.1f} ms = {paced / quiet:.2f}x (target <= 2x)")
PY
