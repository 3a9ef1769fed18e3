#!/usr/bin/env node
// End-to-end checks of a running relay with the official A2A JavaScript clients:
//   a2a-v1  = @a2a-js/sdk@1.3.0  (A2A v1.0, JSON-RPC, sends "A2A-Version: 1.0")
//   a2a-v03 = @a2a-js/sdk@0.3.14 (A2A v0.3, JSON-RPC, no version header)
// plus raw fetch() calls in the v0.1 dialect (tasks/send, sessionId, part "type").
//
// Usage: node clients.mjs [baseURL]     (or RELAY_URL=..., default http://127.0.0.1:8080)
// Output: one line per check, "ok - name" or "not ok - name: reason", then "N passed, M failed".
// Exit status: 0 when every check passed, 1 otherwise.
//
// The demo agent is driven through message metadata:
//   {"demo":{"steps":50,"delayMs":100}}      makes a task long-running
//   {"demo":{"outcome":"input-required"}}    makes the first turn stop at input-required
// Push configs point at http://127.0.0.1:9/hook (nothing listens there; deliveries just fail).
// Env: RELAY_E2E_TIMEOUT_MS (per check, default 20000), RELAY_E2E_VERBOSE=1 (stack traces).

import { randomUUID } from 'node:crypto';

import { ClientFactory as V1ClientFactory } from 'a2a-v1/client';
import { Role, TaskState } from 'a2a-v1';
import { ClientFactory as V03ClientFactory } from 'a2a-v03/client';

