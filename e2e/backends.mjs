#!/usr/bin/env node
// End-to-end checks of relay's agent backends and client tenancy, with the official A2A JS SDK
// (a2a-v1 = @a2a-js/sdk@1.3.0). Unlike clients.mjs, this script starts its own relay processes
// (embedded store, loopback only, free ports) and stops them at the end, also on failure:
//
//   1. worker backend: workers written with plain fetch() exactly as the README's curl example,
//      a lease that expires and goes to a second worker (attempt 2), signed push to a webhook in
//      this script, then examples/worker.mjs as a real child process;
//   2. upstream backend: an A2A agent built with the SDK's server side (DefaultRequestHandler,
//      JsonRpcTransportHandler on node:http) behind relay, and a webhook that fails twice per
//      notification before accepting it (retries, order, the delivery log);
//   3. two tenants (API keys) with the SDK client: isolation, 401 without credentials, public card.
//
// Usage: node backends.mjs [path to the relay binary]      (default /tmp/relay-e2e)
//        build it with: go build -o /tmp/relay-e2e ./cmd/relay
// Output: one line per check, "ok - name" or "not ok - name: reason", then "N passed, M failed".
// Exit status: 0 when every check passed, 1 otherwise.
// Env: RELAY_E2E_TIMEOUT_MS (per check, default 30000), RELAY_E2E_VERBOSE=1 (stack traces, and the
// tail of relay's log after a failure).

import { spawn, execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID, webcrypto } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

import { createRemoteJWKSet, jwtVerify } from 'jose';
import { Role, TaskState } from 'a2a-v1';
import { ClientFactory, JsonRpcTransportFactory } from 'a2a-v1/client';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  defaultServerCallContextBuilder,
  validateVersion,
} from 'a2a-v1/server';

// Node 18 (Debian 12) has no global crypto in modules; the SDK's server side calls crypto.randomUUID().
globalThis.crypto ??= webcrypto;

const RELAY_BIN = process.argv[2] || '/tmp/relay-e2e';
const WORKER_EXAMPLE = fileURLToPath(new URL('../examples/worker.mjs', import.meta.url));
const CHECK_TIMEOUT_MS = Number(process.env.RELAY_E2E_TIMEOUT_MS || 30000);
const VERBOSE = process.env.RELAY_E2E_VERBOSE === '1';
const HOST = '127.0.0.1';

// ---------------------------------------------------------------- harness

let passed = 0;
let failed = 0;

class CheckError extends Error {}

function assert(cond, msg) {
  if (!cond) throw new CheckError(msg);
}

function describeError(e) {
  if (e === undefined || e === null) return String(e);
  const parts = [];
  if (e.name && e.name !== 'Error') parts.push(e.name);
  const code = rpcCode(e);
  if (code !== undefined) parts.push(`code ${code}`);
  parts.push(e.message || String(e));
  return parts.join(': ');
}

/** Runs one check; `relay` (optional) is the relay whose log tail is shown on failure in verbose mode. */
async function check(name, fn, relay) {
  let timer;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new CheckError(`timed out after ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    passed++;
    console.log(`ok - ${name}`);
    return true;
  } catch (e) {
    failed++;
    const reason = describeError(e).replace(/\s+/g, ' ').slice(0, 500);
    console.log(`not ok - ${name}: ${reason}`);
    if (VERBOSE && e && e.stack) console.error(e.stack);
    if (VERBOSE && relay) console.error(relay.logTail(30).replace(/^/gm, '#   relay: '));
    return false;
  } finally {
    clearTimeout(timer);
  }
}

async function expectError(fn, what) {
  let result;
  try {
    result = await fn();
  } catch (e) {
    return e;
  }
  throw new CheckError(`${what}: expected an error, got ${JSON.stringify(result)?.slice(0, 200)}`);
}

/** The JSON-RPC error code carried by an a2a-v1 client error (SSE errors wrap it in cause). */
function rpcCode(e) {
  if (!e || typeof e !== 'object') return undefined;
  if (typeof e.envelopeCode === 'number') return e.envelopeCode;
  if (e.cause && e.cause !== e) return rpcCode(e.cause);
  if (typeof e.code === 'number') return e.code;
  return undefined;
}

function expectCode(e, code, what) {
  const got = rpcCode(e);
  assert(got === code, `${what}: expected JSON-RPC error ${code}, got ${got === undefined ? describeError(e) : got}`);
}

/** A "# " comment line, shown with RELAY_E2E_VERBOSE=1. */
const note = (msg) => VERBOSE && console.log(`# ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const uuid = () => randomUUID();
const sha256hex = (buf) => createHash('sha256').update(buf).digest('hex');

/** Polls fn until it returns a truthy value; throws with describe() after ms. */
async function waitFor(fn, ms, describe) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new CheckError(typeof describe === 'function' ? describe() : describe);
    await sleep(50);
  }
}

// ---------------------------------------------------------------- processes and ports

