#!/usr/bin/env bash
# redis-cluster-test.sh: runs relay's test suite against a real Redis Cluster.
#
# It starts three redis-server masters (cluster mode, no persistence) on
# 127.0.0.1 in a temporary directory, forms a cluster of them with
# redis-cli --cluster create, waits until every node reports cluster_state:ok,
# runs `go test` with RELAY_TEST_REDIS_CLUSTER naming the nodes, and tears
# everything down on exit. Tests that need a server of their own to stop or
# kill (redistest.Start) still get a single redis-server.
#
# Usage (from anywhere in the repository):
#   scripts/redis-cluster-test.sh                  # go test -count=1 ./...
#   scripts/redis-cluster-test.sh -race ./internal/outbox/... ./internal/taskstore/...
# Arguments are passed to go test (default: -count=1 ./...).
# REDIS_CLUSTER_BASE_PORT (default 17001) picks the ports: base, base+1,
# base+2, and the cluster bus ports 10000 above them; they must be free.
# Needs redis-server and redis-cli 7.0 or newer (Debian: apt-get install redis-server).
set -euo pipefail

cd "$(dirname "$0")/.."

base=${REDIS_CLUSTER_BASE_PORT:-17001}
ports=("$base" "$((base + 1))" "$((base + 2))")
for bin in redis-server redis-cli go; do
	command -v "$bin" >/dev/null || { echo "redis-cluster-test: $bin not found" >&2; exit 1; }
done

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "${ports[@]}"; do
	for q in "$p" "$((p + 10000))"; do
		port_free "$q" || { echo "redis-cluster-test: port $q is in use (set REDIS_CLUSTER_BASE_PORT)" >&2; exit 1; }
	done
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/relay-cluster.XXXXXX")
pids=()
testing=
cleanup() {
	local code=$?
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [ "$code" -ne 0 ] && [ -z "$testing" ]; then # the cluster did not come up
		for p in "${ports[@]}"; do
			[ -f "$dir/$p/redis.log" ] && { echo "--- redis $p log (tail)" >&2; tail -n 20 "$dir/$p/redis.log" >&2; }
		done
	fi
	rm -rf "$dir"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for p in "${ports[@]}"; do
	mkdir -p "$dir/$p"
	redis-server --port "$p" --bind 127.0.0.1 --dir "$dir/$p" \
		--cluster-enabled yes --cluster-config-file "nodes-$p.conf" \
		--appendonly no --save "" --daemonize no \
		>"$dir/$p/redis.log" 2>&1 &
	pids+=("$!")
done

# wait_for <seconds> <description> <command...>: retries the command until it succeeds.
wait_for() {
	local deadline=$((SECONDS + $1)) what=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "redis-cluster-test: timed out waiting for $what" >&2
			return 1
		fi
		sleep 0.1
	done
}

for p in "${ports[@]}"; do
	wait_for 10 "redis-server on port $p" redis-cli -p "$p" ping
done

nodes=()
for p in "${ports[@]}"; do nodes+=("127.0.0.1:$p"); done
redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$dir/create.log" 2>&1 ||
	{ cat "$dir/create.log" >&2; exit 1; }

cluster_ok() { redis-cli -p "$1" cluster info | grep -q '^cluster_state:ok'; }
for p in "${ports[@]}"; do
	wait_for 30 "cluster_state:ok on port $p" cluster_ok "$p"
done
echo "redis-cluster-test: cluster of ${nodes[*]} is up"

seeds=$(IFS=,; echo "${nodes[*]}")
args=("$@")
[ "${#args[@]}" -gt 0 ] || args=(-count=1 ./...)
testing=1
RELAY_TEST_REDIS_CLUSTER=$seeds go test "${args[@]}"
