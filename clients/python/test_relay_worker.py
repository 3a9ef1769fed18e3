"""Tests of relay_worker (and examples/worker.py) against a real relay.

internal/app's TestPythonWorkerClient starts relay (a worker queue, a long
lease, no client auth) and runs these with RELAY_URL, RELAY_WORKER_TOKEN and
RELAY_QUEUE set; `go test ./internal/app -run PythonWorkerClient` runs them.
Without RELAY_URL the tests that need relay are skipped. They share one
queue and run one after the other; each one leaves the queue empty.
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

import relay_worker

RELAY_URL = os.environ.get("RELAY_URL", "").rstrip("/")
TOKEN = os.environ.get("RELAY_WORKER_TOKEN", "")
QUEUE = os.environ.get("RELAY_QUEUE", "jobs")
EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "worker.py")
DEADLINE = 30.0  # seconds any awaited condition gets (a failure, never a measure)

needs_relay = unittest.skipUnless(RELAY_URL and TOKEN, "RELAY_URL and RELAY_WORKER_TOKEN are not set "
                                  "(go test ./internal/app -run PythonWorkerClient sets them)")


def rpc(method: str, params: dict[str, Any]) -> Any:
    """A v1.0 JSON-RPC call of a client; returns the result, raises on an error."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(RELAY_URL + "/", data=body, method="POST",
                                 headers={"Content-Type": "application/json", "A2A-Version": "1.0"})
    with urllib.request.urlopen(req, timeout=DEADLINE) as resp:
        out = json.load(resp)
    if out.get("error"):
        raise AssertionError(f"{method}: {out['error']}")
    return out["result"]


def send_task(text: str) -> str:
    """A client sends a task (without waiting for it); returns its id."""
    res = rpc("SendMessage", {"message": {"role": "ROLE_USER", "messageId": relay_worker.new_idempotency_key(),
                                          "parts": [{"text": text}]},
                              "configuration": {"returnImmediately": True}})
    return res["task"]["id"]


def get_task(task_id: str) -> dict[str, Any]:
    return rpc("GetTask", {"id": task_id})


def status_text(task: dict[str, Any]) -> str:
    parts = ((task.get("status") or {}).get("message") or {}).get("parts") or []
    return "".join(p.get("text", "") for p in parts)


def artifact_texts(task: dict[str, Any]) -> list[list[str]]:
    return [[p.get("text") for p in a.get("parts") or []] for a in task.get("artifacts") or []]


