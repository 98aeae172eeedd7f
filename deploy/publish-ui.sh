#!/usr/bin/env bash
# Publishes the buyer web page to a stack's CloudFront distribution (UiDistribution=true, see
# docs/aws-stack.md, "The buyer web page on S3 and CloudFront"):
#  1. reads the stack's outputs UiBucketName and UiDistributionId;
#  2. uploads the page's files from api/ui (the same files the API builds into its binary) with
#     their Content-Type and Cache-Control: public, max-age=60, the script modules and style
#     sheet first and the page last, so the new page never loads before its files are there;
#  3. invalidates the distribution's cache (/*), so viewers get the new files at once rather
#     than within the minute the edge may keep them.
# /ui/config.json is not a file: the distribution asks the API for it.
#
# Usage: bash deploy/publish-ui.sh STACK_NAME
# With the AWS CLI's usual credentials and Region (AWS_PROFILE, AWS_REGION, ...): the stack's
# Region, which is also its bucket's. Needs cloudformation:DescribeStacks on the stack,
# s3:PutObject on the bucket and cloudfront:CreateInvalidation on the distribution.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every file of api/ui: name in api/ui | key in the bucket | Content-Type. The page asks for
# /ui/app.css and /ui/app.js, which imports the other modules from /ui/ (text/javascript, or
# browsers refuse to run them as modules); the distribution passes /ui/* through as it is and
# answers every other page path with index.html. tests/tests/deploy/ checks this
# list against the directory. The modules app.js imports come before it, and the page last.
FILES=(
    "account.js|ui/account.js|text/javascript; charset=utf-8"
    "api.js|ui/api.js|text/javascript; charset=utf-8"
    "dom.js|ui/dom.js|text/javascript; charset=utf-8"
    "event_page.js|ui/event_page.js|text/javascript; charset=utf-8"
    "events.js|ui/events.js|text/javascript; charset=utf-8"
    "form.js|ui/form.js|text/javascript; charset=utf-8"
    "job_view.js|ui/job_view.js|text/javascript; charset=utf-8"
    "oidc.js|ui/oidc.js|text/javascript; charset=utf-8"
    "page_state.js|ui/page_state.js|text/javascript; charset=utf-8"
    "reasons.js|ui/reasons.js|text/javascript; charset=utf-8"
    "reservation.js|ui/reservation.js|text/javascript; charset=utf-8"
    "seat_map.js|ui/seat_map.js|text/javascript; charset=utf-8"
    "storage.js|ui/storage.js|text/javascript; charset=utf-8"
    "app.js|ui/app.js|text/javascript; charset=utf-8"
    "app.css|ui/app.css|text/css; charset=utf-8"
    "index.html|index.html|text/html; charset=utf-8"
)
CACHE_CONTROL="public, max-age=60"

log() { echo "publish-ui.sh: $*" >&2; }

usage() {
    cat <<'EOF'
usage: bash deploy/publish-ui.sh STACK_NAME

Uploads the buyer web page (api/ui: index.html, app.css and the *.js modules) to the S3
bucket of the CloudFormation stack STACK_NAME (output UiBucketName) with Content-Type and
Cache-Control: public, max-age=60, then invalidates its CloudFront distribution
(output UiDistributionId) for /*. The stack must have been deployed with UiDistribution=true.
Uses the AWS CLI's credentials and Region (the stack's Region).
EOF
}

if [ "$#" -eq 1 ] && { [ "$1" = "-h" ] || [ "$1" = "--help" ]; }; then
    usage
    exit 0
fi
if [ "$#" -ne 1 ] || [ -z "$1" ] || [ "${1#-}" != "$1" ]; then
    usage >&2
    exit 2
fi
STACK=$1

# A file added to api/ui must be added to FILES too (with its key and type), or it would not
# be published.
for path in api/ui/*; do
    name=${path#api/ui/}
    listed=false
    for entry in "${FILES[@]}"; do
        if [ "${entry%%|*}" = "$name" ]; then listed=true; fi
    done
    if [ "$listed" = false ]; then
        log "api/ui/$name is not in FILES: add it there with its key and Content-Type"
        exit 1
    fi
done

# The stack's outputs UiBucketName, UiDistributionId and UiUrl, in one call ("None" for one the
# stack does not have, e.g. deployed with UiDistribution=false).
output() { printf "Outputs[?OutputKey=='%s'].OutputValue | [0]" "$1"; }
outputs=$(aws cloudformation describe-stacks --stack-name "$STACK" --output text \
    --query "Stacks[0].[$(output UiBucketName), $(output UiDistributionId), $(output UiUrl)]")
read -r BUCKET DISTRIBUTION URL <<<"$outputs"
if [ "$BUCKET" = None ] || [ "$DISTRIBUTION" = None ] || [ -z "$DISTRIBUTION" ]; then
    log "stack $STACK has no UiBucketName and UiDistributionId outputs: deploy it with UiDistribution=true"
    exit 1
fi

for entry in "${FILES[@]}"; do
    IFS='|' read -r name key content_type <<<"$entry"
    log "api/ui/$name -> s3://$BUCKET/$key ($content_type)"
    aws s3 cp "api/ui/$name" "s3://$BUCKET/$key" --only-show-errors \
        --content-type "$content_type" --cache-control "$CACHE_CONTROL"
done

INVALIDATION=$(aws cloudfront create-invalidation --distribution-id "$DISTRIBUTION" \
    --paths '/*' --query Invalidation.Id --output text)
log "invalidation $INVALIDATION of distribution $DISTRIBUTION for /* (a minute or two; to wait:"
log "  aws cloudfront wait invalidation-completed --distribution-id $DISTRIBUTION --id $INVALIDATION)"
if [ "$URL" = None ]; then URL="s3://$BUCKET"; fi
echo "published: $URL"