const BASE = (process.argv[2] || process.env.RELAY_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const CHECK_TIMEOUT_MS = Number(process.env.RELAY_E2E_TIMEOUT_MS || 20000);
const VERBOSE = process.env.RELAY_E2E_VERBOSE === '1';
const HOOK_URL = 'http://127.0.0.1:9/hook';
const HOOK_TOKEN = 'tok';
const LONG = { demo: { steps: 50, delayMs: 100 } }; // about 5 s of work
const SHORTISH = { demo: { steps: 5, delayMs: 200 } }; // about 1 s of work

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
    const reason = describeError(e).replace(/\s+/g, ' ').slice(0, 400);
    console.log(`not ok - ${name}: ${reason}`);
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

/** The JSON-RPC error code carried by an error from either SDK (or from rawRpc). */
function rpcCode(e) {
  if (!e || typeof e !== 'object') return undefined;
  if (typeof e.envelopeCode === 'number') return e.envelopeCode; // a2a-v1 JsonRpc*Error
  if (e.errorResponse?.error && typeof e.errorResponse.error.code === 'number') return e.errorResponse.error.code; // a2a-v03
  if (e.cause && e.cause !== e) return rpcCode(e.cause); // SSE errors wrap the mapped error in cause
  if (typeof e.code === 'number') return e.code; // rawRpc
  return undefined;
}

function expectCode(e, code, what) {
  const got = rpcCode(e);
  assert(got === code, `${what}: expected JSON-RPC error ${code}, got ${got === undefined ? describeError(e) : got}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const uuid = () => randomUUID(); // node:crypto's: Node 18 (Debian 12) has no global crypto in modules
const uniqueText = (label) => `${label} ${uuid().slice(0, 8)}`;

// ---------------------------------------------------------------- v1.0 helpers (a2a-v1 object model)

const V1_TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
const v1StateName = (s) => TaskState[s] ?? String(s);

function v1Msg(text, { metadata, taskId, contextId } = {}) {
  const m = {
    messageId: uuid(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text } }],
  };
  if (metadata) m.metadata = metadata;
  if (taskId) m.taskId = taskId;
  if (contextId) m.contextId = contextId;
  return m;
}

function v1AsTask(result, what) {
  assert(result && typeof result === 'object', `${what}: empty result`);
  assert(!('messageId' in result), `${what}: got a Message, expected a Task`);
  assert(typeof result.id === 'string' && result.id !== '', `${what}: task has no id`);
  assert(result.status, `${what}: task has no status`);
  return result;
}

function v1Texts(parts) {
  return (parts || []).filter((p) => p?.content?.$case === 'text').map((p) => p.content.value);
}

function v1ArtifactEchoes(task, text) {
  return (task.artifacts || []).some((a) => v1Texts(a.parts).some((t) => t.includes(text)));
}

async function v1PollUntil(client, taskId, pred, ms = 15000) {
  const deadline = Date.now() + ms;
  let task;
  while (Date.now() < deadline) {
    task = v1AsTask(await client.getTask({ id: taskId }), 'GetTask');
    if (pred(task)) return task;
    await sleep(100);
  }
  throw new CheckError(`task ${taskId} stuck in ${v1StateName(task?.status?.state)}`);
}

// ---------------------------------------------------------------- v0.3 helpers (plain JSON model)

const V03_TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);

function v03Msg(text, { metadata, taskId, contextId } = {}) {
  const m = { kind: 'message', messageId: uuid(), role: 'user', parts: [{ kind: 'text', text }] };
  if (metadata) m.metadata = metadata;
  if (taskId) m.taskId = taskId;
  if (contextId) m.contextId = contextId;
  return m;
}

function v03AsTask(result, what) {
  assert(result && typeof result === 'object', `${what}: empty result`);
  assert(result.kind === 'task', `${what}: expected kind "task", got ${JSON.stringify(result.kind)}`);
  assert(typeof result.id === 'string' && result.id !== '', `${what}: task has no id`);
  assert(typeof result.contextId === 'string' && result.contextId !== '', `${what}: task has no contextId`);
  assert(result.status && typeof result.status.state === 'string', `${what}: task has no status.state`);
  return result;
}

function v03ArtifactEchoes(task, text) {
  return (task.artifacts || []).some((a) =>
    (a.parts || []).some((p) => p.kind === 'text' && typeof p.text === 'string' && p.text.includes(text)),
  );
}

async function v03PollUntil(client, taskId, pred, ms = 15000) {
  const deadline = Date.now() + ms;
  let task;
  while (Date.now() < deadline) {
    task = v03AsTask(await client.getTask({ id: taskId }), 'tasks/get');
    if (pred(task)) return task;
    await sleep(100);
  }
  throw new CheckError(`task ${taskId} stuck in ${task?.status?.state}`);
}

// ---------------------------------------------------------------- v0.1 helpers (raw fetch)

let rawSeq = 0;

/** POSTs one JSON-RPC request; returns the result or throws {code, message, data}. Checks the id echo. */
async function rawRpc(url, method, params, { id } = {}) {
  const reqId = id ?? `v01-${++rawSeq}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: reqId, method, params }),
  });
  const body = await res.text();
  let json;
  try {
    json = JSON.parse(body);
  } catch {
    throw new CheckError(`${method}: HTTP ${res.status}, body is not JSON: ${body.slice(0, 120)}`);
  }
  assert(json.jsonrpc === '2.0', `${method}: response jsonrpc is ${JSON.stringify(json.jsonrpc)}`);
  assert(json.id === reqId, `${method}: response id ${JSON.stringify(json.id)} != request id ${JSON.stringify(reqId)}`);
  if (json.error) {
    const err = new Error(`${method}: ${json.error.message}`);
    err.code = json.error.code;
    err.data = json.error.data;
    throw err;
  }
  assert('result' in json, `${method}: response has neither result nor error`);
  return json.result;
}

function v01Texts(parts) {
  return (parts || []).filter((p) => p?.type === 'text').map((p) => p.text);
}

function v01AsTask(result, what, id) {
  assert(result && typeof result === 'object', `${what}: empty result`);
  assert(result.id === id, `${what}: task id ${JSON.stringify(result.id)} != ${JSON.stringify(id)}`);
  assert(result.status && typeof result.status.state === 'string', `${what}: task has no status.state`);
  return result;
}

// ================================================================= v1.0 (@a2a-js/sdk 1.3.0)

