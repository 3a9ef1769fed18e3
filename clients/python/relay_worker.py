"""A client of relay's worker API (docs/worker-api.md), standard library only.

Agents that pull relay's tasks from a queue over plain HTTP use it to claim a
task, heartbeat in the background to keep the lease, post status updates and
artifact chunks, end the task with a final state, and release it on shutdown.
It speaks the v1.0 shapes of the API (``A2A-Version: 1.0``): states go on the
wire as ``TASK_STATE_*`` names, roles as ``ROLE_*``. Python 3.11 or later.

:meth:`Client.run` is the whole loop::

    import os, relay_worker

    def handle(job: relay_worker.Job) -> None:
        job.status("working", "reading the input")
        job.wait(1.0)                      # raises when the job was taken away
        job.artifact("result", job.text.upper(), last_chunk=True)
        job.complete("done")

    client = relay_worker.Client("http://localhost:8080",
                                 os.environ["RELAY_WORKER_TOKEN"], queue="jobs")
    client.run(handle)                     # until SIGINT or SIGTERM

``run`` claims tasks one at a time and calls the handler with a :class:`Job`
whose lease a background thread keeps alive. The heartbeats notice when the
client cancels the task or the lease is lost: ``job.stopped`` is then set,
and ``job.check()``, ``job.wait()`` and the next post raise the reason
(:class:`TaskCanceled`, :class:`LeaseLost`, ...). When the handler returns or
raises while the job still holds the lease, ``run`` fails the task with the
error as status text; on SIGINT or SIGTERM it releases the task instead, so
that another worker takes it at once, and returns.

Every event post carries an ``Idempotency-Key`` (a new UUID per post, or the
caller's). A post whose answer is lost (a connection error, an unreadable
answer, 429, 502, 503 or 504) is sent again under the same key and with the
same body, up to :data:`POST_ATTEMPTS` times with backoff: relay commits its
events once, and a retry gets the first answer.

Claims carry the task's ``owner`` (the client that sent it) when the relay
reports one: keep any per-context memory under ``(job.owner, job.context_id)``,
never under the context id alone, so that two tenants' contexts never mix.
"""

from __future__ import annotations

import _thread
import http.client
import json
import logging
import os
import random
import signal
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "POST_ATTEMPTS",
    "APIError",
    "BadRequest",
    "Client",
    "IdempotencyKeyReused",
    "InvalidTransition",
    "Job",
    "JobDone",
    "JobStopped",
    "LeaseLost",
    "NotFound",
    "PostResult",
    "RelayError",
    "ShuttingDown",
    "TaskCanceled",
    "TaskFinished",
    "TransportError",
    "Unauthorized",
    "Unavailable",
    "artifact_event",
    "new_idempotency_key",
    "status_event",
]

log = logging.getLogger("relay_worker")

#: How many times a post whose answer is lost is sent in all (like the Go package).
POST_ATTEMPTS = 5

#: Statuses whose answer says "not now": the same request may succeed later.
TRANSIENT_STATUSES = frozenset({429, 502, 503, 504})

_MAX_WAIT_SECONDS = 60.0
_CLAIM_SLACK = 15.0  # added to a claim's wait for its socket timeout


# ---------------------------------------------------------------- errors


class RelayError(Exception):
    """Base of every error this module raises."""


class JobStopped(RelayError):
    """The worker no longer holds (or must stop working on) the job.

    Raised by :meth:`Job.check`, :meth:`Job.wait` and posts once the job
    ended; it is also the type of :attr:`Job.reason`.
    """


class JobDone(JobStopped):
    """This worker ended the job itself: it posted a final or interrupted
    state (relay answered ``"released": true``) or released the task."""


class ShuttingDown(JobStopped):
    """The worker is shutting down (:meth:`Client.shutdown`, SIGINT or
    SIGTERM): stop working; :meth:`Client.run` releases the task."""


class TransportError(RelayError):
    """No answer could be read from relay (connection refused or cut,
    timeout, an answer cut short). A post may or may not have been applied;
    posts are sent again under their key before this is raised."""


