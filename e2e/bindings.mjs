#!/usr/bin/env node
// End-to-end checks of a running relay's HTTP+JSON (REST) and gRPC bindings with the official A2A
// JavaScript clients, each choosing its transport from the agent card the way the SDK's docs say
// (ClientFactoryOptions.preferredTransports):
//   a2a-v1  = @a2a-js/sdk@1.3.0  (A2A v1.0; the card's supportedInterfaces: HTTP+JSON at <base>/v1,
//             and GRPC at host:port when relay runs with RELAY_GRPC_ADDR; the gRPC transport is the
//             SDK's a2a-v1/client/grpc over @grpc/grpc-js)
//   a2a-v03 = @a2a-js/sdk@0.3.14 (A2A v0.3; the card's additionalInterfaces HTTP+JSON entry, /v1/... paths,
//             ProtoJSON of v0.3's proto), and a2a-v1's compat/v0_3 LegacyRestTransport on the same routes
// The same v1.0 checks run over each binding, and every task made is read back over JSON-RPC: the
// bindings share one core. Without a GRPC interface on the card the gRPC run is skipped.
//
// Usage: node bindings.mjs [baseURL]     (or RELAY_URL=..., default http://127.0.0.1:8080)
// Output: one line per check, "ok - name" or "not ok - name: reason", then "N passed, M failed".
// Exit status: 0 when every check passed, 1 otherwise.
// Env: RELAY_E2E_TIMEOUT_MS (per check, default 20000), RELAY_E2E_VERBOSE=1 (stack traces).
// Push configs point at http://127.0.0.1:9/hook (nothing listens there; deliveries just fail), so
// relay needs RELAY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8.

import { randomUUID } from 'node:crypto';

import {
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  SendMessageRequest,
  TaskPushNotificationConfig,
  TaskState,
} from 'a2a-v1';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from 'a2a-v1/client';
import { GrpcTransportFactory } from 'a2a-v1/client/grpc';
import { LegacyRestTransport } from 'a2a-v1/compat/v0_3/client';
import {
  AuthenticatedExtendedCardNotConfiguredError as V03ExtendedCardNotConfiguredError,
  ClientFactory as V03ClientFactory,
  ClientFactoryOptions as V03ClientFactoryOptions,
  RestTransport as V03RestTransport,
  TaskNotFoundError as V03TaskNotFoundError,
} from 'a2a-v03/client';

