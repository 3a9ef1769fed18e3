#!/usr/bin/env python3
"""A relay worker in Python 3.11+ (standard library only, through
clients/python/relay_worker.py): it claims tasks from a queue, reports three
"working" updates, streams the upper-cased input text as an artifact in two
chunks, and completes the task. It stops working on a task the client cancels
(a heartbeat answering "canceled": true, or a 409 on a post); Ctrl-C or
SIGTERM releases the task in hand and exits.

    RELAY_WORKER_TOKEN=dev-worker-token-123 RELAY_QUEUE=jobs python3 examples/worker.py

Settings: RELAY_URL (default http://localhost:8080), RELAY_WORKER_TOKEN,
RELAY_QUEUE (default "default"); WORKER_STEP_SECONDS, the pause after each
"working" update (default 0.5). The API is described in docs/worker-api.md.
"""

from __future__ import annotations

import logging
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))

import relay_worker  # noqa: E402  (found through the path above)

STEP_SECONDS = float(os.environ.get("WORKER_STEP_SECONDS", "0.5"))


def handle(job: relay_worker.Job) -> None:
    """Three steps, the upper-cased input in two chunks, then completed."""
    for step in range(1, 4):
        job.status("working", f"step {step} of 3")
        job.wait(STEP_SECONDS)  # raises TaskCanceled, LeaseLost or ShuttingDown
    out = job.text.upper()  # a str is indexed by code points, not bytes
    half = len(out) // 2
    job.artifact("result", out[:half])
    job.artifact("result", out[half:], append=True, last_chunk=True)
    job.complete("done")


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(message)s")
    token = os.environ.get("RELAY_WORKER_TOKEN")
    if not token:
        print("set RELAY_WORKER_TOKEN to one of the relay's RELAY_WORKER_TOKENS", file=sys.stderr)
        return 2
    client = relay_worker.Client(os.environ.get("RELAY_URL", "http://localhost:8080"), token,
                                 queue=os.environ.get("RELAY_QUEUE", "default"))
    logging.info("worker %s: claiming from queue %r at %s", client.worker_id, client.queue, client.base_url)
    try:
        client.run(handle)  # until SIGINT or SIGTERM; releases the task in hand
    except relay_worker.APIError as e:  # a bad token or queue name: retrying cannot help
        print(f"claim refused: {e}", file=sys.stderr)
        return 1
    logging.info("bye")
    return 0


if __name__ == "__main__":
    sys.exit(main())
