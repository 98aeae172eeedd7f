#!/usr/bin/env bash
# Stop the moto server that tests/emulator/start.sh started (by its pid file).
# A server that start.sh merely reused (no pid file of ours) is left alone.
set -euo pipefail

PORT="${SEATCLAIM_MOTO_PORT:-5000}"
RUN_DIR="${SEATCLAIM_MOTO_RUN_DIR:-${TMPDIR:-/tmp}/seatclaim-moto}"
PID_FILE="$RUN_DIR/moto-$PORT.pid"

log() { echo "stop.sh: $*" >&2; }

if [ ! -f "$PID_FILE" ]; then
    log "no pid file $PID_FILE; nothing to stop"
    exit 0
fi
pid="$(cat "$PID_FILE")"
rm -f "$PID_FILE"

if ! kill -0 "$pid" 2>/dev/null; then
    log "moto (pid $pid) is not running"
    exit 0
fi
# Guard against a stale pid file whose pid now belongs to something else.
if [ -r "/proc/$pid/cmdline" ] && ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q moto_server.py; then
    log "pid $pid is not our moto launcher; leaving it alone"
    exit 0
fi

kill -TERM "$pid"
for _ in $(seq 1 50); do          # up to ~5 s for a clean exit
    kill -0 "$pid" 2>/dev/null || { log "stopped moto (pid $pid)"; exit 0; }
    sleep 0.1
done
log "moto (pid $pid) ignored SIGTERM; sending SIGKILL"
kill -KILL "$pid" 2>/dev/null || true