class APIError(RelayError):
    """An error answer of the worker API: ``{"error": message, "code": code}``
    with HTTP status ``status``. Subclasses name the documented codes."""

    def __init__(self, status: int, code: str, message: str, retry_after: float = 0.0) -> None:
        super().__init__(f"relay worker API: HTTP {status} {code}: {message}" if code
                         else f"relay worker API: HTTP {status}: {message}")
        #: HTTP status, e.g. 409.
        self.status = status
        #: The API's code, e.g. ``"lease_lost"``; empty if the body was not the API's JSON.
        self.code = code
        #: The human-readable ``error`` field (or the start of the body).
        self.message = message
        #: ``Retry-After`` in seconds (of a 503 or 429), 0 if none.
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        """Whether the same request may succeed later (429, 502, 503, 504)."""
        return self.status in TRANSIENT_STATUSES


class BadRequest(APIError):
    """400 ``bad_request``: the body, an event or the Idempotency-Key is malformed."""


class Unauthorized(APIError):
    """401 ``unauthorized``: missing or unknown worker token."""


class NotFound(APIError, JobStopped):
    """404 ``not_found``: no such task, or a lease relay never issued."""


class LeaseLost(APIError, JobStopped):
    """409 ``lease_lost``: the lease is over (expired and taken by another
    worker, or this worker already ended the turn). Stop working on the task."""


class TaskCanceled(APIError, JobStopped):
    """409 ``task_canceled`` (or a heartbeat answering ``"canceled": true``):
    the client canceled the task. Stop working on it."""


class TaskFinished(APIError, JobStopped):
    """409 ``task_finished``: the task already reached a final state."""


class InvalidTransition(APIError):
    """422 ``invalid_transition``: the event breaks the task state machine."""


class IdempotencyKeyReused(APIError):
    """422 ``idempotency_key_reused``: the key was first sent with other
    events or another lease; nothing was committed. A new post needs a new key."""


class Unavailable(APIError):
    """503 ``unavailable``: relay cannot do it now; retry after ``retry_after``."""


_ERRORS_BY_CODE: dict[str, type[APIError]] = {
    "bad_request": BadRequest,
    "unauthorized": Unauthorized,
    "not_found": NotFound,
    "lease_lost": LeaseLost,
    "task_canceled": TaskCanceled,
    "task_finished": TaskFinished,
    "invalid_transition": InvalidTransition,
    "idempotency_key_reused": IdempotencyKeyReused,
    "unavailable": Unavailable,
}

_ERRORS_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequest,
    401: Unauthorized,
    404: NotFound,
    503: Unavailable,
}


def _api_error(status: int, body: bytes, retry_after: str | None) -> APIError:
    """Builds the APIError subclass of an error answer."""
    code, message = "", ""
    try:
        wire = json.loads(body)
        if isinstance(wire, dict):
            code = str(wire.get("code") or "")
            message = str(wire.get("error") or "")
    except ValueError:
        pass
    if not code and not message:
        message = body[:200].decode("utf-8", "replace").strip() or http.client.responses.get(status, "")
    try:
        after = max(float(retry_after or 0), 0.0)
    except ValueError:
        after = 0.0
    cls = _ERRORS_BY_CODE.get(code) or _ERRORS_BY_STATUS.get(status, APIError)
    return cls(status, code, message, after)


# ---------------------------------------------------------------- events


def _wire_state(state: str) -> str:
    """Spells a state as its v1.0 name: ``"input-required"`` becomes
    ``"TASK_STATE_INPUT_REQUIRED"``; ``TASK_STATE_*`` names pass unchanged."""
    s = state.strip().replace("-", "_").upper()
    if s in ("CANCELLED", "TASK_STATE_CANCELLED"):
        s = "CANCELED"
    return s if s.startswith("TASK_STATE_") else "TASK_STATE_" + s


_ENDS_LEASE = frozenset(_wire_state(s) for s in (
    "completed", "failed", "rejected", "canceled", "input-required", "auth-required"))


def new_idempotency_key() -> str:
    """A new idempotency key (a random UUID)."""
    return str(uuid.uuid4())


def status_event(state: str, text: str | None = None, *, message_id: str | None = None) -> dict[str, Any]:
    """A v1.0 ``statusUpdate`` event. ``state`` is a state name such as
    ``"working"``, ``"completed"``, ``"input-required"``, or a
    ``TASK_STATE_*`` name; ``text``, when given, becomes the status message
    (role ``ROLE_AGENT``). The task id is left out: the URL names the task."""
    status: dict[str, Any] = {"state": _wire_state(state)}
    if text is not None:
        status["message"] = {"messageId": message_id or str(uuid.uuid4()), "role": "ROLE_AGENT",
                             "parts": [{"text": text}]}
    return {"statusUpdate": {"status": status}}


