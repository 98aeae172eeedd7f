#!/usr/bin/env python3
"""Local AWS emulator for seatclaim's tests: moto's server, for SQS and EventBridge.

This is moto's own ``moto_server`` (moto/server.py, moto 5.x), quiet and with a clear start
line. DynamoDB is not served from here: the tests use DynamoDB Local (AWS's own engine, with
atomic conditional writes and serialisable transactions), started by dynamodb_local.sh, so
nothing in the test path serialises DynamoDB requests.

Usage: python moto_server.py [--host 127.0.0.1] [--port 5000]
Prints "moto listening on http://HOST:PORT" once the socket is bound and
accepting connections.
"""

import argparse
import os
import signal
import sys

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


def build_app():
    # Same construction as moto.server.main().
    return DomainDispatcherApplication(create_backend_app)


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
