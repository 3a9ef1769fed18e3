#!/usr/bin/env node
// relay's Standard Webhooks signatures, verified by a receiver in Node:
//   v1  (HMAC-SHA256 under a push config's own whsec_ secret) with the reference library,
//       the npm package `standardwebhooks` (Webhook.verify);
//   v1a (ed25519 under relay's published keys) with node:crypto, as the Standard Webhooks spec
//       defines it (the npm library verifies v1 only), against the whpk_ keys relay lists at
//       /.well-known/standard-webhooks.json and the same keys in its JWKS.
//
// Usage: node standard_webhooks.mjs [baseURL]   (or RELAY_URL=..., default http://127.0.0.1:8080)
// The relay must be allowed to POST to loopback (RELAY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8): this script
// runs the webhook sink on 127.0.0.1. RELAY_API_KEY, when set, is sent as X-API-Key.
// Output: "ok - name" or "not ok - name: reason" per check, then "N passed, M failed".
// Exit status: 0 when every check passed, 1 otherwise.

import { createServer } from 'node:http';
import { createPublicKey, generateKeyPairSync, randomBytes, randomUUID, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

const BASE = (process.argv[2] || process.env.RELAY_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const TIMEOUT_MS = Number(process.env.RELAY_E2E_TIMEOUT_MS || 20000);
const EXTENSION = 'https://github.com/a2arelay/relay/blob/main/docs/webhook-extension.md';

let passed = 0;
let failed = 0;

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${name}: ${e && e.message ? e.message : e}`);
  }
}

// ---------------------------------------------------------------- the sink

const hits = new Map(); // path -> [{headers, body}]
const waiters = [];

const sink = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const list = hits.get(req.url) || [];
    list.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    hits.set(req.url, list);
    res.writeHead(204).end();
    for (const w of waiters.splice(0)) w();
  });
});

// waitFinal resolves with every hit on path once one of them carries the task's final state.
async function waitFinal(path) {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const list = hits.get(path) || [];
    if (list.some((h) => h.body.includes('TASK_STATE_COMPLETED'))) return list;
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`${path}: ${list.length} notifications, none final, after ${TIMEOUT_MS} ms`);
    await new Promise((resolve) => {
      const t = setTimeout(resolve, Math.min(left, 500));
      waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

// ---------------------------------------------------------------- relay

function relayHeaders(extra = {}) {
  const h = { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...extra };
  if (process.env.RELAY_API_KEY) h['X-API-Key'] = process.env.RELAY_API_KEY;
  return h;
}

// send starts a demo task whose inline push config points at hookURL, asking for standardWebhooks.
async function send(hookURL, standardWebhooks) {
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: {
      message: { role: 'ROLE_USER', messageId: randomUUID(), parts: [{ text: 'sign me' }] },
      configuration: {
        taskPushNotificationConfig: { url: hookURL, metadata: { [EXTENSION]: { standardWebhooks } } },
      },
    },
  };
  const res = await fetch(`${BASE}/`, { method: 'POST', headers: relayHeaders(), body: JSON.stringify(body) });
  const out = await res.json();
  assert(!out.error, `SendMessage: ${JSON.stringify(out.error)}`);
}

async function getJSON(path) {
  const res = await fetch(`${BASE}${path}`, { headers: relayHeaders() });
  assert(res.ok, `GET ${path}: ${res.status}`);
  return res.json();
}

// verifyV1a: some v1a signature in webhook-signature is key's over "<id>.<timestamp>.<body>".
function verifyV1a(hit, key) {
  const content = Buffer.from(`${hit.headers['webhook-id']}.${hit.headers['webhook-timestamp']}.${hit.body}`);
  return (hit.headers['webhook-signature'] || '').split(' ').some((entry) => {
    const [scheme, b64] = entry.split(',');
    return scheme === 'v1a' && verify(null, content, key, Buffer.from(b64 || '', 'base64'));
  });
}

function ed25519Key(rawBase64) {
  const x = Buffer.from(rawBase64, 'base64').toString('base64url');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
}

// ---------------------------------------------------------------- checks

await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
const hook = `http://127.0.0.1:${sink.address().port}`;

await check('v1 notifications verify with the standardwebhooks library', async () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  await send(`${hook}/v1`, { scheme: 'v1', secret });
  const list = await waitFinal('/v1');
  const wh = new Webhook(secret);
  const wrong = new Webhook(`whsec_${randomBytes(32).toString('base64')}`);
  for (const h of list) {
    wh.verify(h.body, h.headers); // throws when it does not verify
    assert(h.headers['webhook-id'] === h.headers['a2a-notification-id'], 'webhook-id is not the notification id');
    let refused = false;
    try {
      wrong.verify(h.body, h.headers);
    } catch {
      refused = true;
    }
    assert(refused, 'a wrong secret verifies');
  }
});

await check('v1a notifications verify with relay\'s published whpk_ key', async () => {
  await send(`${hook}/v1a`, { scheme: 'v1a' });
  const list = await waitFinal('/v1a');
  const { keys } = await getJSON('/.well-known/standard-webhooks.json');
  assert(keys.length > 0 && keys[0].current && keys[0].publicKey.startsWith('whpk_'), `keys ${JSON.stringify(keys)}`);
  const key = ed25519Key(keys[0].publicKey.slice('whpk_'.length));
  const { publicKey: other } = generateKeyPairSync('ed25519');
  for (const h of list) {
    assert(verifyV1a(h, key), `v1a does not verify: ${JSON.stringify(h.headers)}`);
    assert(!verifyV1a(h, other), 'another key verifies');
    assert(h.headers['webhook-id'] === h.headers['a2a-notification-id'], 'webhook-id is not the notification id');
  }
  const jwks = await getJSON('/.well-known/jwks.json');
  const x = Buffer.from(keys[0].publicKey.slice('whpk_'.length), 'base64').toString('base64url');
  assert(jwks.keys.some((k) => k.kty === 'OKP' && k.crv === 'Ed25519' && k.x === x), 'the v1a key is not in the JWKS');
});

sink.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
