#!/usr/bin/env bash
# upgrade-test.sh: builds the previous version of relay (the last commit
# before the lean data path of #15 changed what relay stores, unless
# RELAY_UPGRADE_REV names another) and runs TestUpgradeFromThePreviousRelay:
# that version fills a Redis with tasks and waiting notifications, and this
# one must deliver and serve them (README "Upgrading").
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${RELAY_UPGRADE_REV:-eecd1f7}
if ! git rev-parse --quiet --verify "$rev^{commit}" >/dev/null; then
  echo "upgrade-test: commit $rev is not in this clone (a shallow clone?); fetch the history to run this test" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git archive "$rev" | tar -x -C "$work"
(cd "$work" && go build -o "$work/relay-previous" ./cmd/relay)
RELAY_UPGRADE_FROM="$work/relay-previous" go test -count=1 -run 'TestUpgradeFromThePreviousRelay' "$@" ./internal/app/
