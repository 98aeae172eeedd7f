#!/usr/bin/env bash
# Installs what the browser suite (tests/tests/browser.rs) needs, or finds it already there:
# Debian's Chromium at /usr/bin/chromium (playwright-core cannot download a browser of its own
# here) and the node modules pinned by package-lock.json. Safe to run again: each step is skipped
# when its result is already in place. Needs Node 20 or later, and root for apt-get.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "install.sh: $*" >&2; }

if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" -ne 0 ]; then
        log "/usr/bin/chromium is missing; as root run: apt-get update && apt-get install -y chromium"
        exit 1
    fi
    log "installing Debian's chromium"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi

if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' 2>/dev/null; then
    log "the browser suite needs Node 20 or later on the PATH (found: $(node --version 2>/dev/null || echo none))"
    exit 1
fi

# npm ci starts from an empty node_modules each time; skip it while the tree installed matches
# the lock file it was installed from.
STAMP="$HERE/node_modules/.installed-from-package-lock.json"
if ! cmp -s "$HERE/package-lock.json" "$STAMP"; then
    log "npm ci in tests/browser"
    (cd "$HERE" && npm ci --no-audit --no-fund)
    cp "$HERE/package-lock.json" "$STAMP"
fi
