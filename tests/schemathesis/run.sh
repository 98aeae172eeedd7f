#!/usr/bin/env bash
# Schemathesis against the running API, from the document it serves (GET /openapi.json): every
# generated request (valid and invalid, by the document's schemas, links followed statefully)
# must get no 5xx, and every response must conform to the document (its status documented for
# the operation, its content type, headers and body schema). For CI (tests/run.sh) and for
# anyone changing a route:
#  1. installs a pinned schemathesis into a virtualenv (once; later runs reuse it);
#  2. builds seatclaim-api (and, for AWS, seatclaim-worker and seatclaimctl) unless told where
#     they are;
#  3. starts the API on a free port with fresh storage and authentication off (on AWS against
#     the emulator, with a fresh resource prefix created by `seatclaimctl init`, and the worker
#     beside it), creates two events with curl so that requests find real data;
#  4. runs schemathesis with a fixed seed and a bounded number of examples per operation, and
#     exits non-zero on any failure. The API (and worker) it started are stopped on exit.
#
# Environment:
#   SEATCLAIM_TEST_BACKEND          embedded (default) or aws (starts the emulator if needed)
#   SEATCLAIM_SCHEMATHESIS_VENV     virtualenv (default ~/.cache/seatclaim/schemathesis-venv)
#   SEATCLAIM_SCHEMATHESIS_SEED     the seed (default 13)
#   SEATCLAIM_SCHEMATHESIS_EXAMPLES examples per operation (default 200)
#   SEATCLAIM_SCHEMATHESIS_CHECKS   the checks (default: no 5xx, and the responses conform)
#   SEATCLAIM_BIN_DIR               the folder of already built binaries, absolute or from the
#                                   repository root (default: build them)
#   SEATCLAIM_CARGO_LOCK            a file to hold with flock(1) around the build (e.g.
#                                   /tmp/cargo.lock on a machine that serialises its builds)
# Extra arguments go to `schemathesis run` (e.g. --include-path /v1/events).
set -euo pipefail
cd "$(dirname "$0")/../.."

SCHEMATHESIS_VERSION=4.32.5
SEED="${SEATCLAIM_SCHEMATHESIS_SEED:-13}"
EXAMPLES="${SEATCLAIM_SCHEMATHESIS_EXAMPLES:-200}"
BACKEND="${SEATCLAIM_TEST_BACKEND:-embedded}"
VENV="${SEATCLAIM_SCHEMATHESIS_VENV:-$HOME/.cache/seatclaim/schemathesis-venv}"
CHECKS="${SEATCLAIM_SCHEMATHESIS_CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,allow_header_conformance}"

log() { echo "schemathesis/run.sh: $*" >&2; }

case "$BACKEND" in
embedded | aws) ;;
*) log "SEATCLAIM_TEST_BACKEND must be embedded or aws, not $BACKEND"; exit 2 ;;
esac

if ! "$VENV/bin/python" - "$SCHEMATHESIS_VERSION" >/dev/null 2>&1 <<'EOF'; then
import importlib.metadata as m, sys
sys.exit(m.version("schemathesis") != sys.argv[1])
EOF
    log "installing schemathesis==$SCHEMATHESIS_VERSION into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

BIN_DIR="${SEATCLAIM_BIN_DIR:-}"
if [ -z "$BIN_DIR" ]; then
    lock=()
    if [ -n "${SEATCLAIM_CARGO_LOCK:-}" ]; then lock=(flock "$SEATCLAIM_CARGO_LOCK"); fi
    # The build the end-to-end suites make (tests/src/process.rs), so neither rebuilds the other's.
    "${lock[@]}" cargo build --locked --quiet --workspace --bins
    BIN_DIR="${CARGO_TARGET_DIR:-target}/debug"
fi

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/seatclaim-schemathesis.XXXXXX")"
PIDS=()
stop() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$RUN_DIR"
}
trap stop EXIT