const children = new Set(); // every child process still running, killed on exit

async function freePort() {
  const srv = net.createServer();
  srv.listen(0, HOST);
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}

/** Spawns a child process whose output is kept (last lines) and which is killed when this script exits. */
function startChild(cmd, args, env, name) {
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = [];
  const keep = (chunk) => {
    for (const l of chunk.toString().split('\n')) if (l) lines.push(l);
    if (lines.length > 500) lines.splice(0, lines.length - 500);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  children.add(child);
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { name, child, exited, lines, logTail: (n = 20) => lines.slice(-n).join('\n') };
}

/** Stops a child: signal, then SIGKILL after graceMs. Resolves to {code, signal}. */
async function stopChild(proc, signal = 'SIGTERM', graceMs = 5000) {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return proc.exited;
  proc.child.kill(signal);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
  try {
    return await proc.exited;
  } finally {
    clearTimeout(timer);
  }
}

function killAllChildren() {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {}
  }
}
process.on('exit', killAllChildren);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    killAllChildren();
    process.exit(130);
  });
}

/** The environment of a child: ours without any RELAY_* (no RELAY_REDIS_URL: the embedded store), plus env. */
function childEnv(env) {
  const out = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RELAY_')) out[k] = v;
  return { ...out, ...env };
}

/** Starts relay on a free loopback port and waits until /readyz answers 200. */
async function startRelay(name, env) {
  const port = await freePort();
  const url = `http://${HOST}:${port}`;
  const proc = startChild(
    RELAY_BIN,
    [],
    childEnv({ RELAY_ADDR: `${HOST}:${port}`, RELAY_PUBLIC_URL: url, RELAY_LOG_LEVEL: 'debug', ...env }),
    name,
  );
  const deadline = Date.now() + 15000;
  for (;;) {
    if (proc.child.exitCode !== null) {
      throw new CheckError(`relay exited with ${proc.child.exitCode}: ${proc.logTail(5).replace(/\s+/g, ' ')}`);
    }
    const res = await fetch(`${url}/readyz`).catch(() => null);
    if (res?.ok) break;
    if (Date.now() > deadline) throw new CheckError(`relay not ready on ${url} after 15 s`);
    await sleep(100);
  }
  return { ...proc, url, port, jwks: createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`)) };
}

/** Stops relay with SIGTERM (SIGKILL after 10 s); notes an unclean exit and, verbose, its warnings. */
async function stopRelay(relay) {
  const { code, signal } = await stopChild(relay, 'SIGTERM', 10000);
  if (code !== 0) console.log(`# ${relay.name} exited with code ${code} signal ${signal}`);
  for (const l of relay.lines) if (/level=(WARN|ERROR)/.test(l)) note(`${relay.name}: ${l}`);
}

// ---------------------------------------------------------------- webhook receiver

/**
 * An HTTP server on loopback that records every request (headers, raw body, the status it answered).
 * respond(record, records) picks the status for a POST (default 200).
 */
async function startWebhook(respond = () => 200) {
  const records = [];
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks);
    const rec = { method: req.method, path: req.url, headers: req.headers, raw, at: Date.now() };
    rec.status = req.method === 'POST' ? respond(rec, records) : 405;
    records.push(rec);
    res.writeHead(rec.status, { 'Content-Type': 'text/plain' }).end(rec.status < 300 ? 'ok' : 'try again');
  });
  server.listen(0, HOST);
  await once(server, 'listening');
  const base = `http://${HOST}:${server.address().port}`;
  return { base, records, server, close: () => new Promise((r) => server.close(r)) };
}

/** Parses a recorded notification body (v1.0 StreamResponse) and labels it: task:STATE, status:STATE, artifact:ID. */
function labelNotification(rec) {
  const body = JSON.parse(rec.raw.toString('utf8'));
  if (body.task) return `task:${body.task.status?.state}`;
  if (body.statusUpdate) return `status:${body.statusUpdate.status?.state}`;
  if (body.artifactUpdate) return `artifact:${body.artifactUpdate.artifact?.artifactId}`;
  return `unknown:${Object.keys(body).join('+')}`;
}

function notificationTaskId(body) {
  return body.task?.id ?? body.statusUpdate?.taskId ?? body.artifactUpdate?.taskId;
}

/**
 * Verifies one webhook POST as a receiver must: the JWT in A2A-Notification-JWT against relay's JWKS
 * (iss = relay's public URL, aud = the webhook URL), the body hash, the taskId claim, jti = the
 * notification id, the config token headers, the version header.
 */
