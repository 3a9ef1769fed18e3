#!/usr/bin/env bash
# e2e.sh: runs the end-to-end suites with the official clients against a relay
# built from this tree, everything on loopback, and exits non-zero when any
# check of any suite fails (README "Tests"):
#
#   clients   e2e/clients.mjs  @a2a-js/sdk 1.3.0 and 0.3.14 over JSON-RPC, raw v0.1
#   bindings  e2e/bindings.mjs @a2a-js/sdk 1.3.0 over HTTP+JSON (/v1) and gRPC, read back over JSON-RPC;
#                              v0.3's HTTP+JSON with 0.3.14 and 1.3.0's v0.3 compat transport
#   backends  e2e/backends.mjs worker and upstream backends, signed push, tenants (its own relays)
#   ui        e2e/ui/ui.mjs    /ui in Debian's headless Chromium, driven by puppeteer-core
#
# clients and bindings share one relay (gRPC on a free port too) on a
# redis-server this script starts on a free port (no persistence, database 0);
# ui's relay uses database 1 of the same server; backends starts relays with
# the embedded store. Every process it starts is stopped on exit (also on
# failure or a signal).
#
# Usage: scripts/e2e.sh [suite...]     (default: all four, in the order above)
# Needs: go, node (18 or later) and npm, redis-server, Chromium (CHROMIUM,
# default /usr/bin/chromium; apt-get install chromium). It runs `npm ci` in
# e2e/ and e2e/ui/ when their node_modules are missing; it never downloads a
# browser. RELAY_E2E_VERBOSE=1 shows stack traces; the logs of relay and
# redis-server are printed when a suite fails; a suite still running after
# RELAY_E2E_SUITE_TIMEOUT seconds (default 600) is killed and fails.
set -euo pipefail
cd "$(dirname "$0")/.."

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(clients bindings backends ui)
for s in "${suites[@]}"; do
	case $s in clients | bindings | backends | ui) ;; *)
		echo "e2e: unknown suite $s (clients, bindings, backends, ui)" >&2
		exit 2
		;;
	esac
done

# The relays started here get only the settings below: drop the caller's RELAY_* (but this script's own knobs).
for v in $(compgen -e | grep '^RELAY_' | grep -v -e '^RELAY_E2E_' -e '^RELAY_UI_'); do unset "$v"; done

need() { command -v "$1" >/dev/null 2>&1 || { echo "e2e: $1 not found ($2)" >&2; exit 1; }; }
need go "https://go.dev/dl"
need node "apt-get install nodejs npm"
need npm "apt-get install npm"
need redis-server "apt-get install redis-server"
chromium=${CHROMIUM:-/usr/bin/chromium}
if [[ " ${suites[*]} " == *" ui "* ]] && [ ! -x "$chromium" ]; then
	echo "e2e: no Chromium at $chromium (apt-get install chromium, or set CHROMIUM)" >&2
	exit 1
fi
echo "--- e2e: node $(node --version), redis-server $(redis-server --version | cut -d' ' -f3 | cut -d= -f2), suites: ${suites[*]}"

work=$(mktemp -d "${TMPDIR:-/tmp}/relay-e2e.XXXXXX")
pids=()
suite="" # the running suite's timeout(1), the leader of a process group holding the suite and all it started
cleanup() {
	local rc=$?
	[ -z "$suite" ] || kill -TERM -- "-$suite" 2>/dev/null || true
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A free loopback port (the kernel's pick; nothing else binds it before we do, in practice).
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# wait_for <what> <pid> <command...>: runs the command until it succeeds, for up to 30 s, while pid lives.
wait_for() {
	local what=$1 pid=$2
	shift 2
	for _ in $(seq 300); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		kill -0 "$pid" 2>/dev/null || { echo "e2e: $what exited" >&2; return 1; }
		sleep 0.1
	done
	echo "e2e: $what did not come up in 30 s" >&2
	return 1
}

for dir in e2e e2e/ui; do
	if [ ! -d "$dir/node_modules" ]; then
		echo "--- npm ci in $dir"
		(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund)
	fi
done

echo "--- go build ./cmd/relay"
go build -o "$work/relay" ./cmd/relay

# up <url>: the URL answers 2xx (node's fetch: curl may be missing on a fresh machine).
up() { node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$1"; }

relay_url=""
redis_url=""
start_shared() {
	local rport port gport
	rport=$(free_port)
	redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
		--logfile "$work/redis.log" --daemonize no &
	pids+=($!)
	wait_for redis-server $! redis-cli -p "$rport" ping || { logs; exit 1; }
	redis_url="redis://127.0.0.1:$rport"

	port=$(free_port)
	gport=$(free_port)
	relay_url="http://127.0.0.1:$port"
	RELAY_ADDR="127.0.0.1:$port" RELAY_PUBLIC_URL="$relay_url" RELAY_GRPC_ADDR="127.0.0.1:$gport" \
		RELAY_REDIS_URL="$redis_url/0" RELAY_AUTH=none \
		RELAY_SECRET_KEYS="e2e:$(head -c32 /dev/urandom | base64)" \
		RELAY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8 \
		"$work/relay" >"$work/relay.log" 2>&1 &
	pids+=($!)
	wait_for relay $! up "$relay_url/healthz" || { logs; exit 1; }
	echo "--- relay at $relay_url (gRPC 127.0.0.1:$gport) on redis-server $redis_url"
}

logs() {
	for f in "$work"/relay.log "$work"/redis.log; do
		[ -s "$f" ] && { echo "--- tail of $(basename "$f")"; tail -n 40 "$f"; }
	done
	return 0
}

# A suite that hangs is killed and counts as failed.
suite_timeout=${RELAY_E2E_SUITE_TIMEOUT:-600}
failed=()
run() {
	local name=$1
	shift
	echo "--- $name"
	# In the background, so that a signal to this script runs cleanup at once.
	timeout --kill-after=10 "$suite_timeout" "$@" &
	suite=$!
	if wait "$suite"; then
		echo "--- $name: passed"
	else
		echo "--- $name: FAILED"
		failed+=("$name")
		logs
	fi
	suite=""
}

case " ${suites[*]} " in *" clients "* | *" bindings "* | *" ui "*) start_shared ;; esac
for s in "${suites[@]}"; do
	case $s in
	clients) run clients node e2e/clients.mjs "$relay_url" ;;
	bindings) run bindings node e2e/bindings.mjs "$relay_url" ;;
	backends) run backends node e2e/backends.mjs "$work/relay" ;;
	ui) run ui env CHROMIUM="$chromium" RELAY_UI_REDIS_URL="$redis_url/1" \
		RELAY_UI_SCREENSHOT="$work/ui.png" node e2e/ui/ui.mjs "$work/relay" ;;
	esac
done

if [ ${#failed[@]} -gt 0 ]; then
	echo "--- e2e FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "--- e2e passed: ${suites[*]}"
