#!/usr/bin/env bash
# Where a decision's CPU goes (docs/benchmarks.md, "Profile"): the API on its defaults pinned to
# $SERVER_CORE, the load generator in the one-request closed loop (256 buyers, Prefer: wait) on
# $CLIENT_CORE, and `perf record --call-graph dwarf` on the API for $SECONDS_PROFILED seconds in
# the middle of the run. The release binary has no frame pointers; perf unwinds it from its
# .eh_frame. Writes $OUT/profile.data and prints the breakdown (profile_breakdown.py): the
# writer thread against the async workers, and inside each, the parts a change of the decision
# path moves. PROFILE_SEATS (default 10,000, sold out in the first second, after which nearly
# every decision is a refusal) set to 150000 profiles the sell-out instead: the 256 buyers cannot
# sell that many seats in the run, so nearly every decision holds a seat. PROFILE_RATE=R profiles
# an open loop of R reservations per second instead of the closed loop, as the half-rate runs
# load the server. Needs perf (Debian's linux-perf) and taskset.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${BENCH_OUT:-target/bench}
SERVER_CORE=${SERVER_CORE:-0}
CLIENT_CORE=${CLIENT_CORE:-1}
SECONDS_PROFILED=${SECONDS_PROFILED:-4}
SEATS=${PROFILE_SEATS:-10000}
if [ -n "${PROFILE_RATE:-}" ]; then LOAD=(--rate "$PROFILE_RATE"); else LOAD=(--concurrency 256); fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "profile: $*" >&2; }
command -v perf >/dev/null || { log "perf is needed (apt-get install linux-perf)"; exit 1; }
cargo build --release --locked --bin seatclaim-api --bin seatclaim-loadgen 2>&1 | tail -1 >&2
BIN=target/release

rm -rf "$OUT/profile-data"
SEATCLAIM_DATA_DIR="$OUT/profile-data" SEATCLAIM_LISTEN=127.0.0.1:28185 SEATCLAIM_METRICS_LISTEN=127.0.0.1:29095 \
    RUST_LOG=warn taskset -c "$SERVER_CORE" "$BIN/seatclaim-api" &
api=$!
trap 'kill $api 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:28185/healthz && break; sleep 0.1; done
taskset -c "$CLIENT_CORE" "$BIN/seatclaim-loadgen" --url http://127.0.0.1:28185 --seats "$SEATS" \
    --duration $((SECONDS_PROFILED + 8))s "${LOAD[@]}" --prefer-wait 5 --quiet \
    --json "$OUT/profile-load.json" > /dev/null &
load=$!
# The first seconds create the event and warm the caches; the profile is of the steady state.
for _ in $(seq 40); do
    [ "$(curl -s http://127.0.0.1:29095/metrics | awk '/^seatclaim_intents_admitted_total/ {s += $NF} END {print s + 0}')" -gt 20000 ] && break
    sleep 0.1
done
perf record -F 499 --call-graph dwarf,16384 -p "$api" -o "$OUT/profile.data" -- sleep "$SECONDS_PROFILED" 2> /dev/null
wait "$load"
perf script -i "$OUT/profile.data" -F comm,ip,sym 2> /dev/null > "$OUT/profile.txt"
python3 "$(dirname "$0")/profile_breakdown.py" "$OUT/profile.txt" | tee "$OUT/profile-breakdown.txt"