async function runV1() {
  let client;
  let completedTask; // from the blocking send
  let polledTask; // from the non-blocking send
  let longTask; // canceled in the cancel check

  await check('v1 fetch agent card and create client', async () => {
    client = await new V1ClientFactory().createFromUrl(BASE);
    assert(client.protocolVersion === '1.0', `client speaks ${client.protocolVersion}, want 1.0`);
    const card = await client.getAgentCard();
    const ifaces = card.supportedInterfaces || [];
    assert(
      ifaces.some((i) => String(i.protocolBinding).toUpperCase() === 'JSONRPC' && i.protocolVersion === '1.0'),
      'card has no supportedInterfaces entry {protocolBinding:"JSONRPC", protocolVersion:"1.0"}',
    );
  });
  const need = () => assert(client, 'no v1 client (card step failed)');

  await check('v1 blocking SendMessage returns completed task echoing the text', async () => {
    need();
    const text = uniqueText('hello v1');
    const task = v1AsTask(await client.sendMessage({ message: v1Msg(text) }), 'SendMessage');
    assert(
      task.status.state === TaskState.TASK_STATE_COMPLETED,
      `state ${v1StateName(task.status.state)}, want TASK_STATE_COMPLETED`,
    );
    assert(task.contextId, 'task has no contextId');
    assert(v1ArtifactEchoes(task, text), `no artifact text contains "${text}"`);
    completedTask = task;
  });

  await check('v1 non-blocking SendMessage (returnImmediately) then GetTask until completed', async () => {
    need();
    const text = uniqueText('poll v1');
    const first = v1AsTask(
      await client.sendMessage({ message: v1Msg(text, { metadata: SHORTISH }), configuration: { returnImmediately: true } }),
      'SendMessage',
    );
    assert(
      !V1_TERMINAL.has(first.status.state),
      `returnImmediately answered with terminal state ${v1StateName(first.status.state)} (did it block?)`,
    );
    const done = await v1PollUntil(client, first.id, (t) => V1_TERMINAL.has(t.status.state));
    assert(done.status.state === TaskState.TASK_STATE_COMPLETED, `ended in ${v1StateName(done.status.state)}`);
    assert(v1ArtifactEchoes(done, text), `no artifact text contains "${text}"`);
    assert(done.contextId === first.contextId, 'contextId changed between SendMessage and GetTask');
    polledTask = done;
  });

  await check('v1 GetTask historyLength 0 omits history, unknown id is -32001', async () => {
    need();
    assert(completedTask, 'no completed task from the blocking send');
    const t = v1AsTask(await client.getTask({ id: completedTask.id, historyLength: 0 }), 'GetTask');
    assert((t.history || []).length === 0, `historyLength 0 returned ${t.history.length} messages`);
    const e = await expectError(() => client.getTask({ id: `no-such-task-${uuid()}` }), 'GetTask unknown');
    expectCode(e, -32001, 'GetTask unknown');
  });

  await check('v1 ListTasks with pageSize and contextId / status filters', async () => {
    need();
    assert(polledTask && completedTask, 'earlier send checks failed');
    // contextId filter, no status given: 1.3.0 then sends "status":"UNRECOGNIZED" (must mean "no filter").
    const byCtx = await client.listTasks({ contextId: polledTask.contextId, pageSize: 10 });
    assert(Array.isArray(byCtx.tasks), 'response has no tasks array');
    assert(byCtx.tasks.some((t) => t.id === polledTask.id), 'task missing from its contextId listing');
    assert(byCtx.tasks.every((t) => t.contextId === polledTask.contextId), 'listing has tasks of another context');
    // status filter with a page size of 1, then follow nextPageToken once.
    const page1 = await client.listTasks({ status: TaskState.TASK_STATE_COMPLETED, pageSize: 1 });
    assert(page1.tasks.length === 1, `pageSize 1 returned ${page1.tasks.length} tasks`);
    assert(
      page1.tasks.every((t) => t.status?.state === TaskState.TASK_STATE_COMPLETED),
      'status filter returned non-completed tasks',
    );
    assert(typeof page1.nextPageToken === 'string', 'nextPageToken missing');
    assert(page1.nextPageToken !== '', 'nextPageToken empty although at least 2 completed tasks exist');
    const page2 = await client.listTasks({
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 1,
      pageToken: page1.nextPageToken,
    });
    assert(page2.tasks.length === 1, `second page returned ${page2.tasks.length} tasks`);
    assert(page2.tasks[0].id !== page1.tasks[0].id, 'second page repeats the first page');
  });

  await check('v1 CancelTask on a long-running task returns TASK_STATE_CANCELED', async () => {
    need();
    longTask = v1AsTask(
      await client.sendMessage({ message: v1Msg(uniqueText('long v1'), { metadata: LONG }), configuration: { returnImmediately: true } }),
      'SendMessage',
    );
    assert(!V1_TERMINAL.has(longTask.status.state), `long task already ${v1StateName(longTask.status.state)}`);
    const canceled = v1AsTask(await client.cancelTask({ id: longTask.id }), 'CancelTask');
    assert(
      canceled.status.state === TaskState.TASK_STATE_CANCELED,
      `CancelTask returned state ${v1StateName(canceled.status.state)}`,
    );
    const again = v1AsTask(await client.getTask({ id: longTask.id }), 'GetTask');
    assert(again.status.state === TaskState.TASK_STATE_CANCELED, `GetTask after cancel: ${v1StateName(again.status.state)}`);
  });

  await check('v1 CancelTask again is -32002 (TaskNotCancelable)', async () => {
    need();
    assert(longTask, 'no canceled task');
    const e = await expectError(() => client.cancelTask({ id: longTask.id }), 'second CancelTask');
    expectCode(e, -32002, 'second CancelTask');
  });

  await check('v1 push config Create / Get / List / Delete', async () => {
    need();
    const task = v1AsTask(
      await client.sendMessage({ message: v1Msg(uniqueText('push v1'), { metadata: LONG }), configuration: { returnImmediately: true } }),
      'SendMessage',
    );
    try {
      const cfgId = `cfg-${uuid().slice(0, 8)}`;
      const created = await client.createTaskPushNotificationConfig({
        taskId: task.id,
        id: cfgId,
        url: HOOK_URL,
        token: HOOK_TOKEN,
      });
      assert(created.id === cfgId, `Create returned id ${JSON.stringify(created.id)}`);
      assert(created.taskId === task.id, `Create returned taskId ${JSON.stringify(created.taskId)}`);
      assert(created.url === HOOK_URL, `Create returned url ${JSON.stringify(created.url)}`);

      const auto = await client.createTaskPushNotificationConfig({ taskId: task.id, url: `${HOOK_URL}2` });
      assert(auto.id, 'Create without id did not assign one');

      const got = await client.getTaskPushNotificationConfig({ taskId: task.id, id: cfgId });
      assert(got.id === cfgId && got.url === HOOK_URL && got.taskId === task.id, `Get returned ${JSON.stringify(got)}`);

      const list = await client.listTaskPushNotificationConfig({ taskId: task.id }); // sends "pageSize": null
      assert(Array.isArray(list.configs), 'List has no configs array');
      const ids = list.configs.map((c) => c.id);
      assert(ids.includes(cfgId) && ids.includes(auto.id), `List ids ${JSON.stringify(ids)}`);

      await client.deleteTaskPushNotificationConfig({ taskId: task.id, id: cfgId });
      const after = await client.listTaskPushNotificationConfig({ taskId: task.id });
      assert(!after.configs.some((c) => c.id === cfgId), 'config still listed after Delete');
      const e = await expectError(() => client.getTaskPushNotificationConfig({ taskId: task.id, id: cfgId }), 'Get deleted');
      expectCode(e, -32001, 'Get deleted config');
    } finally {
      await client.cancelTask({ id: task.id }).catch(() => {});
    }
  });

  await check('v1 GetExtendedAgentCard without a declared extended card is -32004', async () => {
    need();
    // Client.getAgentCard() only calls the server when capabilities.extendedAgentCard is true,
    // so call the transport directly (and add the version header the Client would add).
    const e = await expectError(
      () => client.transport.getExtendedAgentCard({ tenant: '' }, { serviceParameters: { 'A2A-Version': '1.0' } }),
      'GetExtendedAgentCard',
    );
    expectCode(e, -32004, 'GetExtendedAgentCard');
  });

  await check('v1 SendStreamingMessage streams task, updates and ends completed', async () => {
    need();
    const text = uniqueText('stream v1');
    const events = [];
    for await (const ev of client.sendMessageStream({ message: v1Msg(text, { metadata: SHORTISH }) })) events.push(ev);
    assert(events.length >= 2, `only ${events.length} stream events`);
    const kinds = events.map((e) => e.payload?.$case);
    assert(kinds[0] === 'task', `first event is ${kinds[0]}, want task (events: ${kinds.join(',')})`);
    const last = events[events.length - 1].payload;
    const lastState = last.$case === 'task' ? last.value.status?.state : last.value.status?.state;
    assert(lastState === TaskState.TASK_STATE_COMPLETED, `stream ended with ${last.$case} ${v1StateName(lastState)}`);
    const echoed = events.some(
      (e) =>
        (e.payload.$case === 'artifactUpdate' && v1Texts(e.payload.value.artifact?.parts).some((t) => t.includes(text))) ||
        (e.payload.$case === 'task' && v1ArtifactEchoes(e.payload.value, text)),
    );
    assert(echoed, `no artifact in the stream contains "${text}"`);
    const taskId = events[0].payload.value.id;
    assert(
      events.every((e) => (e.payload.$case === 'task' ? e.payload.value.id : e.payload.value.taskId) === taskId),
      'events of another task in the stream',
    );
  });

  await check('v1 SubscribeToTask re-attaches to a running task', async () => {
    need();
    const task = v1AsTask(
      await client.sendMessage({ message: v1Msg(uniqueText('resub v1'), { metadata: SHORTISH }), configuration: { returnImmediately: true } }),
      'SendMessage',
    );
    const events = [];
    for await (const ev of client.resubscribeTask({ id: task.id })) events.push(ev);
    assert(events.length >= 1, 'no events');
    assert(events[0].payload?.$case === 'task', `first event is ${events[0].payload?.$case}, want task`);
    const last = events[events.length - 1].payload;
    const lastState = last.value.status?.state;
    assert(lastState === TaskState.TASK_STATE_COMPLETED, `stream ended with ${last.$case} ${v1StateName(lastState)}`);
  });
}

