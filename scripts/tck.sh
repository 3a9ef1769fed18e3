#!/usr/bin/env bash
# tck.sh: runs the official A2A conformance suite (the a2a-tck project,
# https://github.com/a2aproject/a2a-tck) against a relay built from this
# tree. CI does not run it.
#
#   scripts/tck.sh [category ...]   # main branch TCK; categories: mandatory,
#                                   # capabilities, quality, features,
#                                   # transport-equivalence (default: all five)
#   TCK_REF=1.0-dev scripts/tck.sh [must|should|may]   # the v1.0-dev branch (--level; venv only)
#
# The main branch's categories run once per binding (TCK_TRANSPORTS, default
# jsonrpc,rest,grpc; the TCK's --transports), transport-equivalence once over
# all of them, each as the TCK's run_tck.py runs it (same test paths, marker
# expressions and options), straight through pytest, so the
# pytest-json-report plugin is not needed; results are JUnit XML files in
# TCK_OUT and a table (category x binding: passed, failed, errors, skipped)
# at the end.
#
# Python, TCK_PYTHON:
#   venv (default)  a virtualenv in the TCK clone, from PyPI (uv or pip).
#   system          the machine's python3 (TCK_PYTHON_BIN, default
#                   /usr/bin/python3) and its packages, for machines without
#                   PyPI. On Debian 12: apt-get install python3-pytest
#                   python3-pytest-asyncio python3-httpx python3-requests
#                   python3-responses python3-deepdiff python3-jsonschema
#                   python3-dotenv python3-yaml python3-packaging
#                   python3-grpcio python3-protobuf python3-openssl
#                   python3-aiohttp protobuf-compiler protobuf-compiler-grpc.
#                   The TCK's generated gRPC stubs need protobuf >= 5.29 and
#                   googleapis-common-protos, which Debian lacks, so the stubs
#                   are generated again, into TCK_OUT, by the local protoc from
#                   the file descriptor the TCK's own stubs carry, without
#                   its google.api imports (HTTP-mapping and field-behaviour
#                   annotations only: the messages and the service are the same).
#
# TCK_FIX_CLIENTS=1 changes three things in the TCK's clients, in its clone
# (never in this repository), before running: its card reader lets a v0.3
# additionalInterfaces entry replace the v1.0 supportedInterfaces URL of the
# same binding (relay's v0.3 HTTP+JSON entry is its root, as v0.3 clients
# append /v1 themselves; the v1.0 one is /v1); its HTTP+JSON client joins
# "/message:send" and the other paths to the interface URL as absolute
# paths, dropping the URL's path; and its gRPC client reads a scheme-less
# host:port (the form a2a-go's gRPC client dials, and relay's card lists)
# as no host at all. Without the fix, almost every HTTP+JSON and gRPC test
# fails on the connection; the README gives both results.
#
# Environment: TCK_DIR (the clone; default .tck/a2a-tck), TCK_REPO (where
# to clone from; default GitHub), TCK_REF (branch or commit; default main),
# TCK_PORT (relay's HTTP port; default 18080; gRPC on the next one), TCK_OUT
# (reports; default .tck/out). relay runs with the embedded store and no
# client authentication, on loopback, with the demo agent; webhooks on
# loopback are allowed for the TCK's push checks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tck_dir=${TCK_DIR:-$root/.tck/a2a-tck}
tck_repo=${TCK_REPO:-https://github.com/a2aproject/a2a-tck.git}
tck_ref=${TCK_REF:-main}
port=${TCK_PORT:-18080}
grpc_port=$((port + 1))
out=${TCK_OUT:-$root/.tck/out}
mode=${TCK_PYTHON:-venv}
transports=${TCK_TRANSPORTS:-jsonrpc,rest,grpc}

for cmd in git go curl; do
  command -v "$cmd" >/dev/null || { echo "tck: $cmd is needed" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The TCK, at TCK_REF.
if [ ! -d "$tck_dir/.git" ]; then
  git clone --quiet "$tck_repo" "$tck_dir"
fi
git -C "$tck_dir" fetch --quiet origin || true
git -C "$tck_dir" checkout --quiet --force "$tck_ref"
git -C "$tck_dir" merge --quiet --ff-only "origin/$tck_ref" 2>/dev/null || true
if [ "${TCK_FIX_CLIENTS:-}" = 1 ]; then
  sed -i -e 's|urljoin(self.base_url, "/|urljoin(self.base_url, "./|' \
    -e 's|urljoin(self.base_url, f"/|urljoin(self.base_url, f"./|' "$tck_dir/tck/transport/rest_client.py"
  sed -i -e 's|^\(\s*\)parsed = urlparse(base_url)$|\1base_url = base_url if "://" in base_url else "grpc://" + base_url\n&|' \
    "$tck_dir/tck/transport/grpc_client.py"
  sed -i '/^def get_transport_endpoints/,/^    return endpoints/ s/endpoints\[transport_type\] = endpoint$/endpoints.setdefault(transport_type, endpoint)/' \
    "$tck_dir/tck/agent_card_utils.py"
fi
echo "tck: a2a-tck $(git -C "$tck_dir" rev-parse HEAD)$([ "${TCK_FIX_CLIENTS:-}" = 1 ] && echo ', clients fixed')" | tee "$out/tck-commit.txt"

# Its Python.
pythonpath=
case $mode in
venv)
  if [ ! -x "$tck_dir/.venv/bin/python" ]; then
    if command -v uv >/dev/null; then
      (cd "$tck_dir" && uv venv --quiet && uv pip install --quiet -e .)
    else
      python3 -m venv "$tck_dir/.venv"
      "$tck_dir/.venv/bin/pip" install --quiet -e "$tck_dir"
    fi
  fi
  py=$tck_dir/.venv/bin/python
  ;;
system)
  py=${TCK_PYTHON_BIN:-/usr/bin/python3}
  "$py" -c 'import pytest, pytest_asyncio, httpx, requests, responses, deepdiff, jsonschema, dotenv, yaml, grpc, google.protobuf, OpenSSL, aiohttp' ||
    { echo "tck: $py lacks the TCK's packages (see the comment at the top)" >&2; exit 1; }
  if [ -f "$tck_dir/tck/grpc_stubs/a2a_pb2.py" ]; then
    for cmd in protoc grpc_python_plugin; do
      command -v "$cmd" >/dev/null || { echo "tck: $cmd is needed to generate the gRPC stubs" >&2; exit 1; }
    done
    stubs=$out/grpc-stubs
    rm -rf "$stubs" && mkdir -p "$stubs/gen" "$stubs/pkg/a2a/v1"
    "$py" "$root/scripts/tck_stub_descriptor.py" "$tck_dir/tck/grpc_stubs/a2a_pb2.py" "$stubs/a2a.desc"
    protoc --descriptor_set_in="$stubs/a2a.desc" --python_out="$stubs/gen" --grpc_python_out="$stubs/gen" \
      --plugin=protoc-gen-grpc_python="$(command -v grpc_python_plugin)" a2a.proto
    touch "$stubs/pkg/a2a/__init__.py" "$stubs/pkg/a2a/v1/__init__.py"
    cp "$stubs/gen/a2a_pb2.py" "$stubs/pkg/a2a/v1/"
    sed 's/^import a2a_pb2 as/from a2a.v1 import a2a_pb2 as/' "$stubs/gen/a2a_pb2_grpc.py" >"$stubs/pkg/a2a/v1/a2a_pb2_grpc.py"
    pythonpath=$stubs/pkg # found before the TCK's own (it tries a2a.v1 first)
  fi
  ;;