const BASE = (process.argv[2] || process.env.RELAY_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const CHECK_TIMEOUT_MS = Number(process.env.RELAY_E2E_TIMEOUT_MS || 20000);
const VERBOSE = process.env.RELAY_E2E_VERBOSE === '1';
const HOOK_URL = 'http://127.0.0.1:9/hook';
const LONG = { demo: { steps: 50, delayMs: 100 } }; // about 5 s of work
const SHORTISH = { demo: { steps: 5, delayMs: 200 } }; // about 1 s of work

// ---------------------------------------------------------------- harness

let passed = 0;
let failed = 0;
let skipped = 0;

class CheckError extends Error {}

function assert(cond, msg) {
  if (!cond) throw new CheckError(msg);
}

function describeError(e) {
  if (e === undefined || e === null) return String(e);
  const parts = [];
  if (e.name && e.name !== 'Error') parts.push(e.name);
  if (typeof e.statusCode === 'number') parts.push(`HTTP ${e.statusCode}`);
  if (e.transport === 'grpc' && typeof e.status === 'number') parts.push(`gRPC ${e.status}`);
  parts.push(e.message || String(e));
  return parts.join(': ');
}

async function check(name, fn) {
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
  } catch (e) {
    failed++;
    console.log(`not ok - ${name}: ${describeError(e).replace(/\s+/g, ' ').slice(0, 400)}`);
    if (VERBOSE && e && e.stack) console.error(e.stack);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs fn, which must throw; returns the error. */
async function expectError(fn, what) {
  let result;
  try {
    result = await fn();
  } catch (e) {
    return e;
  }
  throw new CheckError(`${what}: expected an error, got ${JSON.stringify(result)?.slice(0, 200)}`);
}

// The HTTP status (REST) and gRPC status code (spec §5.4) of each A2A error checked here.
const WIRE_STATUS = {
  rest: { TaskNotFoundError: 404, TaskNotCancelableError: 400 },
  grpc: { TaskNotFoundError: 5 /* NOT_FOUND */, TaskNotCancelableError: 9 /* FAILED_PRECONDITION */ },
};

/**
 * An a2a-v1 error of the binding's transport: its class (which the SDK takes from the
 * google.rpc.ErrorInfo reason) and, where listed, its HTTP status or gRPC code.
 */
function expectA2AError(e, transport, name, what) {
  assert(e && e.transport === transport, `${what}: not a ${transport} transport error: ${describeError(e)}`);
  assert(e.name === name, `${what}: got ${describeError(e)}, want ${name}`);
  const want = WIRE_STATUS[transport][name];
  const got = transport === 'rest' ? e.statusCode : e.status;
  assert(want === undefined || got === want, `${what}: ${name} with status ${got}, want ${want}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const uniqueText = (label) => `${label} ${randomUUID().slice(0, 8)}`;

// ---------------------------------------------------------------- v1.0 helpers

const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
const stateName = (s) => TaskState[s] ?? String(s);

/** A SendMessageRequest as the SDK's codec builds it (the gRPC transport wants every field set,
 * so requests with more than ids are built with the codecs' fromJSON). */
function sendReq(text, { metadata, returnImmediately } = {}) {
  const message = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] };
  if (metadata) message.metadata = metadata;
  return SendMessageRequest.fromJSON({ message, configuration: returnImmediately ? { returnImmediately } : undefined });
}

function asTask(result, what) {
  assert(result && typeof result === 'object', `${what}: empty result`);
  assert(!('messageId' in result), `${what}: got a Message, expected a Task`);
  assert(typeof result.id === 'string' && result.id !== '', `${what}: task has no id`);
  assert(result.status, `${what}: task has no status`);
  return result;
}

const texts = (parts) => (parts || []).filter((p) => p?.content?.$case === 'text').map((p) => p.content.value);
const echoes = (task, text) => (task.artifacts || []).some((a) => texts(a.parts).some((t) => t.includes(text)));
const eventTaskId = (ev) => (ev.payload.$case === 'task' ? ev.payload.value.id : ev.payload.value.taskId);

async function pollUntil(client, taskId, pred, ms = 15000) {
  const deadline = Date.now() + ms;
  let task;
  while (Date.now() < deadline) {
    task = asTask(await client.getTask({ id: taskId }), 'GetTask');
    if (pred(task)) return task;
    await sleep(100);
  }
  throw new CheckError(`task ${taskId} stuck in ${stateName(task?.status?.state)}`);
}

async function sendLong(client, label) {
  const t = asTask(await client.sendMessage(sendReq(uniqueText(label), { metadata: LONG, returnImmediately: true })), 'SendMessage');
  assert(!TERMINAL.has(t.status.state), `long task already ${stateName(t.status.state)}`);
  return t;
}

// ================================================================= v1.0 over HTTP+JSON and gRPC

// The bindings the v1.0 checks run over: the card's protocolBinding, the SDK's transport factories
// for it, and the `transport` its errors carry.
const BINDINGS = [
  { label: 'REST', binding: 'HTTP+JSON', transport: 'rest', factories: [] },
  { label: 'gRPC', binding: 'GRPC', transport: 'grpc', factories: [new GrpcTransportFactory()] },
];

const ifaceOf = (card, binding) =>
  (card.supportedInterfaces || []).find((i) => String(i.protocolBinding).toUpperCase() === binding && i.protocolVersion === '1.0');

async function runV1({ label, binding, transport, factories }, rpc) {
  let client;
  let completed;
  let polled;
  let canceled;
  const name = (what) => `v1 ${label}: ${what}`;
  const need = () => assert(client, `no ${label} client (card step failed)`);

  await check(name(`ClientFactory picks ${binding} from supportedInterfaces`), async () => {
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: factories, preferredTransports: [binding] });
    client = await new ClientFactory(options).createFromUrl(BASE);
    assert(client.transport.protocolName === binding, `transport ${client.transport.protocolName}, want ${binding}`);
    assert(client.protocolVersion === '1.0', `client speaks ${client.protocolVersion}, want 1.0`);
    const iface = ifaceOf(await client.getAgentCard(), binding);
    if (binding === 'HTTP+JSON') assert(new URL(iface.url).pathname === '/v1', `HTTP+JSON interface url ${iface.url}, want <base>/v1`);
  });

  await check(name('blocking SendMessage returns a completed task echoing the text'), async () => {
    need();
    const text = uniqueText(`hello ${label}`);
    const task = asTask(await client.sendMessage(sendReq(text)), 'SendMessage');
    assert(task.status.state === TaskState.TASK_STATE_COMPLETED, `state ${stateName(task.status.state)}`);
    assert(task.contextId, 'task has no contextId');
    assert(echoes(task, text), `no artifact text contains "${text}"`);
    completed = task;
  });

  await check(name('non-blocking SendMessage (returnImmediately), GetTask until completed'), async () => {
    need();
    const text = uniqueText(`poll ${label}`);
    const first = asTask(await client.sendMessage(sendReq(text, { metadata: SHORTISH, returnImmediately: true })), 'SendMessage');
    assert(!TERMINAL.has(first.status.state), `returnImmediately answered ${stateName(first.status.state)} (did it block?)`);
    const done = await pollUntil(client, first.id, (t) => TERMINAL.has(t.status.state));
    assert(done.status.state === TaskState.TASK_STATE_COMPLETED, `ended in ${stateName(done.status.state)}`);
    assert(echoes(done, text), `no artifact text contains "${text}"`);
    assert(done.contextId === first.contextId, 'contextId changed between SendMessage and GetTask');
    polled = done;
  });

  await check(name('GetTask historyLength 0; the task reads the same over JSON-RPC'), async () => {
    need();
    assert(completed && rpc, 'earlier checks failed');
    const t = asTask(await client.getTask({ id: completed.id, historyLength: 0 }), 'GetTask');
    assert((t.history || []).length === 0, `historyLength 0 returned ${t.history.length} messages`);
    const full = asTask(await client.getTask({ id: completed.id }), 'GetTask');
    const viaRpc = asTask(await rpc.getTask({ id: completed.id }), 'GetTask over JSON-RPC');
    assert(viaRpc.contextId === full.contextId && viaRpc.status.state === full.status.state, 'JSON-RPC reads another task');
    assert(JSON.stringify(viaRpc.artifacts) === JSON.stringify(full.artifacts), 'artifacts differ between the bindings');
  });

  await check(name('GetTask of an unknown id is TaskNotFoundError'), async () => {
    need();
    const e = await expectError(() => client.getTask({ id: `no-such-task-${randomUUID()}` }), 'GetTask unknown');
    expectA2AError(e, transport, 'TaskNotFoundError', 'GetTask unknown');
  });

  await check(name('ListTasks by contextId, by status with pageSize 1 and pageToken'), async () => {
    need();
    assert(polled && completed, 'earlier send checks failed');
    const byCtx = await client.listTasks(ListTasksRequest.fromJSON({ contextId: polled.contextId, pageSize: 10 }));
    assert(Array.isArray(byCtx.tasks), 'response has no tasks array');
    assert(byCtx.tasks.some((t) => t.id === polled.id), 'task missing from its contextId listing');
    assert(byCtx.tasks.every((t) => t.contextId === polled.contextId), 'listing has tasks of another context');
    const page1 = await client.listTasks(ListTasksRequest.fromJSON({ status: 'TASK_STATE_COMPLETED', pageSize: 1 }));
    assert(page1.tasks.length === 1, `pageSize 1 returned ${page1.tasks.length} tasks`);
    assert(page1.tasks[0].status?.state === TaskState.TASK_STATE_COMPLETED, 'status filter returned a task in another state');
    assert(page1.nextPageToken, 'nextPageToken empty although at least 2 completed tasks exist');
    const page2 = await client.listTasks(
      ListTasksRequest.fromJSON({ status: 'TASK_STATE_COMPLETED', pageSize: 1, pageToken: page1.nextPageToken }),
    );
    assert(page2.tasks.length === 1, `second page returned ${page2.tasks.length} tasks`);
    assert(page2.tasks[0].id !== page1.tasks[0].id, 'second page repeats the first page');
  });

  await check(name('CancelTask on a running task returns TASK_STATE_CANCELED'), async () => {
    need();
    const t = await sendLong(client, `long ${label}`);
    const c = asTask(await client.cancelTask({ id: t.id }), 'CancelTask');
    assert(c.status.state === TaskState.TASK_STATE_CANCELED, `CancelTask returned ${stateName(c.status.state)}`);
    const again = asTask(await client.getTask({ id: t.id }), 'GetTask');
    assert(again.status.state === TaskState.TASK_STATE_CANCELED, `GetTask after cancel: ${stateName(again.status.state)}`);
    canceled = t;
  });

  await check(name('CancelTask again is TaskNotCancelableError'), async () => {
    need();
    assert(canceled, 'no canceled task');
    const e = await expectError(() => client.cancelTask({ id: canceled.id }), 'second CancelTask');
    expectA2AError(e, transport, 'TaskNotCancelableError', 'second CancelTask');
  });

  await check(name('push config Create / Get / List / Delete'), async () => {
    need();
    const task = await sendLong(client, `push ${label}`);
    try {
      const id = `cfg-${randomUUID().slice(0, 8)}`;
      const cfg = (json) => TaskPushNotificationConfig.fromJSON({ taskId: task.id, ...json });
      const created = await client.createTaskPushNotificationConfig(cfg({ id, url: HOOK_URL, token: 'tok' }));
      assert(created.id === id && created.taskId === task.id && created.url === HOOK_URL, `Create returned ${JSON.stringify(created)}`);
      const auto = await client.createTaskPushNotificationConfig(cfg({ url: `${HOOK_URL}2` }));
      assert(auto.id, 'Create without id did not assign one');
      const got = await client.getTaskPushNotificationConfig({ taskId: task.id, id });
      assert(got.id === id && got.url === HOOK_URL && got.taskId === task.id, `Get returned ${JSON.stringify(got)}`);
      const list = await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: task.id }));
      const ids = (list.configs || []).map((c) => c.id);
      assert(ids.includes(id) && ids.includes(auto.id), `List ids ${JSON.stringify(ids)}`);
      await client.deleteTaskPushNotificationConfig({ taskId: task.id, id });
      const after = await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: task.id }));
      assert(!(after.configs || []).some((c) => c.id === id), 'config still listed after Delete');
      const e = await expectError(() => client.getTaskPushNotificationConfig({ taskId: task.id, id }), 'Get deleted');
      expectA2AError(e, transport, 'TaskNotFoundError', 'Get deleted config');
    } finally {
      await client.cancelTask({ id: task.id }).catch(() => {});
    }
  });

  await check(name('GetExtendedAgentCard, none declared, is UnsupportedOperationError (v1.0 §3.3.4)'), async () => {
    need();
    // Client.getAgentCard() asks the server only when the card says it has an extended card.
    const e = await expectError(
      () => client.transport.getExtendedAgentCard({ tenant: '' }, { serviceParameters: { 'A2A-Version': '1.0' } }),
      'GetExtendedAgentCard',
    );
    expectA2AError(e, transport, 'UnsupportedOperationError', 'GetExtendedAgentCard');
  });

  await check(name('SendStreamingMessage streams the task, updates, and ends completed'), async () => {
    need();
    const text = uniqueText(`stream ${label}`);
    const events = [];
    for await (const ev of client.sendMessageStream(sendReq(text, { metadata: SHORTISH }))) events.push(ev);
    const kinds = events.map((e) => e.payload?.$case);
    assert(events.length >= 2 && kinds[0] === 'task', `events: ${kinds.join(',')}, want task first and updates`);
    const last = events[events.length - 1].payload;
    assert(last.value.status?.state === TaskState.TASK_STATE_COMPLETED, `stream ended with ${last.$case} ${stateName(last.value.status?.state)}`);
    const echoed = events.some(
      (e) =>
        (e.payload.$case === 'artifactUpdate' && texts(e.payload.value.artifact?.parts).some((t) => t.includes(text))) ||
        (e.payload.$case === 'task' && echoes(e.payload.value, text)),
    );
    assert(echoed, `no artifact in the stream contains "${text}"`);
    const id = eventTaskId(events[0]);
    assert(events.every((e) => eventTaskId(e) === id), 'events of another task in the stream');
  });

  await check(name('SubscribeToTask re-attaches to a running task until it completes'), async () => {
    need();
    const task = asTask(await client.sendMessage(sendReq(uniqueText(`resub ${label}`), { metadata: SHORTISH, returnImmediately: true })), 'SendMessage');
    const events = [];
    for await (const ev of client.resubscribeTask({ id: task.id })) events.push(ev);
    assert(events.length >= 1 && events[0].payload?.$case === 'task', `first event ${events[0]?.payload?.$case}, want task`);
    assert(events.every((e) => eventTaskId(e) === task.id), 'events of another task in the stream');
    const last = events[events.length - 1].payload;
    assert(last.value.status?.state === TaskState.TASK_STATE_COMPLETED, `stream ended with ${last.$case} ${stateName(last.value.status?.state)}`);
  });

  await check(name('SubscribeToTask of an unknown id is TaskNotFoundError'), async () => {
    need();
    const e = await expectError(async () => {
      for await (const ev of client.resubscribeTask({ id: `no-such-task-${randomUUID()}` })) return ev;
    }, 'SubscribeToTask unknown');
    expectA2AError(e, transport, 'TaskNotFoundError', 'SubscribeToTask unknown');
  });
}

// ================================================================= v0.3 over HTTP+JSON

function v03Msg(text, metadata) {
  const m = { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] };
  if (metadata) m.metadata = metadata;
  return m;
}

function v03AsTask(result, what) {
  assert(result && result.kind === 'task', `${what}: expected kind "task", got ${JSON.stringify(result)?.slice(0, 120)}`);
  assert(typeof result.id === 'string' && result.id !== '' && result.status?.state, `${what}: task has no id or state`);
  return result;
}

// v0.3's HTTP+JSON is ProtoJSON of v0.3's a2a.proto ("role":"ROLE_USER", "content", "TASK_STATE_COMPLETED",
// {"task": ...} answers and StreamResponse events); the SDK translates it to the object model checked here.
async function runV03() {
  let client;
  const need = () => assert(client, 'no v0.3 REST client (card step failed)');

  await check('v0.3 REST: ClientFactory picks HTTP+JSON from additionalInterfaces', async () => {
    const options = V03ClientFactoryOptions.createFrom(V03ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] });
    client = await new V03ClientFactory(options).createFromUrl(BASE);
    const card = await client.getAgentCard();
    const iface = (card.additionalInterfaces || []).find((i) => String(i.transport).toUpperCase() === 'HTTP+JSON');
    assert(iface, 'card has no additionalInterfaces entry with transport HTTP+JSON');
    assert(client.transport instanceof V03RestTransport, `transport ${client.transport.constructor.name}, want RestTransport`);
  });

  await check('v0.3 REST: blocking and non-blocking message/send, tasks/get', async () => {
    need();
    const text = uniqueText('hello rest v03');
    const t = v03AsTask(await client.sendMessage({ message: v03Msg(text) }), 'message:send');
    assert(t.status.state === 'completed', `state ${t.status.state}`);
    const first = v03AsTask(
      await client.sendMessage({ message: v03Msg(uniqueText('poll rest v03'), SHORTISH), configuration: { blocking: false } }),
      'message:send',
    );
    assert(!['completed', 'failed', 'canceled', 'rejected'].includes(first.status.state), `blocking:false answered ${first.status.state}`);
    const deadline = Date.now() + 15000;
    let got;
    do {
      got = v03AsTask(await client.getTask({ id: first.id }), 'tasks/get');
      if (got.status.state === 'completed') break;
      await sleep(100);
    } while (Date.now() < deadline);
    assert(got.status.state === 'completed', `task stuck in ${got.status.state}`);
  });

  // Both @a2a-js/sdk clients read a v0.3 REST error from a body {"code": <JSON-RPC code>, "message"}.
  await check('v0.3 REST: tasks/get of an unknown id is TaskNotFoundError', async () => {
    need();
    const e = await expectError(() => client.getTask({ id: `no-such-task-${randomUUID()}` }), 'tasks/get unknown');
    assert(e instanceof V03TaskNotFoundError, `got ${describeError(e)}`);
  });

  await check('v0.3 REST: tasks:cancel, and pushNotificationConfigs set / get / list / delete', async () => {
    need();
    const task = v03AsTask(
      await client.sendMessage({ message: v03Msg(uniqueText('push rest v03'), LONG), configuration: { blocking: false } }),
      'message:send',
    );
    try {
      const id = `cfg-${randomUUID().slice(0, 8)}`;
      const set = await client.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { id, url: HOOK_URL, token: 'tok' } });
      assert(set.taskId === task.id && set.pushNotificationConfig?.id === id, `set returned ${JSON.stringify(set)}`);
      const got = await client.getTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: id });
      assert(got.pushNotificationConfig?.url === HOOK_URL, `get returned ${JSON.stringify(got)}`);
      const list = await client.listTaskPushNotificationConfig({ id: task.id });
      assert(Array.isArray(list) && list.some((c) => c.pushNotificationConfig?.id === id), `list returned ${JSON.stringify(list)?.slice(0, 160)}`);
      await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: id });
      const after = await client.listTaskPushNotificationConfig({ id: task.id });
      assert(!after.some((c) => c.pushNotificationConfig?.id === id), 'config still listed after delete');
      const c = v03AsTask(await client.cancelTask({ id: task.id }), 'tasks:cancel');
      assert(c.status.state === 'canceled', `tasks:cancel returned ${c.status.state}`);
    } finally {
      await client.cancelTask({ id: task.id }).catch(() => {});
    }
  });

  await check('v0.3 REST: message:stream and tasks:subscribe end with a final completed status', async () => {
    need();
    const events = [];
    for await (const ev of client.sendMessageStream({ message: v03Msg(uniqueText('stream rest v03'), SHORTISH) })) events.push(ev);
    assert(events[0]?.kind === 'task', `first event kind ${events[0]?.kind}`);
    const last = events[events.length - 1];
    assert(last.kind === 'status-update' && last.final && last.status?.state === 'completed', `last event ${JSON.stringify(last).slice(0, 160)}`);
    const task = v03AsTask(
      await client.sendMessage({ message: v03Msg(uniqueText('resub rest v03'), SHORTISH), configuration: { blocking: false } }),
      'message:send',
    );
    const resub = [];
    for await (const ev of client.resubscribeTask({ id: task.id })) resub.push(ev);
    const end = resub[resub.length - 1];
    assert(end?.kind === 'status-update' && end.final && end.status?.state === 'completed', `last event ${JSON.stringify(end)?.slice(0, 160)}`);
  });

  await check('v0.3 REST: GET /v1/card without an extended card is AuthenticatedExtendedCardNotConfiguredError', async () => {
    need();
    const e = await expectError(() => client.transport.getExtendedAgentCard(), 'GET /v1/card');
    assert(e instanceof V03ExtendedCardNotConfiguredError, `got ${describeError(e)}`);
  });
  return client?.transport?.endpoint;
}

// ================================================================= v0.3 over HTTP+JSON, the v1.0 SDK's compat transport

async function runLegacyRest(endpoint) {
  const name = (what) => `v0.3 REST (a2a-v1 LegacyRestTransport): ${what}`;
  const t = endpoint ? new LegacyRestTransport({ endpoint }) : undefined;
  const need = () => assert(t, 'no v0.3 HTTP+JSON endpoint (the v0.3 card step failed)');

  await check(name('SendMessage blocks to a completed task, GetTask reads it'), async () => {
    need();
    const text = uniqueText('legacy rest');
    const task = asTask(await t.sendMessage(sendReq(text)), 'SendMessage');
    assert(task.status.state === TaskState.TASK_STATE_COMPLETED, `state ${stateName(task.status.state)}`);
    assert(echoes(task, text), `no artifact text contains "${text}"`);
    const got = asTask(await t.getTask({ id: task.id }), 'GetTask');
    assert(got.status.state === TaskState.TASK_STATE_COMPLETED && echoes(got, text), 'GetTask reads another task');
    const e = await expectError(() => t.getTask({ id: `no-such-task-${randomUUID()}` }), 'GetTask unknown');
    assert(e?.name === 'TaskNotFoundError', `GetTask unknown: got ${describeError(e)}`);
  });

  await check(name('push configs, CancelTask, then CancelTask again is TaskNotCancelableError'), async () => {
    need();
    const task = await sendLong(t, 'legacy push');
    try {
      const id = `cfg-${randomUUID().slice(0, 8)}`;
      const created = await t.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({ taskId: task.id, id, url: HOOK_URL }));
      assert(created.id === id && created.taskId === task.id && created.url === HOOK_URL, `Create returned ${JSON.stringify(created)}`);
      const got = await t.getTaskPushNotificationConfig({ taskId: task.id, id });
      assert(got.url === HOOK_URL, `Get returned ${JSON.stringify(got)}`);
      const list = await t.listTaskPushNotificationConfig({ taskId: task.id });
      assert((list.configs || []).some((c) => c.id === id), `List returned ${JSON.stringify(list)?.slice(0, 160)}`);
      await t.deleteTaskPushNotificationConfig({ taskId: task.id, id });
      const c = asTask(await t.cancelTask({ id: task.id }), 'CancelTask');
      assert(c.status.state === TaskState.TASK_STATE_CANCELED, `CancelTask returned ${stateName(c.status.state)}`);
      const e = await expectError(() => t.cancelTask({ id: task.id }), 'second CancelTask');
      assert(e?.name === 'TaskNotCancelableError', `second CancelTask: got ${describeError(e)}`);
    } finally {
      await t.cancelTask({ id: task.id }).catch(() => {});
    }
  });

  await check(name('SendStreamingMessage and SubscribeToTask (GET :subscribe) end completed'), async () => {
    need();
    const events = [];
    for await (const ev of t.sendMessageStream(sendReq(uniqueText('legacy stream'), { metadata: SHORTISH }))) events.push(ev);
    assert(events[0]?.payload?.$case === 'task', `first event ${events[0]?.payload?.$case}, want task`);
    const last = events[events.length - 1].payload;
    assert(last.value.status?.state === TaskState.TASK_STATE_COMPLETED, `stream ended with ${last.$case} ${stateName(last.value.status?.state)}`);
    const task = asTask(await t.sendMessage(sendReq(uniqueText('legacy resub'), { metadata: SHORTISH, returnImmediately: true })), 'SendMessage');
    const resub = [];
    for await (const ev of t.resubscribeTask({ id: task.id })) resub.push(ev);
    const end = resub[resub.length - 1]?.payload;
    assert(end?.value?.status?.state === TaskState.TASK_STATE_COMPLETED, `resubscribe ended with ${end?.$case} ${stateName(end?.value?.status?.state)}`);
  });
}

// ================================================================= main

process.on('unhandledRejection', (e) => {
  if (VERBOSE) console.error('unhandled rejection:', e);
});

console.log(`# relay HTTP+JSON and gRPC e2e against ${BASE}`);
let rpc; // JSON-RPC, to read the other bindings' tasks back
let card;
await check('v1 JSON-RPC client and card', async () => {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory()],
    preferredTransports: ['JSONRPC'],
  });
  rpc = await new ClientFactory(options).createFromUrl(BASE);
  card = await rpc.getAgentCard();
  assert(ifaceOf(card, 'HTTP+JSON'), 'card has no supportedInterfaces entry {protocolBinding:"HTTP+JSON", protocolVersion:"1.0"}');
});
for (const b of BINDINGS) {
  if (b.binding === 'GRPC' && card && !ifaceOf(card, 'GRPC')) {
    skipped++;
    console.log('# skipped - v1 gRPC: the card lists no GRPC interface (relay runs without RELAY_GRPC_ADDR)');
    continue;
  }
  await runV1(b, rpc);
}
const v03Endpoint = await runV03();
await runLegacyRest(v03Endpoint);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed === 0 ? 0 : 1);