// ================================================================= v0.3 (@a2a-js/sdk 0.3.14)

async function runV03() {
  let client;
  let longTask;

  await check('v0.3 fetch agent card and create client', async () => {
    client = await new V03ClientFactory().createFromUrl(BASE);
    const card = await client.getAgentCard();
    assert(typeof card.url === 'string' && card.url !== '', 'card has no url');
    assert(card.capabilities && typeof card.capabilities === 'object', 'card has no capabilities');
    assert(card.protocolVersion, 'card has no protocolVersion');
  });
  const need = () => assert(client, 'no v0.3 client (card step failed)');

  await check('v0.3 blocking message/send returns completed task echoing the text', async () => {
    need();
    const text = uniqueText('hello v03');
    const task = v03AsTask(await client.sendMessage({ message: v03Msg(text) }), 'message/send');
    assert(task.status.state === 'completed', `state ${task.status.state}, want completed`);
    assert(v03ArtifactEchoes(task, text), `no artifact text part contains "${text}"`);
  });

  await check('v0.3 non-blocking message/send then tasks/get until completed', async () => {
    need();
    const text = uniqueText('poll v03');
    const first = v03AsTask(
      await client.sendMessage({ message: v03Msg(text, { metadata: SHORTISH }), configuration: { blocking: false } }),
      'message/send',
    );
    assert(!V03_TERMINAL.has(first.status.state), `blocking:false answered with terminal state ${first.status.state}`);
    const done = await v03PollUntil(client, first.id, (t) => V03_TERMINAL.has(t.status.state));
    assert(done.status.state === 'completed', `ended in ${done.status.state}`);
    assert(v03ArtifactEchoes(done, text), `no artifact text part contains "${text}"`);
    const e = await expectError(() => client.getTask({ id: `no-such-task-${uuid()}` }), 'tasks/get unknown');
    expectCode(e, -32001, 'tasks/get unknown');
  });

  await check('v0.3 tasks/cancel on a long-running task returns canceled', async () => {
    need();
    longTask = v03AsTask(
      await client.sendMessage({ message: v03Msg(uniqueText('long v03'), { metadata: LONG }), configuration: { blocking: false } }),
      'message/send',
    );
    assert(!V03_TERMINAL.has(longTask.status.state), `long task already ${longTask.status.state}`);
    const canceled = v03AsTask(await client.cancelTask({ id: longTask.id }), 'tasks/cancel');
    assert(canceled.status.state === 'canceled', `tasks/cancel returned state ${canceled.status.state}`);
  });

  await check('v0.3 tasks/cancel again is -32002', async () => {
    need();
    assert(longTask, 'no canceled task');
    const e = await expectError(() => client.cancelTask({ id: longTask.id }), 'second tasks/cancel');
    expectCode(e, -32002, 'second tasks/cancel');
  });

  await check('v0.3 pushNotificationConfig set / get / list / delete', async () => {
    need();
    const task = v03AsTask(
      await client.sendMessage({ message: v03Msg(uniqueText('push v03'), { metadata: LONG }), configuration: { blocking: false } }),
      'message/send',
    );
    try {
      const cfgId = `cfg-${uuid().slice(0, 8)}`;
      const set = await client.setTaskPushNotificationConfig({
        taskId: task.id,
        pushNotificationConfig: { id: cfgId, url: HOOK_URL, token: HOOK_TOKEN },
      });
      assert(set.taskId === task.id, `set returned taskId ${JSON.stringify(set.taskId)}`);
      assert(set.pushNotificationConfig?.url === HOOK_URL, `set returned ${JSON.stringify(set)}`);
      assert(set.pushNotificationConfig?.id === cfgId, `set returned config id ${JSON.stringify(set.pushNotificationConfig?.id)}`);

      const got = await client.getTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: cfgId });
      assert(got.taskId === task.id && got.pushNotificationConfig?.url === HOOK_URL, `get returned ${JSON.stringify(got)}`);

      const list = await client.listTaskPushNotificationConfig({ id: task.id });
      assert(Array.isArray(list), `list returned ${JSON.stringify(list)?.slice(0, 120)}, want an array`);
      assert(list.some((c) => c.pushNotificationConfig?.id === cfgId), 'config missing from list');

      await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: cfgId });
      const after = await client.listTaskPushNotificationConfig({ id: task.id });
      assert(Array.isArray(after) && !after.some((c) => c.pushNotificationConfig?.id === cfgId), 'config still listed after delete');
    } finally {
      await client.cancelTask({ id: task.id }).catch(() => {});
    }
  });

  await check('v0.3 agent/getAuthenticatedExtendedCard is -32007', async () => {
    need();
    const e = await expectError(() => client.transport.getExtendedAgentCard(), 'agent/getAuthenticatedExtendedCard');
    expectCode(e, -32007, 'agent/getAuthenticatedExtendedCard');
  });

  await check('v0.3 message/stream streams task, updates and a final completed status', async () => {
    need();
    const text = uniqueText('stream v03');
    const events = [];
    for await (const ev of client.sendMessageStream({ message: v03Msg(text, { metadata: SHORTISH }) })) events.push(ev);
    const kinds = events.map((e) => e.kind);
    assert(kinds[0] === 'task', `first event kind ${kinds[0]}, want task (events: ${kinds.join(',')})`);
    const last = events[events.length - 1];
    assert(
      last.kind === 'status-update' && last.final === true && last.status?.state === 'completed',
      `last event ${JSON.stringify(last).slice(0, 160)}, want status-update final:true completed`,
    );
    const echoed = events.some(
      (e) =>
        (e.kind === 'artifact-update' && (e.artifact?.parts || []).some((p) => p.kind === 'text' && p.text?.includes(text))) ||
        (e.kind === 'task' && v03ArtifactEchoes(e, text)),
    );
    assert(echoed, `no artifact in the stream contains "${text}"`);
  });

  await check('v0.3 tasks/resubscribe re-attaches to a running task', async () => {
    need();
    const task = v03AsTask(
      await client.sendMessage({ message: v03Msg(uniqueText('resub v03'), { metadata: SHORTISH }), configuration: { blocking: false } }),
      'message/send',
    );
    const events = [];
    for await (const ev of client.resubscribeTask({ id: task.id })) events.push(ev);
    assert(events.length >= 1, 'no events');
    const last = events[events.length - 1];
    assert(
      last.kind === 'status-update' && last.final === true && last.status?.state === 'completed',
      `last event ${JSON.stringify(last).slice(0, 160)}`,
    );
  });
}

