#!/usr/bin/env bash
# chaos.sh: runs relay's chaos suite (internal/chaos, TestChaos) with a
# bigger load than the default `go test ./...` run.
#
# The test builds the relay binary, starts three relay processes over one
# redis-server with AOF, drives RELAY_CHAOS_TASKS tasks through them while
# its webhook sink fails on purpose, kills -9 and restarts a relay instance,
# restarts Redis, kills -9 Redis and restarts it from its AOF (one such
# cycle per ~25 s of load), then checks every committed event reached the
# webhook in order, every SSE follower saw its task's events in order, and
# every acknowledged task ended (its demo agent's work moves to another
# instance after kill -9, with RELAY_WORKER_LEASE=3s, and waits out Redis).
# A fifth of the tasks go to Go workers over the worker API, half of them
# through connections that cut 20% of their post replies: no worker event
# may be committed twice. Two clients (API keys) name the same contexts:
# each must see only its own tasks there, and claims carry their owners.
#
# Usage (from anywhere in the repository):
#   scripts/chaos.sh                          # 5000 tasks, once
#   scripts/chaos.sh -count=3                 # three runs in a row
#   scripts/chaos.sh -count=2 -timeout 40m -race
#   RELAY_CHAOS_TASKS=20000 RELAY_CHAOS_RATE=100 scripts/chaos.sh
# Arguments are passed to go test (defaults: -count=1 -timeout 30m).
# Settings (environment): RELAY_CHAOS_TASKS (default here 5000), RELAY_CHAOS_RATE
# (tasks/s, 60), RELAY_CHAOS_FOLLOWERS (SSE followers, 6), RELAY_CHAOS_DRAIN
# (wait for the last deliveries, 60s), RELAY_CHAOS_SEED (the sink's failures),
# RELAY_CHAOS_RACE (build relay with -race; default: as the test),
# RELAY_CHAOS_DIR (keep the relay and worker logs there), RELAY_CHAOS_REDIS_DOWN
# (Redis down after its kill -9, 3s), RELAY_CHAOS_WORKER_EVERY (every n-th task
# to the workers, 5), RELAY_CHAOS_WORKERS (8), RELAY_CHAOS_CUT_RATE (0.2),
# RELAY_CHAOS_FRESH_KEYS=1 (self-test: workers retry under new keys; the run
# must then report worker events committed twice).
# Needs go and redis-server (Debian: apt-get install redis-server).
set -euo pipefail

cd "$(dirname "$0")/.."

for bin in go redis-server; do
	command -v "$bin" >/dev/null || { echo "chaos: $bin not found" >&2; exit 1; }
done

export RELAY_CHAOS_TASKS=${RELAY_CHAOS_TASKS:-5000}

args=("$@")
has() { local a; for a in "${args[@]}"; do case $a in "$1" | "$1"=*) return 0 ;; esac; done; return 1; }
has -count || args+=(-count=1)
has -timeout || args+=(-timeout=30m)

echo "chaos: go vet ./internal/chaos (then go test builds the test, which builds the relay binary)"
go vet ./internal/chaos
echo "chaos: RELAY_CHAOS_TASKS=$RELAY_CHAOS_TASKS go test ${args[*]} -run '^TestChaos\$' -v ./internal/chaos"
go test "${args[@]}" -run '^TestChaos$' -v ./internal/chaos
