#!/usr/bin/env bash
# Start the local AWS emulators for seatclaim's tests, or reuse ones already running:
# moto for SQS and EventBridge, and DynamoDB Local (AWS's own DynamoDB engine, started by
# dynamodb_local.sh) for DynamoDB, which the SDK reaches through AWS_ENDPOINT_URL_DYNAMODB.
#
# Usage:  eval "$(tests/emulator/start.sh)"
#
# Progress goes to stderr; stdout carries only the `export` lines a caller needs,
# so the eval form above works. Stop them with tests/emulator/stop.sh.
#
# Environment:
#   SEATCLAIM_MOTO_VENV     virtualenv for moto (default ~/.cache/seatclaim/moto-venv)
#   SEATCLAIM_MOTO_PORT     port on 127.0.0.1 (default 5000)
#   SEATCLAIM_MOTO_RUN_DIR  where the pid and log files go (default ${TMPDIR:-/tmp}/seatclaim-moto)
set -euo pipefail

MOTO_VERSION=5.2.5

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${SEATCLAIM_MOTO_VENV:-$HOME/.cache/seatclaim/moto-venv}"
HOST=127.0.0.1
PORT="${SEATCLAIM_MOTO_PORT:-5000}"
RUN_DIR="${SEATCLAIM_MOTO_RUN_DIR:-${TMPDIR:-/tmp}/seatclaim-moto}"
PID_FILE="$RUN_DIR/moto-$PORT.pid"
LOG_FILE="$RUN_DIR/moto-$PORT.log"
ENDPOINT="http://$HOST:$PORT"
START_TIMEOUT_S=30

log() { echo "start.sh: $*" >&2; }

# Exit 0 if a moto server answers on $ENDPOINT, 1 if nothing is listening,
# 2 if something answers that is not moto. Uses moto's own control API:
# GET /moto-api/config answers with moto's JSON config (HTTP 201).
probe() {
    python3 - "$ENDPOINT" <<'EOF'
import json, sys, urllib.error, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1] + "/moto-api/config", timeout=2) as r:
        body = json.loads(r.read())
    sys.exit(0 if isinstance(body, dict) and "batch" in body else 2)
except urllib.error.HTTPError:
    sys.exit(2)   # an HTTP server, but not moto
except ValueError:
    sys.exit(2)   # answered, not with moto's JSON
except Exception:
    sys.exit(1)   # refused / timed out / reset: nothing (ready) there
EOF
}

print_env() {
    cat <<EOF
export AWS_ENDPOINT_URL=$ENDPOINT
export AWS_ACCESS_KEY_ID=test
export AWS_SECRET_ACCESS_KEY=test
export AWS_REGION=us-east-1
export AWS_DEFAULT_REGION=us-east-1
EOF
}

mkdir -p "$RUN_DIR"

rc=0; probe || rc=$?
if [ "$rc" -eq 0 ]; then
    log "reusing moto already answering on $ENDPOINT"
    print_env
    bash "$HERE/dynamodb_local.sh"
    exit 0
elif [ "$rc" -eq 2 ]; then
    log "something other than moto answers on $ENDPOINT; pick another SEATCLAIM_MOTO_PORT"
    exit 1
fi

# Install moto into its own virtualenv unless the pinned version is already there.
if ! "$VENV/bin/python" -c "
import importlib.metadata as m, sys
import moto.server, flask, flask_cors
sys.exit(m.version('moto') != '$MOTO_VERSION')
" >/dev/null 2>&1; then
    log "installing moto[server]==$MOTO_VERSION into $VENV"
    t0=$SECONDS
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
    log "installed in $((SECONDS - t0)) s"
fi

# A launcher we started earlier may still be coming up: wait for it instead of
# starting a second one on the same port.
pid=""
if [ -f "$PID_FILE" ]; then
    old="$(cat "$PID_FILE" 2>/dev/null || true)"
    if [ -n "$old" ] && kill -0 "$old" 2>/dev/null; then
        log "moto (pid $old) from an earlier start is still running; waiting for it"
        pid="$old"
    else
        rm -f "$PID_FILE"
    fi
fi

if [ -z "$pid" ]; then
    log "starting moto on $ENDPOINT (log: $LOG_FILE)"
    PYTHONUNBUFFERED=1 nohup "$VENV/bin/python" "$HERE/moto_server.py" \
        --host "$HOST" --port "$PORT" </dev/null >"$LOG_FILE" 2>&1 &
    pid=$!
    echo "$pid" >"$PID_FILE"
fi

t0=$EPOCHREALTIME
deadline=$((SECONDS + START_TIMEOUT_S))
while :; do
    rc=0; probe || rc=$?
    if [ "$rc" -eq 0 ]; then
        break
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
        log "moto (pid $pid) exited before answering; last lines of $LOG_FILE:"
        tail -n 20 "$LOG_FILE" >&2 || true
        rm -f "$PID_FILE"
        exit 1
    fi
    if [ "$rc" -eq 2 ] || [ "$SECONDS" -ge "$deadline" ]; then
        log "moto (pid $pid) did not answer on $ENDPOINT within ${START_TIMEOUT_S} s; last lines of $LOG_FILE:"
        tail -n 20 "$LOG_FILE" >&2 || true
        exit 1
    fi
    sleep 0.2
done
log "moto (pid $pid) answering on $ENDPOINT after $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"

print_env
bash "$HERE/dynamodb_local.sh"