async function verifyNotification(rec, { relay, hookUrl, taskId, token }) {
  const h = rec.headers;
  const nid = h['a2a-notification-id'];
  assert(nid, 'no A2A-Notification-Id header');
  const jwt = h['a2a-notification-jwt'];
  assert(jwt, `notification ${nid}: no A2A-Notification-JWT header`);
  let payload;
  try {
    ({ payload } = await jwtVerify(jwt, relay.jwks, { issuer: relay.url, audience: hookUrl, maxTokenAge: '5m' }));
  } catch (e) {
    throw new CheckError(`notification ${nid}: JWT does not verify: ${e.code || ''} ${e.message}`);
  }
  assert(payload.request_body_sha256 === sha256hex(rec.raw), `notification ${nid}: request_body_sha256 != sha256 of the body`);
  assert(payload.taskId === taskId, `notification ${nid}: taskId claim ${JSON.stringify(payload.taskId)}, want ${taskId}`);
  assert(payload.jti === nid, `notification ${nid}: jti ${JSON.stringify(payload.jti)} != A2A-Notification-Id`);
  assert(h['x-a2a-notification-token'] === token, `notification ${nid}: X-A2A-Notification-Token ${JSON.stringify(h['x-a2a-notification-token'])}`);
  assert(h['a2a-notification-token'] === token, `notification ${nid}: A2A-Notification-Token ${JSON.stringify(h['a2a-notification-token'])}`);
  assert(h.authorization === `Bearer ${jwt}`, `notification ${nid}: Authorization is not "Bearer <the JWT>"`);
  assert(h['a2a-version'] === '1.0', `notification ${nid}: A2A-Version ${JSON.stringify(h['a2a-version'])}`);
  const body = JSON.parse(rec.raw.toString('utf8'));
  assert(notificationTaskId(body) === taskId, `notification ${nid}: body is about task ${notificationTaskId(body)}`);
}

// ---------------------------------------------------------------- A2A client helpers (a2a-v1 object model)

const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
const stateName = (s) => TaskState[s] ?? String(s);

function userMsg(text, metadata) {
  const m = { messageId: uuid(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text } }] };
  if (metadata) m.metadata = metadata;
  return m;
}

/** An inline push config for SendMessage's configuration. */
const pushConfig = (url, token) => ({ url, token });

function asTask(result, what) {
  assert(result && typeof result === 'object', `${what}: empty result`);
  assert(!('messageId' in result), `${what}: got a Message, expected a Task`);
  assert(typeof result.id === 'string' && result.id !== '', `${what}: task has no id`);
  return result;
}

const partTexts = (parts) => (parts || []).filter((p) => p?.content?.$case === 'text').map((p) => p.content.value);
const artifactText = (task, artifactId) =>
  (task.artifacts || []).filter((a) => a.artifactId === artifactId).flatMap((a) => partTexts(a.parts)).join('');

async function pollTask(client, id, pred, ms = 15000) {
  let task;
  await waitFor(
    async () => pred((task = asTask(await client.getTask({ id }), 'GetTask'))),
    ms,
    () => `task ${id} stuck in ${stateName(task?.status?.state)}`,
  );
  return task;
}

/** A fetch that adds "Authorization: Bearer <key>" to every request. */
function bearerFetch(key) {
  return (input, init = {}) => {
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set('Authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
}

const clientWithKey = (url, key) =>
  new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: bearerFetch(key) })] }).createFromUrl(url);

// ---------------------------------------------------------------- worker API, the README's curl calls in fetch()

/**
 * One call as the README writes it: curl -s $RELAY_URL<path> -H "Authorization: Bearer $TOKEN" -d '<json>'
 * (curl -d sends POST with Content-Type application/x-www-form-urlencoded). Returns {status, json}.
 */
async function curlPost(relay, token, path, body) {
  const res = await fetch(relay.url + path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    throw new CheckError(`POST ${path}: HTTP ${res.status}, body is not JSON: ${text.slice(0, 120)}`);
  }
  return { status: res.status, json };
}

async function curlOk(relay, token, path, body) {
  const r = await curlPost(relay, token, path, body);
  assert(r.status === 200, `POST ${path}: HTTP ${r.status} ${JSON.stringify(r.json)?.slice(0, 200)}`);
  return r.json;
}

// ---------------------------------------------------------------- an A2A agent built with the SDK's server side

/**
 * An agent that streams: task (submitted), working, an artifact "answer" echoing the text upper-cased,
 * completed. Served with the SDK's JsonRpcTransportHandler on node:http (no express).
 */