// ================================================================= v0.1 (raw JSON-RPC)

async function runV01() {
  let endpoint;

  await check('v0.1 /.well-known/agent.json card served', async () => {
    const res = await fetch(`${BASE}/.well-known/agent.json`, { headers: { Accept: 'application/json' } });
    assert(res.ok, `HTTP ${res.status}`);
    const card = await res.json();
    assert(typeof card.url === 'string' && card.url !== '', 'card has no url');
    assert(card.capabilities && typeof card.capabilities === 'object', 'card has no capabilities');
    endpoint = card.url;
  });
  const url = () => endpoint || `${BASE}/`;

  await check('v0.1 tasks/send completes with a text artifact (client-chosen id, sessionId)', async () => {
    const id = uuid();
    const sessionId = uuid().replace(/-/g, '');
    const text = uniqueText('hello v01');
    const task = v01AsTask(
      await rawRpc(url(), 'tasks/send', {
        id,
        sessionId,
        acceptedOutputModes: ['text'],
        message: { role: 'user', parts: [{ type: 'text', text }] },
      }),
      'tasks/send',
      id,
    );
    assert(task.sessionId === sessionId, `sessionId ${JSON.stringify(task.sessionId)}, want ${sessionId}`);
    assert(task.status.state === 'completed', `state ${task.status.state}, want completed`);
    assert(
      (task.artifacts || []).some((a) => v01Texts(a.parts).some((t) => t.includes(text))),
      `no artifact part {type:"text"} contains "${text}"`,
    );
    const got = v01AsTask(await rawRpc(url(), 'tasks/get', { id, historyLength: 10 }, { id: 7 }), 'tasks/get', id);
    assert(got.status.state === 'completed', `tasks/get state ${got.status.state}`);
  });

  await check('v0.1 input-required multi-turn via tasks/send with the same id', async () => {
    const id = uuid();
    const sessionId = uuid().replace(/-/g, '');
    const first = v01AsTask(
      await rawRpc(url(), 'tasks/send', {
        id,
        sessionId,
        message: {
          role: 'user',
          parts: [{ type: 'text', text: 'How much is the exchange rate for 1 USD?' }],
          metadata: { demo: { outcome: 'input-required' } },
        },
      }),
      'tasks/send (turn 1)',
      id,
    );
    assert(first.status.state === 'input-required', `turn 1 state ${first.status.state}, want input-required`);
    assert(first.status.message?.role === 'agent', 'input-required status carries no agent message');
    assert(v01Texts(first.status.message.parts).length > 0, 'input-required message has no text part');

    // push config in the v0.1 shape while the task waits for input
    const set = await rawRpc(url(), 'tasks/pushNotification/set', {
      id,
      pushNotificationConfig: { url: HOOK_URL, token: HOOK_TOKEN },
    });
    assert(set.id === id && set.pushNotificationConfig?.url === HOOK_URL, `pushNotification/set returned ${JSON.stringify(set)}`);
    const got = await rawRpc(url(), 'tasks/pushNotification/get', { id });
    assert(got.id === id && got.pushNotificationConfig?.url === HOOK_URL, `pushNotification/get returned ${JSON.stringify(got)}`);

    const text = uniqueText('CAD');
    const second = v01AsTask(
      await rawRpc(url(), 'tasks/send', { id, sessionId, message: { role: 'user', parts: [{ type: 'text', text }] } }),
      'tasks/send (turn 2)',
      id,
    );
    assert(second.status.state === 'completed', `turn 2 state ${second.status.state}, want completed`);
    assert(second.sessionId === sessionId, `turn 2 sessionId ${JSON.stringify(second.sessionId)}`);
    assert((second.artifacts || []).length > 0, 'turn 2 has no artifacts');
  });

  await check('v0.1 tasks/get of an unknown id is -32001', async () => {
    const e = await expectError(() => rawRpc(url(), 'tasks/get', { id: `no-such-task-${uuid()}` }), 'tasks/get unknown');
    expectCode(e, -32001, 'tasks/get unknown');
  });
}

// ================================================================= main

process.on('unhandledRejection', (e) => {
  if (VERBOSE) console.error('unhandled rejection:', e);
});

console.log(`# relay e2e against ${BASE}`);
await runV1();
await runV03();
await runV01();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
