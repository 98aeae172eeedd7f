#!/usr/bin/env bash
# The whole test suite, as the README gives it and CI runs it:
#  0. checks that the machine has what the run needs (tests/preflight.sh), and stops naming
#     whatever is missing before it starts anything;
#  1. starts the local AWS emulator (moto, pinned in tests/emulator/start.sh) or reuses a running one,
#     installs the browser suite's Chromium and node modules (tests/browser/install.sh) if missing,
#     and type-checks the buyer page's modules (tests/browser/typecheck.sh: pinned TypeScript);
#  2. runs every suite on the embedded backend, plus the port contract on every backend (each
#     backend's crate runs it; seatclaim-aws's on the emulator, which step 1 started), then the
#     HTTP contract again in-process (the router called directly, no socket);
#  3. runs the end-to-end suites again on the AWS backend against the emulator;
#  4. runs schemathesis against the running API from its OpenAPI document, on both backends
#     (tests/schemathesis/run.sh: a fixed seed, a bounded number of examples).
# Extra arguments go to every cargo test run (e.g. a test name filter).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/preflight.sh
eval "$(bash tests/emulator/start.sh)"
bash tests/browser/install.sh
bash tests/browser/typecheck.sh

cargo test --workspace --locked "$@"
SEATCLAIM_TEST_TRANSPORT=in-process cargo test -p seatclaim-e2e --test e2e --locked "$@" -- http::contract::
# The suites whose header says "Backends: both" run again on the AWS backend (the list is
# derived, so a new suite only has to say it; tests/tests/architecture.rs checks every suite
# that starts an app says which). Every suite is a module of the one test binary, tests/tests/main.rs.
aws_suites=()
for suite in $(grep -rl '^//! Backends: both' tests/tests); do
    suite=${suite#tests/tests/}
    suite=${suite%.rs}
    aws_suites+=("${suite//\//::}::")
done
SEATCLAIM_TEST_BACKEND=aws cargo test -p seatclaim-e2e --test e2e --locked "$@" -- "${aws_suites[@]}"
# The API from its own OpenAPI document, on both backends: no 5xx, every answer as documented.
bash tests/schemathesis/run.sh
SEATCLAIM_TEST_BACKEND=aws bash tests/schemathesis/run.sh

echo "all suites passed on both backends (the emulator stays up for the next run: bash tests/emulator/stop.sh)"