async function startSdkAgent() {
  const port = await freePort();
  const url = `http://${HOST}:${port}/`;
  const calls = []; // JSON-RPC methods received, with the A2A-Version header
  const card = {
    name: 'sdk-upstream',
    description: 'A streaming agent built with @a2a-js/sdk, fronted by relay.',
    version: '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'upper', name: 'upper', description: 'upper-cases text', tags: ['demo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
  const canceled = new Set();
  const executor = {
    async execute(ctx, bus) {
      const { taskId, contextId } = ctx;
      const text = partTexts(ctx.userMessage.parts).join(' ');
      const status = (state, msgText) => ({
        state,
        timestamp: new Date().toISOString(),
        message: msgText
          ? { messageId: uuid(), contextId, taskId, role: Role.ROLE_AGENT, parts: [{ content: { $case: 'text', value: msgText }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] }
          : undefined,
      });
      if (!ctx.task) {
        bus.publish(AgentEvent.task({ id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [ctx.userMessage], metadata: undefined }));
      }
      await sleep(50);
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING, 'upper-casing'), metadata: undefined }));
      await sleep(100);
      if (canceled.has(taskId)) return bus.finished();
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: 'answer', name: 'answer', description: '', parts: [{ content: { $case: 'text', value: text.toUpperCase() }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      await sleep(100);
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED, 'done'), metadata: undefined }));
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      canceled.add(taskId);
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: { state: TaskState.TASK_STATE_CANCELED, timestamp: new Date().toISOString(), message: undefined }, metadata: undefined }));
      bus.finished();
    },
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const transport = new JsonRpcTransportHandler(handler);

  const server = http.createServer(async (req, res) => {
    try {
      if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(await handler.getAgentCard()));
        return;
      }
      if (req.method !== 'POST' || req.url !== '/') {
        res.writeHead(404).end();
        return;
      }
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      calls.push({ method: body.method, version: req.headers['a2a-version'] });
      const context = defaultServerCallContextBuilder({
        extensions: [],
        user: new UnauthenticatedUser(),
        headers: req.headers,
        requestedVersion: req.headers['a2a-version'] || undefined,
      });
      try {
        validateVersion(context.requestedVersion, card, 'JSONRPC');
      } catch (e) {
        const error = JsonRpcTransportHandler.mapToJSONRPCError(e);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id ?? null, error }));
        return;
      }
      const out = await transport.handle(body, context);
      if (typeof out?.[Symbol.asyncIterator] !== 'function') {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(out));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
      try {
        for await (const ev of out) res.write(`data: ${JSON.stringify(ev)}\n\n`);
      } catch (e) {
        const error = JsonRpcTransportHandler.mapToJSONRPCError(e);
        res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id ?? null, error })}\n\n`);
      }
      res.end();
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(String(e));
    }
  });
  server.listen(port, HOST);
  await once(server, 'listening');
  return { url, port, calls, close: () => new Promise((r) => server.close(r)) };
}

// ================================================================= 1. worker backend

async function checkWorkerBackend() {
  const TOKEN = `worker-${randomBytes(12).toString('hex')}`;
  const hook = await startWebhook();
  const hookUrl = `${hook.base}/hook/worker`;
  const hookToken = `hook-${uuid().slice(0, 8)}`;
  let relay, client, task, claim1, claim2, heartbeatAt;
  const need = (...xs) => assert(xs.every(Boolean), 'an earlier step failed');

  try {
    await check('worker: relay starts with RELAY_AGENT_BACKEND=worker:jobs', async () => {
      relay = await startRelay('relay-worker', {
        RELAY_AGENT_BACKEND: 'worker:jobs',
        RELAY_WORKER_TOKENS: TOKEN,
        RELAY_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
        RELAY_WORKER_LEASE: '3s',
      });
      client = await new ClientFactory().createFromUrl(relay.url);
    });

    await check('worker: v1 client sends a non-blocking message with an inline push config', async () => {
      need(client);
      task = asTask(
        await client.sendMessage({
          message: userMsg('hello worker'),
          configuration: { returnImmediately: true, taskPushNotificationConfig: pushConfig(hookUrl, hookToken) },
        }),
        'SendMessage',
      );
      assert(task.status?.state === TaskState.TASK_STATE_SUBMITTED, `state ${stateName(task.status?.state)}, want SUBMITTED`);
    }, relay);

    await check('worker: first worker (fetch, as the README curl) claims attempt 1, posts working, heartbeats, dies', async () => {
      need(task);
      claim1 = await curlOk(relay, TOKEN, '/v1/queues/jobs/claim', { workerId: 'w1', waitSeconds: 10 });
      assert(claim1?.taskId === task.id, `claimed ${JSON.stringify(claim1?.taskId)}, want ${task.id}`);
      assert(claim1.attempt === 1, `attempt ${claim1.attempt}, want 1`);
      assert(claim1.leaseId && claim1.leaseSeconds === 3, `lease ${JSON.stringify({ id: claim1.leaseId, s: claim1.leaseSeconds })}`);
      const texts = (claim1.message?.parts || []).map((p) => p.text);
      assert(texts.includes('hello worker'), `claimed message parts ${JSON.stringify(claim1.message?.parts)}`);
      const posted = await curlOk(relay, TOKEN, `/v1/tasks/${task.id}/events`, {
        leaseId: claim1.leaseId,
        events: [{ statusUpdate: { status: { state: 'TASK_STATE_WORKING', message: { messageId: 's-1', role: 'ROLE_AGENT', parts: [{ text: 'reading the input' }] } } } }],
      });
      assert(posted.state === 'TASK_STATE_WORKING' && posted.released === false, `events answered ${JSON.stringify(posted)}`);
      const beat = await curlOk(relay, TOKEN, `/v1/tasks/${task.id}/heartbeat`, { leaseId: claim1.leaseId });
      heartbeatAt = Date.now();
      assert(beat.canceled === false && beat.leaseExpiresAt, `heartbeat answered ${JSON.stringify(beat)}`);
      // ...and the worker dies here: no more heartbeats, no release.
    }, relay);

    await check('worker: second worker claims the same task with attempt 2 once the lease expired', async () => {
      need(claim1);
      claim2 = await curlOk(relay, TOKEN, '/v1/queues/jobs/claim', { workerId: 'w2', waitSeconds: 20 });
      const waited = Date.now() - heartbeatAt;
      note(`second claim came ${waited} ms after the first worker's last heartbeat`);
      assert(claim2?.taskId === task.id, `claimed ${JSON.stringify(claim2?.taskId)}, want ${task.id}`);
      assert(claim2.attempt === 2, `attempt ${claim2.attempt}, want 2`);
      assert(claim2.leaseId !== claim1.leaseId, 'same lease id as the first worker');
      assert(waited >= 2500, `handed out ${waited} ms after the last heartbeat, before the 3 s lease ran out`);
      assert(claim2.task?.status?.state === 'TASK_STATE_WORKING', `claimed task state ${claim2.task?.status?.state}`);
    }, relay);

    await check('worker: the first worker\'s lease is gone (409 lease_lost)', async () => {
      need(claim2);
      const r = await curlPost(relay, TOKEN, `/v1/tasks/${task.id}/heartbeat`, { leaseId: claim1.leaseId });
      assert(r.status === 409 && r.json?.code === 'lease_lost', `old lease heartbeat: HTTP ${r.status} ${JSON.stringify(r.json)}`);
    }, relay);

    await check('worker: second worker posts an artifact and completes', async () => {
      need(claim2);
      const done = await curlOk(relay, TOKEN, `/v1/tasks/${task.id}/events`, {
        leaseId: claim2.leaseId,
        events: [
          { artifactUpdate: { artifact: { artifactId: 'out', parts: [{ text: 'HELLO WORKER' }] }, lastChunk: true } },
          { statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } },
        ],
      });
      assert(done.state === 'TASK_STATE_COMPLETED' && done.released === true, `events answered ${JSON.stringify(done)}`);
    }, relay);

    await check('worker: client GetTask shows completed with the artifact', async () => {
      need(claim2);
      const t = asTask(await client.getTask({ id: task.id }), 'GetTask');
      assert(t.status?.state === TaskState.TASK_STATE_COMPLETED, `state ${stateName(t.status?.state)}`);
      assert(artifactText(t, 'out') === 'HELLO WORKER', `artifact "out" is ${JSON.stringify(artifactText(t, 'out'))}`);
    }, relay);

    await check('worker: webhook got task, working, …, completed in order, each signed and verified', async () => {
      need(task);
      const isCompleted = (r) => labelNotification(r) === 'status:TASK_STATE_COMPLETED';
      await waitFor(() => hook.records.some(isCompleted), 10000, () => `no completed notification (got ${hook.records.map(labelNotification).join(', ')})`);
      await sleep(300); // anything sent after completed would show up here
      const labels = hook.records.map(labelNotification);
      note(`worker webhook got: ${labels.join(', ')}`);
      const ids = hook.records.map((r) => r.headers['a2a-notification-id']);
      assert(new Set(ids).size === ids.length, `a notification came twice although each was answered 200: ${ids.join(', ')}`);
      assert(labels[0] === 'task:TASK_STATE_SUBMITTED', `first notification ${labels[0]}: ${labels.join(', ')}`);
      assert(labels[1] === 'status:TASK_STATE_WORKING', `second notification ${labels[1]}: ${labels.join(', ')}`);
      assert(labels.at(-1) === 'status:TASK_STATE_COMPLETED', `last notification ${labels.at(-1)}: ${labels.join(', ')}`);
      assert(labels.slice(2, -1).includes('artifact:out'), `no artifact notification before completed: ${labels.join(', ')}`);
      for (const rec of hook.records) {
        assert(rec.path === '/hook/worker', `POST to ${rec.path}`);
        assert(/^application\/a2a\+json/.test(rec.headers['content-type'] || ''), `Content-Type ${rec.headers['content-type']}`);
        await verifyNotification(rec, { relay, hookUrl, taskId: task.id, token: hookToken });
      }
    }, relay);

    // examples/worker.mjs as a real process, for a second task.
    let worker;
    await check('worker: examples/worker.mjs completes a second task', async () => {
      need(client);
      assert(existsSync(WORKER_EXAMPLE), `${WORKER_EXAMPLE} missing`);
      worker = startChild(
        process.execPath,
        [WORKER_EXAMPLE],
        childEnv({ RELAY_URL: relay.url, RELAY_WORKER_TOKEN: TOKEN, RELAY_QUEUE: 'jobs' }),
        'worker.mjs',
      );
      const text = `hello node ${uuid().slice(0, 6)}`;
      const t2 = asTask(await client.sendMessage({ message: userMsg(text), configuration: { returnImmediately: true } }), 'SendMessage');
      const done = await pollTask(client, t2.id, (t) => TERMINAL.has(t.status?.state), 20000).catch((e) => {
        throw new CheckError(`${e.message}; worker.mjs said: ${worker.logTail(5).replace(/\s+/g, ' ')}`);
      });
      assert(done.status.state === TaskState.TASK_STATE_COMPLETED, `ended ${stateName(done.status.state)}`);
      assert(artifactText(done, 'result') === text.toUpperCase(), `artifact "result" is ${JSON.stringify(artifactText(done, 'result'))}`);
      assert(worker.lines.some((l) => l.includes(`task ${t2.id}: completed`)), 'worker.mjs did not log the completion');
    }, relay);

    await check('worker: examples/worker.mjs exits 0 on SIGINT', async () => {
      need(worker);
      assert(worker.child.exitCode === null, `worker.mjs already exited with ${worker.child.exitCode}: ${worker.logTail(3)}`);
      const { code, signal } = await stopChild(worker, 'SIGINT', 5000);
      assert(code === 0, `exit code ${code} signal ${signal}: ${worker.logTail(3).replace(/\s+/g, ' ')}`);
    }, relay);
    if (worker) await stopChild(worker, 'SIGKILL', 0);
  } finally {
    await hook.close();
    if (relay) await stopRelay(relay);
  }
}

