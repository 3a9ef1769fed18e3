#!/usr/bin/env bash
# tck.sh: runs the official A2A conformance suite (the a2a-tck project,
# https://github.com/a2aproject/a2a-tck) against a relay built from this
# tree, for those who can install the TCK's Python dependencies (uv or pip
# and PyPI). CI does not run it.
#
#   scripts/tck.sh [category]     # main branch TCK: mandatory, capabilities,
#                                 # transport-equivalence, quality, features, all (default)
#   TCK_REF=1.0-dev scripts/tck.sh [must|should|may]   # the v1.0 TCK branch (--level)
#
# Environment: TCK_DIR (where the TCK is cloned; default .tck/a2a-tck),
# TCK_REF (branch or commit; default main), TCK_PORT (relay's port; default
# 18080), TCK_OUT (reports; default .tck/out). relay runs with the embedded
# store and no client authentication, on loopback, with the demo agent;
# webhooks on loopback are allowed for the TCK's push checks. The reports
# (JSON compliance report, pytest output) land in TCK_OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tck_dir=${TCK_DIR:-$root/.tck/a2a-tck}
tck_ref=${TCK_REF:-main}
port=${TCK_PORT:-18080}
out=${TCK_OUT:-$root/.tck/out}
arg=${1:-}

for cmd in git go python3; do
  command -v "$cmd" >/dev/null || { echo "tck: $cmd is needed" >&2; exit 1; }
done

# The TCK, at TCK_REF.
if [ ! -d "$tck_dir/.git" ]; then
  git clone --quiet https://github.com/a2aproject/a2a-tck.git "$tck_dir"
fi
git -C "$tck_dir" fetch --quiet origin
git -C "$tck_dir" checkout --quiet "$tck_ref"
git -C "$tck_dir" merge --quiet --ff-only "origin/$tck_ref" 2>/dev/null || true

# Its Python environment.
if [ ! -x "$tck_dir/.venv/bin/python" ]; then
  if command -v uv >/dev/null; then
    (cd "$tck_dir" && uv venv --quiet && uv pip install --quiet -e .)
  else
    python3 -m venv "$tck_dir/.venv"
    "$tck_dir/.venv/bin/pip" install --quiet -e "$tck_dir"
  fi
fi

# relay, built from this tree.
work=$(mktemp -d)
relay_pid=
cleanup() {
  if [ -n "$relay_pid" ]; then kill "$relay_pid" 2>/dev/null || true; wait "$relay_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/relay" ./cmd/relay
mkdir -p "$out"
RELAY_ADDR=127.0.0.1:$port RELAY_PUBLIC_URL=http://127.0.0.1:$port RELAY_AUTH=none \
  RELAY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8,::1/128 \
  "$work/relay" >"$out/relay.log" 2>&1 &
relay_pid=$!
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  kill -0 "$relay_pid" 2>/dev/null || { echo "tck: relay did not start; see $out/relay.log" >&2; exit 1; }
  sleep 0.1
done

# The TCK. Its CLI differs between branches: main takes --sut-url and
# --category, the v1.0 branch --sut-host and --level.
cd "$tck_dir"
status=0
if ./.venv/bin/python run_tck.py --help 2>/dev/null | grep -q -- '--sut-host'; then
  level=()
  [ -n "$arg" ] && level=(--level "$arg")
  ./.venv/bin/python run_tck.py --sut-host "http://127.0.0.1:$port" "${level[@]}" 2>&1 | tee "$out/tck.txt" || status=$?
else
  ./.venv/bin/python run_tck.py --sut-url "http://127.0.0.1:$port" --category "${arg:-all}" \
    --compliance-report "$out/compliance.json" 2>&1 | tee "$out/tck.txt" || status=$?
fi
echo "tck: reports in $out (exit $status)"
exit "$status"
