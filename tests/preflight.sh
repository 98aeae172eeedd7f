#!/usr/bin/env bash
# What `bash tests/run.sh` needs from the machine, checked before it starts anything (its first
# step; the README lists the same). Prints every missing prerequisite with how to get it and exits
# 1, or prints one line and exits 0.
#
# Not asked for: what the run installs itself. Its scripts put moto and schemathesis into
# virtualenvs, DynamoDB Local's npm package under ~/.cache/seatclaim and the browser suite's node
# modules into tests/browser (each needs network access the first time), and, run as root with
# apt-get, Debian's chromium (tests/browser/install.sh) and openjdk-17-jre-headless
# (tests/emulator/dynamodb_local.sh). Without root those two must be there already.
#
# With --ci (as .ci/run calls it) it also asks for what CI runs before the tests: rustfmt and
# clippy.
#
# Environment: SEATCLAIM_MOTO_VENV, SEATCLAIM_SCHEMATHESIS_VENV and SEATCLAIM_CARGO_LOCK, as the
# scripts that read them (tests/emulator/start.sh, tests/schemathesis/run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
notes=()

# lacks WHAT HOW: records a missing prerequisite and how to get it.
lacks() { missing+=("$1: $2"); }

# at_least FOUND WANTED: whether version FOUND is WANTED or later.
at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }

# The run's own scripts install with apt-get only when they run as root.
can_install() { [ "$(id -u)" -eq 0 ] && type -P apt-get >/dev/null; }

rust_version="$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)"
if ! type -P cargo >/dev/null || ! type -P rustc >/dev/null; then
    lacks "the Rust toolchain $rust_version or later (cargo, rustc)" "https://rustup.rs"
elif ! at_least "$(rustc --version | awk '{print $2}')" "$rust_version"; then
    lacks "Rust $rust_version or later (found $(rustc --version | awk '{print $2}'))" "rustup update stable"
elif ! type -P cc >/dev/null; then
    lacks "a C compiler, cc (SQLite, mimalloc and aws-lc are built from source)" "apt-get install build-essential"
elif [ "${1:-}" = --ci ]; then
    for component in fmt clippy; do
        cargo "$component" --version >/dev/null 2>&1 \
            || lacks "cargo $component (.ci/run's lints)" "rustup component add ${component/fmt/rustfmt}"
    done
fi

# moto and schemathesis pin versions that need Python 3.11; the emulators' probes use python3 too.
if ! type -P python3 >/dev/null; then
    lacks "Python 3.11 or later with venv" "apt-get install python3 python3-venv"
elif ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    lacks "Python 3.11 or later (found $(python3 --version 2>&1))" "Debian 12's python3 is 3.11"
elif ! python3 -c 'import ensurepip, venv' 2>/dev/null \
    && ! { [ -x "${SEATCLAIM_MOTO_VENV:-$HOME/.cache/seatclaim/moto-venv}/bin/python" ] \
        && [ -x "${SEATCLAIM_SCHEMATHESIS_VENV:-$HOME/.cache/seatclaim/schemathesis-venv}/bin/schemathesis" ]; }; then
    lacks "Python's venv module (for moto's and schemathesis's virtualenvs)" "apt-get install python3-venv"
fi

# DynamoDB Local runs on Java 17 or later; dynamodb_local.sh installs it only when it is absent.
if type -P java >/dev/null; then
    java_version="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
    if [ "${java_version:-0}" -lt 17 ]; then
        lacks "Java 17 or later for DynamoDB Local (found ${java_version:-an unknown version})" \
            "apt-get install openjdk-17-jre-headless, first on the PATH"
    fi
elif can_install; then
    notes+=("Java: tests/emulator/dynamodb_local.sh installs openjdk-17-jre-headless")
else
    lacks "Java 17 or later for DynamoDB Local" "as root: apt-get install -y openjdk-17-jre-headless"
fi

# Node runs the browser suite; npm installs its modules and DynamoDB Local's package.
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' 2>/dev/null; then
    lacks "Node 20 or later (found $(node --version 2>/dev/null || echo none))" \
        "https://nodejs.org/en/download (Debian 12's nodejs is 18)"
fi
if ! type -P npm >/dev/null; then
    lacks "npm" "it comes with Node from nodejs.org; Debian: apt-get install npm"
fi

if [ -x /usr/bin/chromium ]; then
    :
elif can_install; then
    notes+=("Chromium: tests/browser/install.sh installs Debian's chromium")
else
    lacks "Chromium at /usr/bin/chromium (the browser suite)" "as root: apt-get update && apt-get install -y chromium"
fi

# curl: tests/schemathesis/run.sh; kill: the test helpers stop their processes with it.
type -P curl >/dev/null || lacks "curl" "apt-get install curl"
type -P kill >/dev/null || lacks "kill" "apt-get install procps"
for tool in awk cmp find realpath mktemp seq; do
    type -P "$tool" >/dev/null || lacks "$tool" "Debian's base system (coreutils, diffutils, findutils, mawk)"
done
if [ -n "${SEATCLAIM_CARGO_LOCK:-}" ] && ! type -P flock >/dev/null; then
    lacks "flock (SEATCLAIM_CARGO_LOCK is set)" "apt-get install util-linux"
fi

if [ "${#missing[@]}" -gt 0 ]; then
    echo "preflight.sh: this machine lacks what the tests need (README.md, \"Quick start\", lists it):" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 1
fi
for note in "${notes[@]}"; do echo "preflight.sh: $note" >&2; done
echo "preflight.sh: every prerequisite of tests/run.sh is in place" >&2
