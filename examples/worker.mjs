// A relay worker in plain Node 18+ (global fetch, no dependencies): it claims
// tasks from a queue, reports three "working" updates, streams the upper-cased
// input text as an artifact in two chunks, and completes the task. It stops
// working on a task the client cancels (heartbeat "canceled": true, or a 409
// on a post); Ctrl-C releases the task in hand and exits.
//
//   RELAY_WORKER_TOKEN=dev-worker-token-123 RELAY_QUEUE=jobs node examples/worker.mjs
//
// The API is described in docs/worker-api.md.

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

const RELAY_URL = (process.env.RELAY_URL || 'http://localhost:8080').replace(/\/+$/, '');
const TOKEN = process.env.RELAY_WORKER_TOKEN;
const QUEUE = process.env.RELAY_QUEUE || 'default';
const WORKER_ID = `${hostname()}-${process.pid}`;
if (!TOKEN) {
  console.error('set RELAY_WORKER_TOKEN to one of the relay\'s RELAY_WORKER_TOKENS');
  process.exit(2);
}

const log = (...args) => console.log(new Date().toISOString(), ...args);

// Ctrl-C (or SIGTERM) aborts `shutdown`; a second Ctrl-C kills the process.
const shutdown = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => shutdown.abort(new Error('shutting down')));

class ApiError extends Error {
  constructor(status, body, retryAfter) {
    super(`HTTP ${status} ${body.code ?? ''}: ${body.error ?? ''}`);
    this.status = status;
    this.code = body.code;
    this.retryAfter = Number(retryAfter) || 0; // seconds
  }
}

// api POSTs a JSON body to the worker API: the answer's JSON, null for 204,
// an ApiError for an error answer ({"error", "code"}). idempotencyKey, when
// given, goes in the Idempotency-Key header.
async function api(path, body, signal, idempotencyKey) {
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  const res = await fetch(RELAY_URL + path, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal,
  });
  if (res.status === 204) return null;
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, data, res.headers.get('retry-after'));
  return data;
}

// sleep waits ms milliseconds; it rejects with the reason when signal aborts.
const sleep = (ms, signal) => new Promise((resolve, reject) => {
  if (signal.aborted) return reject(signal.reason);
  const timer = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
});

// v1.0 events (taskId may be left out: the URL names the task).
const status = (state, text) => ({ statusUpdate: { status: { state,
  message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text }] } } } });
const chunk = (text, append, lastChunk) => ({ artifactUpdate: {
  artifact: { artifactId: 'result', parts: [{ text }] }, append, lastChunk } });

// postEvents posts events under one Idempotency-Key (a new one per post).
// When the answer does not come (network error, 429, 502, 503, 504), it
// sends the same body again under the same key, a few times with backoff:
// the relay commits the events once, and a retry gets the first answer.
async function postEvents(taskId, leaseId, events) {
  const key = randomUUID();
  const body = { leaseId, events };
  for (let attempt = 1; ; attempt++) {
    try {
      return await api(`/v1/tasks/${taskId}/events`, body, undefined, key);
    } catch (err) {
      const transient = !(err instanceof ApiError) || [429, 502, 503, 504].includes(err.status);
      if (!transient || attempt >= 5) throw err;
      const delay = Math.max(250 * 2 ** attempt * (0.5 + Math.random() / 2), err.retryAfter * 1000 || 0);
      log(`task ${taskId}: post failed (${err.message}); sending it again in ${Math.round(delay)} ms`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

async function work(claim) {
  const { taskId, leaseId } = claim;
  const post = (...events) => postEvents(taskId, leaseId, events);
  log(`task ${taskId}: claimed (attempt ${claim.attempt})`);

  // `stop` aborts when the client cancels, the lease is lost, or on Ctrl-C.
  const stop = new AbortController();
  const onShutdown = () => stop.abort(shutdown.signal.reason);
  shutdown.signal.addEventListener('abort', onShutdown, { once: true });
  const heartbeat = setInterval(async () => {
    try {
      const beat = await api(`/v1/tasks/${taskId}/heartbeat`, { leaseId });
      if (beat.canceled) stop.abort(new Error('canceled by the client'));
    } catch (err) {
      if (err.status === 409) stop.abort(err); // lease_lost, task_canceled
      else log(`task ${taskId}: heartbeat failed: ${err.message}`);
    }
  }, claim.leaseSeconds * 1000 / 3);

  try {
    const input = (claim.message?.parts ?? []).filter((p) => 'text' in p).map((p) => p.text).join('\n');
    for (let step = 1; step <= 3; step++) {
      await post(status('TASK_STATE_WORKING', `step ${step} of 3`));
      await sleep(500, stop.signal);
    }
    const out = [...input.toUpperCase()]; // split on characters, not UTF-16 units
    const half = Math.floor(out.length / 2);
    await post(chunk(out.slice(0, half).join(''), false, false));
    await post(chunk(out.slice(half).join(''), true, true));
    await post(status('TASK_STATE_COMPLETED', 'done'));
    log(`task ${taskId}: completed`);
  } catch (err) {
    if (err.status === 409) {
      log(`task ${taskId}: ${err.code}, stopping`); // canceled, lease lost or finished
    } else if (shutdown.signal.aborted) {
      await api(`/v1/tasks/${taskId}/release`, { leaseId })
        .then(() => log(`task ${taskId}: released`), (e) => log(`task ${taskId}: release failed: ${e.message}`));
    } else if (stop.signal.aborted) {
      log(`task ${taskId}: ${stop.signal.reason.message}, stopping`);
    } else {
      log(`task ${taskId}: failing: ${err.message}`);
      await post(status('TASK_STATE_FAILED', err.message)).catch((e) => log(`task ${taskId}: ${e.message}`));
    }
  } finally {
    clearInterval(heartbeat);
    shutdown.signal.removeEventListener('abort', onShutdown);
  }
}

log(`worker ${WORKER_ID}: claiming from queue "${QUEUE}" at ${RELAY_URL}`);
let failures = 0;
while (!shutdown.signal.aborted) {
  let claim;
  try {
    claim = await api(`/v1/queues/${encodeURIComponent(QUEUE)}/claim`,
      { workerId: WORKER_ID, waitSeconds: 30 }, shutdown.signal);
    failures = 0;
  } catch (err) {
    if (shutdown.signal.aborted) break;
    if (err.status >= 400 && err.status < 500) { // bad token, bad queue name: retrying cannot help
      console.error(`claim refused: ${err.message}`);
      process.exitCode = 1;
      break;
    }
    const backoff = Math.min(30_000, 500 * 2 ** failures++) * (0.5 + Math.random() / 2);
    const delay = Math.max(backoff, err.retryAfter * 1000 || 0);
    log(`claim failed (${err.message}); retrying in ${Math.round(delay)} ms`);
    await sleep(delay, shutdown.signal).catch(() => {});
    continue;
  }
  if (claim) await work(claim);
}
log('bye');