// ================================================================= 2. an SDK agent behind relay

async function checkUpstreamAgent() {
  const FAILS_PER_NOTIFICATION = 2;
  const seen = new Map(); // notification id -> POSTs so far
  const hook = await startWebhook((rec) => {
    const nid = rec.headers['a2a-notification-id'];
    const n = (seen.get(nid) || 0) + 1;
    seen.set(nid, n);
    return n <= FAILS_PER_NOTIFICATION ? 500 : 200;
  });
  const hookUrl = `${hook.base}/hook/upstream`;
  const hookToken = `hook-${uuid().slice(0, 8)}`;
  let agent, relay, client, task;
  const need = (...xs) => assert(xs.every(Boolean), 'an earlier step failed');

  try {
    await check('upstream: SDK agent (DefaultRequestHandler + JsonRpcTransportHandler on node:http) serves its card', async () => {
      agent = await startSdkAgent();
      const card = await (await fetch(`${agent.url}.well-known/agent-card.json`)).json();
      assert(card.capabilities?.streaming === true, 'card does not advertise streaming');
      assert(card.supportedInterfaces?.[0]?.url === agent.url, `card interface ${JSON.stringify(card.supportedInterfaces)}`);
      // The SDK client talks to it directly: the agent itself works before relay fronts it.
      const direct = await new ClientFactory().createFromUrl(agent.url);
      const t = asTask(await direct.sendMessage({ message: userMsg('direct') }), 'SendMessage to the agent');
      assert(t.status?.state === TaskState.TASK_STATE_COMPLETED, `direct send ended ${stateName(t.status?.state)}`);
      agent.calls.length = 0;
    });

    await check('upstream: relay starts with RELAY_AGENT_BACKEND=<the agent>', async () => {
      need(agent);
      relay = await startRelay('relay-upstream', {
        RELAY_AGENT_BACKEND: `http://${HOST}:${agent.port}`,
        RELAY_RETRY_INITIAL: '200ms',
        RELAY_RETRY_MAX_INTERVAL: '1s',
        RELAY_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      });
      client = await new ClientFactory().createFromUrl(relay.url);
    });

    await check('upstream: client task completes through relay with the agent\'s artifact', async () => {
      need(client);
      const sent = asTask(
        await client.sendMessage({
          message: userMsg('hello upstream'),
          configuration: { returnImmediately: true, taskPushNotificationConfig: pushConfig(hookUrl, hookToken) },
        }),
        'SendMessage',
      );
      task = await pollTask(client, sent.id, (t) => TERMINAL.has(t.status?.state), 15000);
      assert(task.status.state === TaskState.TASK_STATE_COMPLETED, `ended ${stateName(task.status.state)}`);
      assert(artifactText(task, 'answer') === 'HELLO UPSTREAM', `artifact "answer" is ${JSON.stringify(artifactText(task, 'answer'))}`);
      const methods = agent.calls.map((c) => `${c.method}@${c.version}`);
      note(`relay called the agent: ${methods.join(', ')}`);
      assert(methods.includes('SendStreamingMessage@1.0'), `relay called the agent with ${methods.join(', ') || 'nothing'}, want SendStreamingMessage (A2A-Version 1.0)`);
    }, relay);

    let delivered; // the POSTs answered 200, in arrival order
    await check('upstream: every notification arrives after 2 failures, same id on retries, in order, all verified', async () => {
      need(task);
      const ok = () => hook.records.filter((r) => r.status === 200);
      await waitFor(
        () => ok().some((r) => labelNotification(r) === 'status:TASK_STATE_COMPLETED'),
        20000,
        () => `completed not delivered; POSTs: ${hook.records.map((r) => `${labelNotification(r)}=${r.status}`).join(', ')}`,
      );
      await sleep(1500); // let anything else (a duplicate, a late notification) show up
      delivered = ok();
      const labels = delivered.map(labelNotification);
      note(`upstream webhook POSTs: ${hook.records.map((r) => `${labelNotification(r)}=${r.status}`).join(', ')}`);
      assert(labels[0] === 'task:TASK_STATE_SUBMITTED', `first delivered ${labels[0]}: ${labels.join(', ')}`);
      assert(labels.includes('status:TASK_STATE_WORKING'), `no working notification: ${labels.join(', ')}`);
      assert(labels.includes('artifact:answer'), `no artifact notification: ${labels.join(', ')}`);
      assert(labels.at(-1) === 'status:TASK_STATE_COMPLETED', `last delivered ${labels.at(-1)}: ${labels.join(', ')}`);
      assert(labels.indexOf('status:TASK_STATE_WORKING') < labels.indexOf('artifact:answer'), `artifact before working: ${labels.join(', ')}`);

      const byId = new Map();
      for (const r of hook.records) {
        const nid = r.headers['a2a-notification-id'];
        if (!byId.has(nid)) byId.set(nid, []);
        byId.get(nid).push(r);
      }
      assert(byId.size === delivered.length, `${byId.size} notification ids but ${delivered.length} delivered`);
      let prevDone = 0;
      for (const [nid, posts] of byId) {
        const statuses = posts.map((p) => p.status).join(',');
        assert(statuses === '500,500,200', `notification ${nid} (${labelNotification(posts[0])}) got answers ${statuses}, want 500,500,200`);
        const hashes = new Set(posts.map((p) => sha256hex(p.raw)));
        assert(hashes.size === 1, `notification ${nid}: retries carry a different body`);
        // A retry holds its place: the next notification is not tried before this one landed.
        assert(posts[0].at >= prevDone, `notification ${nid} was tried before the previous one was delivered`);
        prevDone = posts.at(-1).at;
        const gaps = posts.slice(1).map((p, i) => p.at - posts[i].at);
        note(`notification ${nid}: retried after ${gaps.join(' ms, ')} ms`);
        // RELAY_RETRY_INITIAL=200ms with jitter, RELAY_RETRY_MAX_INTERVAL=1s (plus scheduling slack).
        assert(gaps.every((g) => g >= 80 && g <= 2500), `notification ${nid}: retry gaps ${gaps.join(', ')} ms, want 80-2500`);
        for (const p of posts) await verifyNotification(p, { relay, hookUrl, taskId: task.id, token: hookToken });
      }
    }, relay);

    await check('upstream: GET /v1/deliveries?task= lists the deliveries with their failed attempts', async () => {
      need(task, delivered);
      const res = await fetch(`${relay.url}/v1/deliveries?task=${encodeURIComponent(task.id)}`);
      assert(res.ok, `HTTP ${res.status}`);
      const { deliveries } = await res.json();
      assert(Array.isArray(deliveries), 'no deliveries array');
      assert(deliveries.length === delivered.length, `${deliveries.length} deliveries listed, ${delivered.length} notifications delivered`);
      const nids = new Set(delivered.map((r) => r.headers['a2a-notification-id']));
      for (const d of deliveries) {
        assert(d.taskId === task.id, `delivery ${d.id} of task ${d.taskId}`);
        assert(d.status === 'delivered', `delivery ${d.id} status ${d.status}`);
        assert(d.attempts === 3, `delivery ${d.id} has ${d.attempts} attempts, want 3`);
        const one = await (await fetch(`${relay.url}/v1/deliveries/${encodeURIComponent(d.id)}`)).json();
        const log = one.attemptLog || [];
        const shape = log.map((a) => `${a.attempt}:${a.status}:${a.outcome}`).join(' ');
        note(`delivery ${d.id}: ${shape}`);
        assert(log.length === 3, `delivery ${d.id} attempt log has ${log.length} entries: ${shape}`);
        assert(log[0].status === 500 && log[1].status === 500 && log[2].status === 200, `delivery ${d.id} attempts ${shape}`);
        assert(log.slice(0, 2).every((a) => a.errorClass === 'http' && a.outcome !== log[2].outcome), `delivery ${d.id} failed attempts ${JSON.stringify(log.slice(0, 2))}`);
        assert(log.every((a) => a.url === hookUrl), `delivery ${d.id} attempt url ${log[0].url}`);
        assert(log.every((a) => nids.has(a.notificationId)), `delivery ${d.id} notificationId ${log[0].notificationId} never reached the webhook`);
      }
    }, relay);
  } finally {
    await hook.close();
    if (relay) await stopRelay(relay);
    if (agent) await agent.close();
  }
}

