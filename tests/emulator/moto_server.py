#!/usr/bin/env python3
"""Local AWS emulator for seatclaim's tests: moto's server, with DynamoDB serialised.

This is moto's own ``moto_server`` (moto/server.py, moto 5.x) with one change:
every DynamoDB request runs under a single global lock.

Why: moto implements DynamoDB conditional writes (PutItem/UpdateItem/DeleteItem
with a ConditionExpression, TransactWriteItems) as check-then-write with no lock.
On a threaded server two concurrent conditional writes to the same item can both
pass the check and both "win". Real DynamoDB applies each conditional write to an
item atomically and runs transactions serialisably, so tests asserting "exactly
one winner" would fail spuriously (or pass by luck) against a bare threaded moto.
Serialising DynamoDB restores those semantics. Everything else (SQS long polls,
EventBridge, ...) still runs concurrently: an SQS ReceiveMessage with
WaitTimeSeconds=20 must not block other requests.

Usage: python moto_server.py [--host 127.0.0.1] [--port 5000]
Prints "moto listening on http://HOST:PORT" once the socket is bound and
accepting connections.
"""

import argparse
import os
import signal
import sys
import threading

from werkzeug.serving import make_server

from moto.server import DomainDispatcherApplication, create_backend_app

# MotoRequestHandler preserves underscored header names (S3 metadata); it is the
# handler moto's own server uses. Imported from its defining module.
from moto.moto_server.werkzeug_app import MotoRequestHandler


class QuietRequestHandler(MotoRequestHandler):
    """MotoRequestHandler without werkzeug's one-line-per-request access log.

    Errors (log_error) are still written to stderr.
    """

    def log_request(self, code="-", size="-"):  # noqa: D401 - werkzeug signature
        pass


class SerializeDynamoDB:
    """WSGI middleware: DynamoDB requests run one at a time, others concurrently."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        # Boto/SDK DynamoDB calls carry "X-Amz-Target: DynamoDB_20120810.<Op>".
        # DynamoDB Streams ("DynamoDBStreams_...") is read-only and not matched.
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if not target.startswith("DynamoDB_"):
            return self.app(environ, start_response)
        with self.lock:
            # Produce the whole response inside the lock: a WSGI app may do its
            # work lazily while the server iterates the body, so consume it here.
            result = self.app(environ, start_response)
            try:
                body = list(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        return body


def build_app():
    # Same construction as moto.server.main().
    return SerializeDynamoDB(DomainDispatcherApplication(create_backend_app))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind")
    parser.add_argument("--port", type=int, default=5000, help="port to bind")
    args = parser.parse_args(argv)

    # moto.server.main() does the same; a few backends (Lambda, Batch) use it to
    # point code they run back at this server.
    os.environ.setdefault("MOTO_PORT", str(args.port))

    # make_server is what werkzeug's run_simple(host, port, app, threaded=True,
    # request_handler=...) calls before serve_forever(); calling it directly lets
    # us print the ready line only after the socket is listening, and skips
    # run_simple's startup banner.
    server = make_server(
        args.host,
        args.port,
        build_app(),
        threaded=True,
        request_handler=QuietRequestHandler,
    )

    def stop(signum, frame):
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    host, port = server.server_address[:2]
    print(f"moto listening on http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