PORT="$(free_port)"
BASE="http://127.0.0.1:$PORT"
export SEATCLAIM_LISTEN="127.0.0.1:$PORT"
export SEATCLAIM_DATA_DIR="$RUN_DIR/data"
export SEATCLAIM_AUTH=off
# Generated requests share a few buyer ids: a bucket this deep never empties in one run.
export SEATCLAIM_BUYER_RATE=100000 SEATCLAIM_BUYER_BURST=100000
# Presale codes are on, as a deployment that uses them runs (on AWS they need a key).
export SEATCLAIM_ACCESS_CODE_KEY="schemathesis-access-code-key-0123456789"
export SEATCLAIM_LOG_FORMAT=text RUST_LOG="${RUST_LOG:-warn}"
unset SEATCLAIM_AUTH_JWKS_URL SEATCLAIM_AUTH_HS256_SECRET

if [ "$BACKEND" = aws ]; then
    emulator_env="$(bash tests/emulator/start.sh)"
    eval "$emulator_env"
    export SEATCLAIM_BACKEND=aws
    SEATCLAIM_AWS_PREFIX="st$(python3 -c 'import uuid; print(uuid.uuid4().hex[:12])')"
    export SEATCLAIM_AWS_PREFIX
    "$BIN_DIR/seatclaimctl" init >"$RUN_DIR/init.log"
    # On AWS the worker is its own process; without it jobs would stay PENDING and long polls wait.
    SEATCLAIM_METRICS_LISTEN="127.0.0.1:$(free_port)" "$BIN_DIR/seatclaim-worker" \
        >"$RUN_DIR/worker.log" 2>&1 &
    PIDS+=("$!")
fi

SEATCLAIM_METRICS_LISTEN="127.0.0.1:$(free_port)" "$BIN_DIR/seatclaim-api" >"$RUN_DIR/api.log" 2>&1 &
PIDS+=("$!")
ready=no
for _ in $(seq 150); do
    if curl -fsS "$BASE/readyz" >/dev/null 2>&1; then ready=yes; break; fi
    if ! kill -0 "${PIDS[-1]}" 2>/dev/null; then break; fi
    sleep 0.2
done
if [ "$ready" != yes ]; then
    log "seatclaim-api did not become ready on $BASE; its log:"; cat "$RUN_DIR/api.log" >&2
    exit 1
fi

# Real data for the generated requests: the document's examples name event e1 and section A.
post() {
    curl -fsS -o /dev/null -X POST "$BASE$1" -H 'Content-Type: application/json' "${@:3}" -d "$2"
}
post /v1/events '{"event_id": "e1", "name": "Show", "hold_seconds": 300,
    "sections": [{"section": "A", "rows": 2, "seats_per_row": 10}, {"section": "B", "rows": 1, "seats_per_row": 5}]}'
post /v1/events '{"event_id": "e2", "name": "Listed", "max_seats_per_buyer": 2,
    "seats": [{"seat_id": "X-1", "section": "X"}, {"seat_id": "X-2", "section": "X"}]}'
post /v1/events/e1/reservations '{"buyer_id": "b1", "seat_ids": ["A-1-1", "A-1-2"]}' -H 'Idempotency-Key: seed-1'

log "schemathesis $SCHEMATHESIS_VERSION on $BASE/openapi.json ($BACKEND backend, seed $SEED, $EXAMPLES examples per operation)"
started=$SECONDS
status=0
# From the run's folder: schemathesis keeps a failure cache (.schemathesis/) in its working folder.
(cd "$RUN_DIR" && "$VENV/bin/schemathesis" run "$BASE/openapi.json" \
    --checks "$CHECKS" \
    --seed "$SEED" \
    --max-examples "$EXAMPLES" \
    --generation-database none \
    --request-timeout 25 \
    --workers 1 \
    --no-color \
    "$@") || status=$?
log "finished in $((SECONDS - started)) s with status $status"
if [ "$status" -ne 0 ]; then
    log "last lines of the API's log:"; tail -n 40 "$RUN_DIR/api.log" >&2
fi
exit "$status"
