#!/usr/bin/env bash
# The buyer page's type check: TypeScript (pinned in package.json, installed by install.sh) over
# every module of api/ui, which all say // @ts-check, with strict checks (tsconfig.ui.json).
# Nothing is emitted; any error fails. Run by tests/run.sh.
set -euo pipefail
cd "$(dirname "$0")"
./node_modules/.bin/tsc -p tsconfig.ui.json
echo "typecheck.sh: api/ui type-checks"