*) echo "tck: TCK_PYTHON is venv or system" >&2; exit 1 ;;
esac

# relay, built from this tree.
work=$(mktemp -d)
relay_pid=
cleanup() {
  if [ -n "$relay_pid" ]; then kill "$relay_pid" 2>/dev/null || true; wait "$relay_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/relay" ./cmd/relay
RELAY_ADDR=127.0.0.1:$port RELAY_PUBLIC_URL=http://127.0.0.1:$port RELAY_AUTH=none \
  RELAY_GRPC_ADDR=127.0.0.1:$grpc_port RELAY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8,::1/128 \
  "$work/relay" >"$out/relay.log" 2>&1 &
relay_pid=$!
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  kill -0 "$relay_pid" 2>/dev/null || { echo "tck: relay did not start; see $out/relay.log" >&2; exit 1; }
  sleep 0.1
done

cd "$tck_dir"
status=0
# The main branch's HTTP+JSON client sends no A2A-Version header, which
# makes its requests v0.3 ones (spec: an empty header means 0.3); the TCK's
# custom-header setting adds it to every request (lowercased as gRPC
# metadata). relay runs without client authentication, so nothing else
# rides on it.
export A2A_AUTH_TYPE=custom A2A_AUTH_HEADER=A2A-Version A2A_AUTH_TOKEN=1.0

# The v1.0-dev branch: its own runner (--sut-host, --level).
if "$py" run_tck.py --help 2>/dev/null | grep -q -- '--sut-host'; then
  if [ "$mode" = system ]; then
    echo "tck: the v1.0-dev branch needs pytest 8, pytest-html and googleapis-common-protos: run it with TCK_PYTHON=venv" >&2
    exit 1
  fi
  level=()
  [ -n "${1:-}" ] && level=(--level "$1")
  "$py" run_tck.py --sut-host "http://127.0.0.1:$port" "${level[@]}" 2>&1 | tee "$out/tck.txt" || status=$?
  echo "tck: reports in $out (exit $status)"
  exit "$status"
fi

# The main branch: each category as run_tck.py selects it.
run() { # run <category> <transports> <report name>
  local path markers=
  case $1 in
  mandatory) path=tests/mandatory/ markers="mandatory or mandatory_protocol"
    case ",$2," in *,jsonrpc,*) markers="$markers or mandatory_jsonrpc" ;; esac ;;
  capabilities) path=tests/optional/capabilities/ ;;
  quality) path=tests/optional/quality/ ;;
  features) path=tests/optional/features/ ;;
  transport-equivalence) path=tests/optional/multi_transport/ markers=transport_equivalence ;;
  *) echo "tck: unknown category $1" >&2; exit 1 ;;
  esac
  local args=(-m pytest "$path" --sut-url="http://127.0.0.1:$port" --test-scope=all --tb=short -q -rfE
    --transports "$2" -p no:cacheprovider --junitxml="$out/$3.xml")
  [ -n "$markers" ] && args+=(-m "$markers")
  echo "tck: $1 over $2"
  PYTHONPATH=$pythonpath "$py" "${args[@]}" >"$out/$3.txt" 2>&1 || status=1
  tail -n 1 "$out/$3.txt"
}
categories=("$@")
[ ${#categories[@]} -eq 0 ] && categories=(mandatory capabilities quality features transport-equivalence)
for c in "${categories[@]}"; do
  if [ "$c" = transport-equivalence ]; then
    run "$c" "$transports" "$c"
  else
    for t in ${transports//,/ }; do run "$c" "$t" "${c}_$t"; done
  fi
done

# The table, from the JUnit files.
"$py" - "$out" "${categories[@]}" <<'EOF'
import sys, glob, os, xml.etree.ElementTree as ET
out, cats = sys.argv[1], sys.argv[2:]
print(f"{'category/binding':36} {'passed':>6} {'failed':>6} {'errors':>6} {'skipped':>7}")
for c in cats:
    for f in sorted(glob.glob(os.path.join(out, c + "*.xml"))):
        name = os.path.basename(f)[:-4]
        if name != c and not name.startswith(c + "_"):
            continue
        s = ET.parse(f).getroot()
        s = s.find("testsuite") if s.tag == "testsuites" else s
        n, fl, er, sk = (int(s.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
        print(f"{name:36} {n - fl - er - sk:>6} {fl:>6} {er:>6} {sk:>7}")
EOF
echo "tck: reports in $out (exit $status)"
exit "$status"