def eventually(cond: Callable[[], Any], what: str, timeout: float = DEADLINE) -> Any:
    """Waits for cond() to be truthy, up to timeout seconds; fails with what."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class RunInThread:
    """Client.run in a background thread (no signal handlers), stopped on exit."""

    def __init__(self, client: relay_worker.Client, handler: Callable[[relay_worker.Job], None]) -> None:
        self.client = client
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(handler,), daemon=True)

    def _run(self, handler: Callable[[relay_worker.Job], None]) -> None:
        try:
            self.client.run(handler, handle_signals=False)
        except BaseException as e:  # reported by __exit__
            self.error = e

    def __enter__(self) -> RunInThread:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.client.shutdown()
        self.thread.join(DEADLINE)
        if self.thread.is_alive():
            raise AssertionError("Client.run did not return after shutdown")
        if self.error is not None:
            raise AssertionError(f"Client.run raised {self.error!r}")


def new_client(url: str = "", **kw: Any) -> relay_worker.Client:
    kw.setdefault("claim_wait", 1.0)
    return relay_worker.Client(url or RELAY_URL, TOKEN, QUEUE, worker_id="py-test", **kw)


@needs_relay
class WorkerAgainstRelay(unittest.TestCase):

    def test_claim_status_chunked_artifact_completed(self) -> None:
        """A job's status update, a two-chunk artifact and its completion are
        what a client reading the task sees."""
        task_id = send_task("hello world")
        seen: dict[str, Any] = {}

        def handle(job: relay_worker.Job) -> None:
            seen["job"] = job
            self.assertEqual(job.owner, "")  # no client authentication: the anonymous principal
            job.status("working", "reading the input")
            seen["working"] = status_text(get_task(job.task_id))
            out = job.text.upper()
            job.artifact("result", out[:6])
            job.artifact("result", out[6:], append=True, last_chunk=True)
            seen["final"] = job.complete("done")

        with RunInThread(new_client(), handle):
            eventually(lambda: "final" in seen, "the handler to complete the task")
        job = seen["job"]
        self.assertEqual(job.task_id, task_id)
        self.assertEqual(job.attempt, 1)
        self.assertTrue(job.context_id)
        self.assertEqual(seen["working"], "reading the input")
        self.assertTrue(seen["final"].released)
        self.assertIsInstance(job.reason, relay_worker.JobDone)
        task = get_task(task_id)
        self.assertEqual(task["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertEqual(status_text(task), "done")
        self.assertEqual(artifact_texts(task), [["HELLO ", "WORLD"]])

    def test_heartbeat_notices_a_cancel(self) -> None:
        """A client's cancel reaches the handler through the heartbeats:
        job.wait raises TaskCanceled, and the job's posts stop."""
        task_id = send_task("cancel me")
        ready = threading.Event()
        seen: dict[str, Any] = {}

        def handle(job: relay_worker.Job) -> None:
            seen["job"] = job
            job.status("working")
            ready.set()
            try:
                job.wait(10 * DEADLINE)  # the lease is long: only a heartbeat can end this
            except relay_worker.JobStopped as e:
                seen["stopped"] = e
                raise

        with RunInThread(new_client(heartbeat_interval=0.1), handle):
            self.assertTrue(ready.wait(DEADLINE), "the task was not claimed")
            rpc("CancelTask", {"id": task_id})
            eventually(lambda: "stopped" in seen, "the handler to see the cancel")
        self.assertIsInstance(seen["stopped"], relay_worker.TaskCanceled)
        job = seen["job"]
        self.assertIsInstance(job.reason, relay_worker.TaskCanceled)
        with self.assertRaises(relay_worker.TaskCanceled):
            job.status("working", "still here")
        self.assertEqual(get_task(task_id)["status"]["state"], "TASK_STATE_CANCELED")

    def test_sigterm_releases_the_task_of_the_example(self) -> None:
        """SIGTERM to examples/worker.py mid-task releases the task: another
        worker claims it at once (the lease is far longer than the wait)."""
        task_id = send_task("abc")
        proc = start_example(step_seconds=10 * DEADLINE)
        try:
            eventually(lambda: status_text(get_task(task_id)) == "step 1 of 3", "the example to start the task")
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=DEADLINE)
        finally:
            stop(proc)
        self.assertEqual(proc.returncode, 0, out)
        job = new_client().claim(wait=10)
        self.assertIsNotNone(job, f"the task was not claimable again within 10 s; the example said:\n{out}")
        assert job is not None
        self.assertEqual(job.task_id, task_id)
        self.assertEqual(job.attempt, 2)
        self.assertTrue(job.complete("done by the next worker").released)

    def test_the_example_completes_a_task_and_stops_on_sigint(self) -> None:
        """examples/worker.py does what examples/worker.mjs does; SIGINT ends
        its waiting claim."""
        task_id = send_task("hello")
        proc = start_example(step_seconds=0.01)
        try:
            eventually(lambda: get_task(task_id)["status"]["state"] == "TASK_STATE_COMPLETED",
                       "the example to complete the task")
            proc.send_signal(signal.SIGINT)
            # Its claims wait 30 s: it exits sooner only if the claim is interrupted.
            out, _ = proc.communicate(timeout=20)
        finally:
            stop(proc)
        self.assertEqual(proc.returncode, 0, out)
        task = get_task(task_id)
        self.assertEqual(artifact_texts(task), [["HE", "LLO"]])
        self.assertEqual(status_text(task), "done")

    def test_a_post_whose_answer_is_lost_is_applied_once(self) -> None:
        """Posts whose first answer is lost (a proxy drops it after relay
        applied the post) are sent again under the same Idempotency-Key: the
        last chunk is appended once and the retried completion succeeds."""
        task_id = send_task("x")
        with LosingProxy(RELAY_URL) as proxy:
            client = new_client(proxy.url, retry_backoff=0.05)
            job = client.claim(wait=10)
            assert job is not None
            self.assertEqual(job.task_id, task_id)
            job.status("working")
            job.artifact("result", "HEL")
            proxy.lose_next_answers(1)
            chunk = job.artifact("result", "LO", append=True, last_chunk=True)
            proxy.lose_next_answers(1)
            final = job.complete("done")
        self.assertTrue(chunk.replayed, "the chunk's retry was not answered as a replay")
        self.assertTrue(final.released)
        self.assertTrue(final.replayed)
        self.assertIsInstance(job.reason, relay_worker.JobDone)
        keys = proxy.keys
        self.assertEqual(len(keys), 6, keys)
        self.assertEqual(len(set(keys)), 4, f"want 4 posts, the last two sent twice under one key: {keys}")
        self.assertEqual(keys[2], keys[3])
        self.assertEqual(keys[4], keys[5])
        task = get_task(task_id)
        self.assertEqual(task["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertEqual(artifact_texts(task), [["HEL", "LO"]])

    def test_errors_of_the_api(self) -> None:
        """The API's error codes come out as their exception classes."""
        task_id = send_task("y")
        job = new_client().claim(wait=10)
        assert job is not None
        self.assertEqual(job.task_id, task_id)
        job.post(relay_worker.status_event("working"), key="key-1")
        with self.assertRaises(relay_worker.IdempotencyKeyReused) as cm:
            job.post(relay_worker.status_event("working", "other"), key="key-1")
        self.assertEqual((cm.exception.status, cm.exception.code), (422, "idempotency_key_reused"))
        self.assertIsNone(job.reason, "a refused key ended the job")
        with self.assertRaises(relay_worker.BadRequest):
            job.post(relay_worker.status_event("working"), key="no spaces allowed")
        with self.assertRaises(relay_worker.InvalidTransition):
            job.status("submitted")
        self.assertTrue(job.complete().released)
        with self.assertRaises(relay_worker.JobDone):
            job.status("working")  # the job ended: refused without a request
        with self.assertRaises(relay_worker.Unauthorized):
            relay_worker.Client(RELAY_URL, "not-a-worker-token", QUEUE).claim(wait=0)
        with self.assertRaises(relay_worker.BadRequest):
            relay_worker.Client(RELAY_URL, TOKEN, "bad queue").claim(wait=0)


class ClaimFields(unittest.TestCase):
    """The claim's fields, without relay."""

    def test_owner(self) -> None:
        c = relay_worker.Client("http://127.0.0.1:1", "t" * 16)
        claim = {"taskId": "t1", "contextId": "c1", "leaseId": "l1", "leaseSeconds": 30, "attempt": 1,
                 "message": {"parts": [{"text": "a"}, {"data": {}}, {"text": "b"}]}}
        self.assertIsNone(relay_worker.Job(c, claim).owner)
        job = relay_worker.Job(c, {**claim, "owner": "alice"})
        self.assertEqual((job.owner, job.context_id), ("alice", "c1"))
        self.assertEqual(job.text, "a\nb")


def start_example(step_seconds: float) -> subprocess.Popen[str]:
    env = {**os.environ, "RELAY_URL": RELAY_URL, "RELAY_WORKER_TOKEN": TOKEN, "RELAY_QUEUE": QUEUE,
           "WORKER_STEP_SECONDS": str(step_seconds), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, EXAMPLE], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def stop(proc: subprocess.Popen[str]) -> None:
    """Kills the example if it is still running (a failed test)."""
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


class LosingProxy:
    """A loopback HTTP proxy to relay that can lose answers: the request
    reaches relay and is applied, and the connection closes before the
    answer. It records the Idempotency-Key of every event post."""

    def __init__(self, target: str) -> None:
        u = urllib.parse.urlsplit(target)
        self._target = (u.hostname or "127.0.0.1", u.port or 80)
        self._lock = threading.Lock()
        self._lose = 0
        self._keys: list[str] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server spelling)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn = http.client.HTTPConnection(*proxy._target, timeout=90)
                try:
                    conn.request("POST", self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                    answer = resp.read()
                finally:
                    conn.close()
                lose = False
                if self.path.endswith("/events"):
                    with proxy._lock:
                        proxy._keys.append(self.headers.get("Idempotency-Key") or "")
                        if proxy._lose > 0:
                            proxy._lose, lose = proxy._lose - 1, True
                if lose:
                    self.close_connection = True  # no answer: the connection just closes
                    return
                self.send_response(resp.status)
                for k in ("Content-Type", "Retry-After", "Idempotent-Replayed"):
                    if resp.getheader(k):
                        self.send_header(k, resp.getheader(k) or "")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *_args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def lose_next_answers(self, n: int) -> None:
        with self._lock:
            self._lose = n

    @property
    def keys(self) -> list[str]:
        with self._lock:
            return list(self._keys)

    def __enter__(self) -> LosingProxy:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


if __name__ == "__main__":
    unittest.main()