def artifact_event(artifact_id: str, text: str | None = None, *, append: bool = False,
                   last_chunk: bool = False, parts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A v1.0 ``artifactUpdate`` event: one chunk of the artifact
    ``artifact_id``, the text ``text`` (or the v1.0 ``parts`` given).
    ``append=True`` appends the chunk's parts to the artifact (False starts or
    replaces it); ``last_chunk=True`` marks the artifact complete."""
    if parts is None:
        parts = [{"text": text or ""}]
    return {"artifactUpdate": {"artifact": {"artifactId": artifact_id, "parts": parts},
                               "append": append, "lastChunk": last_chunk}}


# ---------------------------------------------------------------- client


class PostResult:
    """The answer to an event post."""

    def __init__(self, answer: Mapping[str, Any], replayed: bool) -> None:
        #: The task's state after the post (v1.0 name).
        self.state: str = str(answer.get("state") or "")
        #: True when the post ended this worker's lease (a final or interrupted state).
        self.released: bool = bool(answer.get("released"))
        #: The renewed lease's expiry (RFC 3339), None when released.
        self.lease_expires_at: str | None = answer.get("leaseExpiresAt")
        #: True when relay answered a post it had already committed under the same key.
        self.replayed = replayed

    def __repr__(self) -> str:
        return f"PostResult(state={self.state!r}, released={self.released}, replayed={self.replayed})"


class Client:
    """Talks to one relay's worker API on behalf of one queue.

    ``base_url`` is the relay's address (``http://localhost:8080``),
    ``token`` a worker token (one of relay's ``RELAY_WORKER_TOKENS``).
    ``worker_id`` names this worker in relay's logs (default
    ``<hostname>-<pid>``). ``timeout`` bounds each post, heartbeat and
    release (seconds). ``heartbeat_interval`` overrides the rhythm of the
    heartbeats (default: a third of the lease). ``claim_wait`` is how long
    each claim of :meth:`run` waits for a task (at most 60 s).
    ``retry_backoff`` is the first wait before a post is sent again; it
    doubles on each try (with jitter), and a ``Retry-After`` is honoured.

    Requests go through ``urllib.request`` with the default opener (which
    honours the ``http_proxy`` and ``no_proxy`` environment variables), or
    through ``opener`` when given.
    """

    def __init__(self, base_url: str, token: str, queue: str = "default", *,
                 worker_id: str | None = None, timeout: float = 30.0,
                 heartbeat_interval: float | None = None, claim_wait: float = 30.0,
                 retry_backoff: float = 0.25, post_attempts: int = POST_ATTEMPTS,
                 opener: urllib.request.OpenerDirector | None = None) -> None:
        if not token:
            raise ValueError("relay_worker: a worker token is required")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.queue = queue
        self.worker_id = worker_id or f"{socket.gethostname() or 'worker'}-{os.getpid()}"
        self.timeout = timeout
        self.heartbeat_interval = heartbeat_interval
        self.claim_wait = min(max(claim_wait, 0.0), _MAX_WAIT_SECONDS)
        self.retry_backoff = retry_backoff
        self.post_attempts = max(post_attempts, 1)
        self._opener = opener or urllib.request.build_opener()
        self._shutdown = threading.Event()
        self._lock = threading.Lock()
        self._jobs: set[Job] = set()
        self._claiming = False  # read by the signal handler: the main thread waits in a claim
        self._signaled = False  # set by the signal handler (which must not take locks)

    # -- plumbing

    def _request(self, path: str, body: Mapping[str, Any], timeout: float,
                 key: str | None = None) -> tuple[int, dict[str, Any] | None, bool]:
        """POSTs a JSON body. Returns (status, decoded answer or None for 204,
        whether relay replayed a keyed post). Raises an APIError for an error
        answer and TransportError when no answer could be read."""
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                   "Accept": "application/json", "A2A-Version": "1.0"}
        if key is not None:
            headers["Idempotency-Key"] = key
        req = urllib.request.Request(self.base_url + path, data=json.dumps(body).encode(),
                                     headers=headers, method="POST")
        try:
            with self._opener.open(req, timeout=timeout) as resp:
                status = resp.status
                raw = resp.read()
                replayed = (resp.headers.get("Idempotent-Replayed") or "").lower() == "true"
        except urllib.error.HTTPError as e:
            try:
                raw = e.read()
            except (OSError, http.client.HTTPException):
                raw = b""
            raise _api_error(e.code, raw, e.headers.get("Retry-After") if e.headers else None) from None
        except (OSError, http.client.HTTPException) as e:  # URLError is an OSError
            raise TransportError(f"relay_worker: POST {path}: {e!r}") from e
        if status == 204:
            return status, None, replayed
        try:
            answer = json.loads(raw) if raw else {}
        except ValueError as e:
            raise TransportError(f"relay_worker: POST {path}: unreadable answer: {e}") from e
        if not isinstance(answer, dict):
            raise TransportError(f"relay_worker: POST {path}: the answer is not a JSON object")
        return status, answer, replayed

    def _backoff(self, attempt: int, retry_after: float = 0.0) -> float:
        """The wait before try attempt+2: exponential, equal jitter, capped at 30 s."""
        d = min(self.retry_backoff * (2 ** attempt), 30.0)
        return max(d / 2 + random.uniform(0, d / 2), retry_after)

    # -- operations

    def claim(self, wait: float = 30.0) -> Job | None:
        """Claims the next task of the queue, waiting up to ``wait`` seconds
        (0 to 60) for one. Returns None when no task came: claim again. The
        returned job holds the lease; start its heartbeats with
        :meth:`Job.keep_alive` (``run`` does)."""
        answer = self._claim_answer(wait)
        return None if answer is None else Job(self, answer)

    def _claim_answer(self, wait: float) -> dict[str, Any] | None:
        """The claim request: its answer, None for no task."""
        wait = min(max(wait, 0.0), _MAX_WAIT_SECONDS)
        path = f"/v1/queues/{urllib.parse.quote(self.queue, safe='')}/claim"
        _, answer, _ = self._request(path, {"workerId": self.worker_id, "waitSeconds": wait},
                                     timeout=wait + _CLAIM_SLACK)
        if answer is not None and (not answer.get("taskId") or not answer.get("leaseId")):
            raise TransportError("relay_worker: claim answer without taskId or leaseId")
        return answer

    def shutdown(self) -> None:
        """Asks :meth:`run` to stop: the jobs in hand are stopped with
        :class:`ShuttingDown` (their heartbeats end), ``run`` releases them
        and returns once its current claim ends. Safe from any thread."""
        self._shutdown.set()
        with self._lock:
            jobs = list(self._jobs)
        for job in jobs:
            job._stop(ShuttingDown("relay_worker: shutting down"))

    @property
    def shutting_down(self) -> bool:
        """Whether :meth:`shutdown` was called (or a signal received)."""
        return self._signaled or self._shutdown.is_set()

    def run(self, handler: Callable[[Job], None], *, handle_signals: bool = True) -> None:
        """Claims tasks one after the other and calls ``handler(job)`` for
        each, until :meth:`shutdown` (or SIGINT/SIGTERM, with
        ``handle_signals`` in the main thread).

        While the handler runs, a background thread heartbeats the lease and
        stops the job when the client cancels the task or the lease is lost.
        After the handler returns or raises, while the job still holds the
        lease: when shutting down, the task is released (another worker takes
        it at once); otherwise it is failed with the handler's error as
        status text (or "worker returned without ending the task").

        The first SIGINT or SIGTERM stops the job in hand (the handler sees
        :class:`ShuttingDown` from ``job.wait``, ``job.check`` and posts) and
        interrupts a claim that is waiting; a second one acts as if no
        handler were installed (kills the process). Failed claims are retried
        with capped exponential backoff; :class:`Unauthorized` and other 4xx
        answers to a claim are raised (retrying cannot help).
        """
        restore = self._install_signals() if handle_signals else None
        try:
            failures = 0
            while not self.shutting_down:
                try:
                    # The signal handler raises _ClaimInterrupted only while
                    # _claiming is set: in the request, before a lease is known.
                    self._claiming = True
                    answer = None if self.shutting_down else self._claim_answer(self.claim_wait)
                    self._claiming = False
                except (APIError, TransportError) as e:
                    self._claiming = False
                    if isinstance(e, APIError) and 400 <= e.status < 500 and e.status not in (408, 429):
                        raise
                    d = self._backoff(failures + 1, e.retry_after if isinstance(e, APIError) else 0.0)
                    failures += 1
                    log.warning("claim failed (%s); retrying in %.1f s", e, d)
                    self._shutdown.wait(d)
                    continue
                finally:
                    self._claiming = False
                failures = 0
                if answer is not None:
                    self._work(Job(self, answer), handler)
        except _ClaimInterrupted:
            # A signal while the claim waited: relay takes back a task it was
            # handing out as the connection closed.
            pass
        finally:
            if restore is not None:
                restore()

    def _work(self, job: Job, handler: Callable[[Job], None]) -> None:
        """Runs handler on a claimed job and settles the job afterwards."""
        log.info("task %s: claimed (attempt %d)", job.task_id, job.attempt)
        err: BaseException | None = None
        with job.keep_alive():
            try:
                handler(job)
            except Exception as e:  # the handler's failure fails the task, below
                err = e
        reason = job.reason
        if isinstance(reason, JobDone):
            log.info("task %s: done", job.task_id)
        elif reason is not None and not isinstance(reason, ShuttingDown):
            log.info("task %s: taken away (%s)", job.task_id, reason)
        elif self.shutting_down:
            try:
                job.release()
                log.info("task %s: released (shutting down)", job.task_id)
            except RelayError as e:
                log.warning("task %s: release failed: %s", job.task_id, e)
        else:
            text = str(err) if err is not None else "worker returned without ending the task"
            log.warning("task %s: handler failed, failing the task: %s", job.task_id, text)
            try:
                job.fail(text)
            except RelayError as e:
                log.warning("task %s: failing the task failed: %s", job.task_id, e)

    def _install_signals(self) -> Callable[[], None] | None:
        """Installs the SIGINT/SIGTERM handlers of run (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            return None
        sigs = [signal.SIGINT, signal.SIGTERM]
        previous = {s: signal.getsignal(s) for s in sigs}

        def restore() -> None:
            for s, h in previous.items():
                signal.signal(s, h)

        def on_signal(signum: int, _frame: object) -> None:
            restore()  # a second signal acts as if this handler were not there
            self._signaled = True
            log.info("signal %d: shutting down", signum)
            # shutdown takes locks the interrupted main thread may hold: it
            # runs in a thread of its own rather than in this handler.
            _thread.start_new_thread(self.shutdown, ())
            if self._claiming:
                raise _ClaimInterrupted()

        for s in sigs:
            signal.signal(s, on_signal)
        return restore

    def _track(self, job: Job, held: bool) -> None:
        with self._lock:
            if held:
                self._jobs.add(job)
            else:
                self._jobs.discard(job)
        if held and self.shutting_down:
            job._stop(ShuttingDown("relay_worker: shutting down"))


class _ClaimInterrupted(BaseException):
    """Raised by the signal handler into a waiting claim."""


class Job:
    """A claimed task: this worker holds its lease until it ends the task,
    releases it, or relay takes it away (cancel, lease lost).

    ``job.stopped`` (a :class:`threading.Event`) is set once the job ended,
    and ``job.reason`` says why: :class:`JobDone`, :class:`TaskCanceled`,
    :class:`LeaseLost`, :class:`TaskFinished`, :class:`NotFound` or
    :class:`ShuttingDown`. Its methods are safe to call from several threads.
    """

    def __init__(self, client: Client, claim: Mapping[str, Any]) -> None:
        self._client = client
        #: The whole claim answer, as decoded.
        self.raw: dict[str, Any] = dict(claim)
        #: The claimed task's id.
        self.task_id: str = str(claim["taskId"])
        #: The task's context (conversation) id.
        self.context_id: str = str(claim.get("contextId") or "")
        #: The task's owner (the client it belongs to; "" when relay runs
        #: without client authentication), None from a relay too old to
        #: report it. Key per-context memory by (owner, context_id).
        self.owner: str | None = claim.get("owner") if isinstance(claim.get("owner"), str) else None
        #: This worker's lease; every request about the task carries it.
        self.lease_id: str = str(claim["leaseId"])
        #: When the lease granted by the claim expires (RFC 3339).
        self.lease_expires_at: str = str(claim.get("leaseExpiresAt") or "")
        #: The lease length in seconds; posts and heartbeats renew it.
        self.lease_seconds: float = float(claim.get("leaseSeconds") or 30.0)
        #: How many times the task was handed out: above 1, a previous worker
        #: lost its lease and the task may hold some of its events.
        self.attempt: int = int(claim.get("attempt") or 1)
        #: The task as it stands, with its history (v1.0 shape).
        self.task: dict[str, Any] = claim.get("task") or {}
        #: The message that prompted this claim (the latest user message).
        self.message: dict[str, Any] = claim.get("message") or {}
        #: Set once the job ended; see :attr:`reason`.
        self.stopped = threading.Event()
        self._reason: JobStopped | None = None
        self._lock = threading.Lock()
        client._track(self, True)

    def __repr__(self) -> str:
        return f"Job(task_id={self.task_id!r}, attempt={self.attempt}, reason={self._reason!r})"

    @property
    def text(self) -> str:
        """The text parts of :attr:`message`, joined with newlines."""
        parts = self.message.get("parts") or []
        return "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))

    @property
    def reason(self) -> JobStopped | None:
        """None while this worker holds the lease; why the job ended afterwards."""
        with self._lock:
            return self._reason

    def _stop(self, reason: JobStopped, over_shutdown: bool = False) -> None:
        """Records why the job ended (the first reason wins, but with
        over_shutdown a release's JobDone replaces ShuttingDown)."""
        with self._lock:
            if self._reason is not None and not (over_shutdown and isinstance(self._reason, ShuttingDown)):
                return
            self._reason = reason
        self.stopped.set()
        self._client._track(self, False)

    def check(self) -> None:
        """Raises :attr:`reason` if the job ended (canceled, lease lost,
        shutting down, done); returns otherwise."""
        reason = self.reason
        if reason is not None:
            raise reason

    def wait(self, seconds: float) -> None:
        """Sleeps ``seconds``, or raises :attr:`reason` as soon as the job ends."""
        if self.stopped.wait(seconds):
            self.check()

    # -- requests

    def _path(self, op: str) -> str:
        return f"/v1/tasks/{urllib.parse.quote(self.task_id, safe='')}/{op}"

    def _ended_by(self, err: BaseException) -> None:
        """Stops the job when err says this worker no longer holds the task."""
        if isinstance(err, JobStopped):
            self._stop(err)

    def post(self, *events: Mapping[str, Any], key: str | None = None) -> PostResult:
        """Posts events (see :func:`status_event`, :func:`artifact_event`),
        committed atomically, in order, or not at all; the post renews the
        lease.

        The post carries ``Idempotency-Key: key`` (default: a new UUID). When
        its answer is lost (connection error, unreadable answer, 429, 502,
        503, 504) it is sent again, same key and same body, up to
        ``post_attempts`` times in all with backoff; relay commits it once.
        A worker that retries a post itself (after this raised, or across
        its own restart while it holds the lease) passes the same key and
        the same events. A final or interrupted state ends the job
        (:class:`JobDone`).

        Raises :attr:`reason` without sending when the job already ended,
        :class:`TaskCanceled`, :class:`LeaseLost`, ... (which end the job),
        :class:`InvalidTransition`, :class:`IdempotencyKeyReused`,
        :class:`BadRequest`, and :class:`TransportError` or a transient
        APIError when every try failed.
        """
        self.check()
        key = key or new_idempotency_key()
        body = {"leaseId": self.lease_id, "events": list(events)}
        c = self._client
        for attempt in range(c.post_attempts):
            try:
                _, answer, replayed = c._request(self._path("events"), body, c.timeout, key=key)
                break
            except (TransportError, APIError) as e:
                retry = isinstance(e, TransportError) or e.transient
                if not retry or attempt + 1 >= c.post_attempts:
                    self._ended_by(e)
                    raise
                d = c._backoff(attempt, e.retry_after if isinstance(e, APIError) else 0.0)
                log.warning("task %s: post failed (%s); sending it again in %.2f s under the same key",
                            self.task_id, e, d)
                time.sleep(d)
        result = PostResult(answer or {}, replayed)
        state = _wire_state(result.state) if result.state else ""
        if state == "TASK_STATE_CANCELED":
            self._stop(TaskCanceled(200, "task_canceled", "the client canceled the task"))
        elif result.released or state in _ENDS_LEASE:
            self._stop(JobDone(f"relay_worker: task {self.task_id} is {state or 'released'}"))
        return result

    def status(self, state: str, text: str | None = None) -> PostResult:
        """Posts a status update (see :func:`status_event`). A final state
        (``completed``, ``failed``, ``rejected``) or an interrupted one
        (``input-required``, ``auth-required``) ends the job."""
        return self.post(status_event(state, text))

    def artifact(self, artifact_id: str, text: str | None = None, *, append: bool = False,
                 last_chunk: bool = False, parts: list[dict[str, Any]] | None = None) -> PostResult:
        """Posts one chunk of an artifact (see :func:`artifact_event`)."""
        return self.post(artifact_event(artifact_id, text, append=append, last_chunk=last_chunk, parts=parts))

    def complete(self, text: str | None = None) -> PostResult:
        """Ends the task as completed, with ``text`` as the final status message."""
        return self.status("completed", text)

    def fail(self, text: str | None = None) -> PostResult:
        """Ends the task as failed, with ``text`` as the final status message."""
        return self.status("failed", text)

    def heartbeat(self) -> bool:
        """Renews the lease. Returns True (and stops the job with
        :class:`TaskCanceled`) when the client canceled the task; raises
        :class:`LeaseLost` (stopping the job) when another worker has it."""
        try:
            _, answer, _ = self._client._request(self._path("heartbeat"), {"leaseId": self.lease_id},
                                                 self._client.timeout)
        except TaskCanceled as e:
            self._stop(e)
            return True
        except APIError as e:
            self._ended_by(e)
            raise
        answer = answer or {}
        state = _wire_state(str(answer.get("state") or "working"))
        if answer.get("canceled") or state == "TASK_STATE_CANCELED":
            self._stop(TaskCanceled(200, "task_canceled", "the client canceled the task"))
            return True
        if state in _ENDS_LEASE:
            self._stop(TaskFinished(200, "task_finished", f"the task is {state}"))
        else:
            self.lease_expires_at = str(answer.get("leaseExpiresAt") or self.lease_expires_at)
        return False

    def release(self) -> None:
        """Gives the task back unfinished (the worker is shutting down):
        relay offers it to the next claim at once instead of after the lease
        expires. The job ends (:class:`JobDone`). Does nothing when the job
        already ended other than by a shutdown."""
        reason = self.reason
        if reason is not None and not isinstance(reason, ShuttingDown):
            return
        try:
            self._client._request(self._path("release"), {"leaseId": self.lease_id}, self._client.timeout)
        except APIError as e:
            self._ended_by(e)
            raise
        self._stop(JobDone(f"relay_worker: task {self.task_id} released"), over_shutdown=True)

    def keep_alive(self) -> _KeepAlive:
        """Heartbeats the lease in a background thread until the job ends
        (or the ``with`` block is left), every ``heartbeat_interval`` (a third
        of the lease by default). A heartbeat that says the task was canceled
        or the lease lost stops the job. Failed heartbeats (network, 503) are
        retried sooner and logged. Use as a context manager::

            with job.keep_alive():
                ...  # work, checking job.stopped / job.check()
        """
        return _KeepAlive(self)


class _KeepAlive:
    """The heartbeat thread of one job (see :meth:`Job.keep_alive`)."""

    def __init__(self, job: Job) -> None:
        self._job = job
        self._done = threading.Event()
        c = job._client
        self._interval = max(c.heartbeat_interval or job.lease_seconds / 3, 0.05)
        self._thread = threading.Thread(target=self._loop, name=f"relay-heartbeat-{job.task_id}", daemon=True)

    def __enter__(self) -> _KeepAlive:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _loop(self) -> None:
        job, wait = self._job, self._interval
        while not self._done.wait(wait) and not job.stopped.is_set():
            wait = self._interval
            try:
                job.heartbeat()
            except RelayError as e:
                if not job.stopped.is_set():
                    log.warning("task %s: heartbeat failed: %s", job.task_id, e)
                    wait = max(self._interval / 3, 0.05)
