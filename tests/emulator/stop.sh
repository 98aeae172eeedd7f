#!/usr/bin/env bash
# Stop the moto server and DynamoDB Local that tests/emulator/start.sh started (by their pid
# files). A server that start.sh merely reused (no pid file of ours) is left alone.
set -euo pipefail

RUN_DIR="${SEATCLAIM_MOTO_RUN_DIR:-${TMPDIR:-/tmp}/seatclaim-moto}"

log() { echo "stop.sh: $*" >&2; }

# stop NAME PID_FILE COMMAND_MARK: ends the process of the pid file if its command line still
# names COMMAND_MARK (a stale pid file's pid may belong to something else by now).
stop() {
    local name=$1 pid_file=$2 mark=$3 pid
    if [ ! -f "$pid_file" ]; then
        log "no pid file $pid_file; no $name to stop"
        return 0
    fi
    pid="$(cat "$pid_file")"
    rm -f "$pid_file"
    if ! kill -0 "$pid" 2>/dev/null; then
        log "$name (pid $pid) is not running"
        return 0
    fi
    if [ -r "/proc/$pid/cmdline" ] && ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$mark"; then
        log "pid $pid is not our $name; leaving it alone"
        return 0
    fi
    kill -TERM "$pid"
    for _ in $(seq 1 50); do          # up to ~5 s for a clean exit
        kill -0 "$pid" 2>/dev/null || { log "stopped $name (pid $pid)"; return 0; }
        sleep 0.1
    done
    log "$name (pid $pid) ignored SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
}

stop moto "$RUN_DIR/moto-${SEATCLAIM_MOTO_PORT:-5000}.pid" moto_server.py
stop "DynamoDB Local" "$RUN_DIR/dynamodb-${SEATCLAIM_DYNAMODB_PORT:-8000}.pid" DynamoDBLocal.jar