// ================================================================= 3. two tenants

async function checkTenants() {
  const keys = { alice: randomBytes(24).toString('base64url'), bob: randomBytes(24).toString('base64url') };
  let relay, alice, bob, task;
  const need = (...xs) => assert(xs.every(Boolean), 'an earlier step failed');

  try {
    await check('tenants: relay starts with RELAY_API_KEYS for alice and bob (relay hash-key)', async () => {
      const hash = (k) => execFileSync(RELAY_BIN, ['hash-key', k], { encoding: 'utf8' }).trim();
      const entries = Object.entries(keys).map(([name, k]) => `${name}:${hash(k)}`);
      assert(entries.every((e) => /^\w+:sha256:[0-9a-f]{64}$/.test(e)), `hash-key printed ${entries.join(',')}`);
      relay = await startRelay('relay-tenants', { RELAY_API_KEYS: entries.join(',') });
      alice = await clientWithKey(relay.url, keys.alice);
      bob = await clientWithKey(relay.url, keys.bob);
    });

    await check('tenants: the public card is readable without credentials and declares securitySchemes', async () => {
      need(relay);
      const res = await fetch(`${relay.url}/.well-known/agent-card.json`);
      assert(res.ok, `HTTP ${res.status}`);
      const card = await res.json();
      const schemes = Object.keys(card.securitySchemes || {});
      assert(schemes.length > 0, 'card has no securitySchemes');
      const sdkCard = await alice.getAgentCard();
      assert(Object.keys(sdkCard.securitySchemes || {}).length === schemes.length, 'the SDK read no securitySchemes from the card');
    }, relay);

    await check('tenants: alice creates a task', async () => {
      need(alice);
      task = asTask(
        await alice.sendMessage({
          message: userMsg('alice only', { demo: { steps: 40, delayMs: 100 } }),
          configuration: { returnImmediately: true },
        }),
        'SendMessage',
      );
      const again = asTask(await alice.getTask({ id: task.id }), 'GetTask');
      assert(again.id === task.id, 'alice cannot read her own task');
    }, relay);

    await check('tenants: bob\'s GetTask, CancelTask, SubscribeToTask on alice\'s task are -32001', async () => {
      need(bob, task);
      expectCode(await expectError(() => bob.getTask({ id: task.id }), 'bob GetTask'), -32001, 'bob GetTask');
      expectCode(await expectError(() => bob.cancelTask({ id: task.id }), 'bob CancelTask'), -32001, 'bob CancelTask');
      const e = await expectError(async () => {
        const events = [];
        for await (const ev of bob.resubscribeTask({ id: task.id })) events.push(ev);
        return events;
      }, 'bob SubscribeToTask');
      expectCode(e, -32001, 'bob SubscribeToTask');
      const listed = await bob.listTasks({ pageSize: 50 });
      assert(!(listed.tasks || []).some((t) => t.id === task.id), 'bob\'s ListTasks shows alice\'s task');
      const mine = asTask(await alice.getTask({ id: task.id }), 'alice GetTask');
      assert(mine.status?.state !== TaskState.TASK_STATE_CANCELED, 'bob\'s cancel canceled alice\'s task');
      await alice.cancelTask({ id: task.id }).catch(() => {});
    }, relay);

    await check('tenants: a POST without credentials gets HTTP 401 with a JSON-RPC error body', async () => {
      need(relay, task);
      for (const auth of [undefined, 'Bearer not-a-key-of-anyone-123456']) {
        const headers = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
        if (auth) headers.Authorization = auth;
        const res = await fetch(relay.url, {
          method: 'POST',
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', id: 'unauth-1', method: 'GetTask', params: { id: task.id } }),
        });
        const what = auth ? 'wrong key' : 'no credentials';
        assert(res.status === 401, `${what}: HTTP ${res.status}`);
        const body = await res.json().catch(() => null);
        assert(body?.jsonrpc === '2.0' && typeof body.error?.code === 'number', `${what}: body ${JSON.stringify(body)}`);
        assert(!('result' in body), `${what}: body has a result`);
      }
    }, relay);
  } finally {
    if (relay) await stopRelay(relay);
  }
}

// ================================================================= main

process.on('unhandledRejection', (e) => {
  if (VERBOSE) console.error('unhandled rejection:', e);
});

if (!existsSync(RELAY_BIN)) {
  console.log(`not ok - relay binary ${RELAY_BIN} not found (go build -o /tmp/relay-e2e ./cmd/relay)`);
  process.exit(1);
}
console.log(`# relay backends e2e with ${RELAY_BIN}`);
try {
  await checkWorkerBackend();
  await checkUpstreamAgent();
  await checkTenants();
} finally {
  killAllChildren();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
