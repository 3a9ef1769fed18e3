#!/usr/bin/env node
// Browser test of relay's operator page (/ui), in headless Chromium driven by
// puppeteer-core.
//
// Usage: node ui.mjs [relay binary]        (default /tmp/relay-ui)
//   go build -o /tmp/relay-ui ./cmd/relay && (cd e2e/ui && npm ci && node ui.mjs)
// Env: CHROMIUM (default /usr/bin/chromium; Debian: apt-get install -y chromium),
//      RELAY_UI_REDIS_URL (default: relay's embedded store; scripts/e2e.sh gives it a redis-server),
//      RELAY_UI_SCREENSHOT (default <repo>/docs/ui.png), RELAY_UI_VERBOSE=1 (relay's log).
// Output: "ok - name" / "not ok - name: reason" per check, then a summary;
// exit status 0 when every check passed.
//
// The script starts relay itself (embedded store, an admin token, fast retries)
// and a webhook receiver on 127.0.0.1 whose /fail path answers 500 until told
// otherwise and whose /ok path answers 200; it sends two tasks over JSON-RPC
// (v1.0 SendMessage with a taskPushNotificationConfig), then drives the page.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const BIN = process.argv[2] || '/tmp/relay-ui';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SHOT = process.env.RELAY_UI_SCREENSHOT || path.join(ROOT, 'docs/ui.png');
const VERBOSE = process.env.RELAY_UI_VERBOSE === '1';
// Debian's Chromium, headless, with nothing that reaches beyond loopback
// (no QUIC, background networking, component updates or sync).
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];
const ADMIN_TOKEN = 'ui-e2e-admin-token-7f3a9c21d4';
// Config id and receiver answer with markup in them: the page must show them as text.
const FAIL_CONFIG = 'hook-<img src=x id=xss1>';
const FAIL_BODY = '<b id="xss2">receiver down</b> & "still down"';

// ---------------------------------------------------------------- harness

let passed = 0;
let failed = 0;
let fatal = false;

async function check(name, fn) {
  if (fatal) {
    failed++;
    console.log(`not ok - ${name}: skipped after an earlier failure`);
    return;
  }
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${name}: ${(e && e.message) || e}`.replace(/\n/g, ' '));
    if (VERBOSE && e && e.stack) console.error(e.stack);
  }
}

/** A check later checks depend on: a failure skips them. */
async function must(name, fn) {
  const before = failed;
  await check(name, fn);
  if (failed > before) fatal = true;
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, fn, timeoutMs = 15000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? ` (${last.message})` : ''}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------- processes

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The webhook receiver: /fail answers 500 until mode.fail is false, then 200 after mode.delayMs; /ok answers 200. */
function startReceiver() {
  const mode = { fail: true, delayMs: 0 };
  const hits = { '/fail': [], '/ok': [], '/down': [] };
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const p = req.url.split('?')[0];
      (hits[p] ||= []).push({ at: Date.now(), id: req.headers['a2a-notification-id'] });
      if (p === '/fail' && mode.fail) {
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end(FAIL_BODY);
        return;
      }
      if (p === '/down') {
        res.writeHead(503, { 'Content-Type': 'text/plain' }).end('down for good');
        return;
      }
      if (p === '/fail' || p === '/ok') {
        if (p === '/fail' && mode.delayMs) await sleep(mode.delayMs);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"received":true}');
        return;
      }
      res.writeHead(404).end();
    });
  });
  return new Promise((resolve) => {
    srv.listen(0, '127.0.0.1', () => resolve({ srv, mode, hits, url: `http://127.0.0.1:${srv.address().port}` }));
  });
}

async function startRelay(port) {
  const env = {
    ...process.env,
    RELAY_ADDR: `127.0.0.1:${port}`,
    RELAY_PUBLIC_URL: `http://127.0.0.1:${port}`,
    RELAY_REDIS_URL: process.env.RELAY_UI_REDIS_URL || '', // a redis-server, or the embedded store
    RELAY_AUTH: 'none', // clients: the page uses the management API (admin token) only
    RELAY_ADMIN_TOKENS: ADMIN_TOKEN,
    RELAY_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
    RELAY_RETRY_INITIAL: '300ms',
    RELAY_RETRY_MAX_INTERVAL: '1s',
    RELAY_RETRY_MAX_ATTEMPTS: '3',
    // /fail fails at most 6 times in a row (two notifications, 3 attempts
    // each) and stays enabled; /down fails 12 times and is disabled.
    RELAY_WEBHOOK_DISABLE_AFTER_FAILURES: '7',
    RELAY_LOG_LEVEL: VERBOSE ? 'debug' : 'info',
  };
  const child = spawn(BIN, [], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (b) => {
    log = (log + b.toString()).slice(-20000);
    if (VERBOSE) process.stderr.write(b);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.on('exit', (code, sig) => resolve(`relay exited (${code ?? sig})`)));
  const base = `http://127.0.0.1:${port}`;
  const up = waitFor('relay /healthz', async () => (await fetch(`${base}/healthz`)).ok, 15000, 100);
  const r = await Promise.race([up, exited.then((m) => Promise.reject(new Error(`${m}: ${log.slice(-2000)}`)))]);
  assert(r, 'relay did not come up');
  return { child, base, log: () => log };
}

async function rpc(base, method, params) {
  const res = await fetch(`${base}/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.code} ${body.error.message}`);
  return body.result;
}

async function adminGet(base, p) {
  const res = await fetch(base + p, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  return { status: res.status, body: await res.json().catch(() => null) };
}

// ---------------------------------------------------------------- page helpers

const text = (page, sel) => page.$eval(sel, (el) => el.textContent.trim()).catch(() => '');
const visible = (page, sel) => page.$eval(sel, (el) => !el.hidden && el.getClientRects().length > 0).catch(() => false);

async function detailStatus(page) {
  return page.$eval('#d-fields', (dl) => {
    const dts = [...dl.querySelectorAll('dt')];
    const i = dts.findIndex((d) => d.textContent === 'Status');
    return i < 0 ? '' : dl.querySelectorAll('dd')[i].textContent.trim();
  }).catch(() => '');
}

async function attemptRows(page) {
  return page.$$eval('#attempts-body tr', (trs) =>
    trs
      .filter((tr) => tr.cells.length === 7)
      .map((tr) => ({
        attempt: tr.cells[1].textContent.trim(),
        http: tr.cells[2].textContent.trim(),
        errorClass: (tr.cells[3].querySelector('code') || {}).textContent || '',
        latency: tr.cells[4].textContent.trim(),
        response: tr.cells[5].textContent,
        outcome: (tr.cells[6].querySelector('.badge') || {}).textContent || '',
      })),
  );
}

// ---------------------------------------------------------------- the test

async function main() {
  assert(fs.existsSync(BIN), `no relay binary at ${BIN} (go build -o ${BIN} ./cmd/relay)`);
  assert(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
  const recv = await startReceiver();
  const relay = await startRelay(await freePort());
  const { base } = relay;
  let browser;
  let profile;
  const cleanup = async () => {
    if (browser) await browser.close().catch(() => {});
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    relay.child.kill('SIGTERM');
    recv.srv.close();
  };
  try {
    // Two tasks: one whose webhook fails, one whose webhook works.
    const failTask = (
      await rpc(base, 'SendMessage', {
        message: { role: 'ROLE_USER', messageId: 'm-ui-fail', parts: [{ text: 'fail me' }], metadata: { demo: { outcome: 'rejected' } } },
        configuration: { taskPushNotificationConfig: { id: FAIL_CONFIG, url: `${recv.url}/fail` } },
      })
    ).task;
    const okTask = (
      await rpc(base, 'SendMessage', {
        message: { role: 'ROLE_USER', messageId: 'm-ui-ok', parts: [{ text: 'deliver me' }] },
        configuration: { taskPushNotificationConfig: { id: 'hook-ok', url: `${recv.url}/ok` } },
      })
    ).task;
    assert(failTask && failTask.id && okTask && okTask.id, 'SendMessage answered no task');

    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-ui-chromium-'));
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: profile, // a fresh profile each run, removed in cleanup
      args: CHROMIUM_ARGS,
      defaultViewport: { width: 1280, height: 800 },
    });
    const page = await browser.newPage();
    const problems = []; // uncaught errors, CSP / Trusted Types violations
    const offsite = []; // requests to anything but relay
    const detailGets = []; // times the page fetched one delivery
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      const t = m.text();
      if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of (401|400|409|404)/.test(t)) problems.push(`console: ${t}`);
    });
    page.on('request', (r) => {
      const u = r.url();
      // data: URLs leave nothing: Chromium's own picker icon of a
      // datetime-local input (the Replay form) is one.
      if (!u.startsWith(base + '/') && !u.startsWith('data:')) offsite.push(u);
      if (/\/v1\/deliveries\/[^/?]+$/.test(new URL(u).pathname) && r.method() === 'GET') detailGets.push(Date.now());
    });
    page.on('dialog', (d) => d.accept());

    await must('GET /ui serves the page (redirect to /ui/, CSP header)', async () => {
      const res = await page.goto(`${base}/ui`, { waitUntil: 'networkidle0' });
      assert(res.ok(), `status ${res.status()}`);
      assert(new URL(page.url()).pathname === '/ui/', `landed on ${page.url()}`);
      const csp = res.headers()['content-security-policy'] || '';
      assert(csp.includes("default-src 'self'") && !csp.includes('unsafe-inline'), `CSP ${csp}`);
      assert((await page.title()).startsWith('relay'), `title ${await page.title()}`);
    });

    await must('a 401 shows the admin token form; the token is kept in sessionStorage', async () => {
      await waitFor('the token form', () => visible(page, '#token-panel'));
      const why = await text(page, '#token-reason');
      assert(/Bearer/.test(why), `reason ${why}`);
      await page.type('#token-input', ADMIN_TOKEN);
      await page.click('#token-form button[type=submit]');
      await waitFor('the token form to go', async () => !(await visible(page, '#token-panel')));
      const kept = await page.evaluate(() => sessionStorage.getItem('relay.adminToken'));
      assert(kept === ADMIN_TOKEN, 'token not in sessionStorage');
      assert(await visible(page, '#token-status'), 'no "token set" note');
    });

    await check('"delivered" without a task id shows the API error', async () => {
      await page.select('#f-status', 'delivered');
      await page.click('#f-show');
      const err = await waitFor('the list error', async () => (await visible(page, '#list-error')) && text(page, '#list-error'));
      assert(/task=/.test(err), `error ${err}`);
      await page.select('#f-status', '');
    });

    let failing = [];
    await must('filtering by task id lists its deliveries', async () => {
      await page.$eval('#f-task', (el) => (el.value = ''));
      await page.type('#f-task', failTask.id);
      await page.click('#f-show');
      failing = await waitFor('two deliveries of the failing task', async () => {
        const rows = await page.$$eval('#list-body tr[data-id]', (trs) =>
          trs.map((tr) => ({ id: tr.dataset.id, config: tr.cells[2].textContent, status: tr.cells[3].textContent })),
        );
        return rows.length === 2 && rows;
      });
      assert(failing.every((r) => r.config === FAIL_CONFIG), `configs ${failing.map((r) => r.config)}`);
      assert(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get('task') === failTask.id, 'filter not in the URL');
    });

    await check('data is rendered as text, never as markup', async () => {
      const injected = await page.$$eval('#xss1, #xss2, #list-body img, #list-body b', (els) => els.length);
      assert(injected === 0, `${injected} injected elements`);
    });

    let sentBefore = 0;
    let redriveMsg = '';
    const target = failing[failing.length - 1]; // the older one: the task's first notification
    await must('opening a delivery shows its attempts: 500s with error class http', async () => {
      await page.click(`#list-body tr[data-id="${target.id}"] a.open`);
      await waitFor('the detail panel', () => visible(page, '#detail'));
      assert((await text(page, '#d-id')) === target.id, 'wrong delivery shown');
      const rows = await waitFor('a logged attempt', async () => {
        const r = await attemptRows(page);
        return r.length > 0 && r;
      });
      assert(rows[0].http === '500' && rows[0].errorClass === 'http' && rows[0].outcome === 'retry', `first attempt ${JSON.stringify(rows[0])}`);
      assert(rows[0].response.includes('<b id="xss2">receiver down</b>'), `excerpt ${rows[0].response}`);
      assert(/^\d+\.\d$/.test(rows[0].latency), `latency ${rows[0].latency}`);
    });

    await must('the view follows the retries until the delivery is dead', async () => {
      await waitFor('status dead', async () => (await detailStatus(page)) === 'dead', 20000);
      const rows = await attemptRows(page);
      assert(rows.length === 3, `${rows.length} attempts, want 3`);
      assert(rows.every((r) => r.http === '500'), `statuses ${rows.map((r) => r.http)}`);
      assert(rows[2].outcome === 'dead', `last outcome ${rows[2].outcome}`);
      assert(/Not refreshing/.test(await text(page, '#d-live')), `live line ${await text(page, '#d-live')}`);
      assert((await text(page, `#list-body tr[data-id="${target.id}"] .badge`)) === 'dead', 'list row not updated');
    });

    await check('no polling while the delivery is dead', async () => {
      const n = detailGets.length;
      await sleep(4500);
      assert(detailGets.length === n, `${detailGets.length - n} fetches in 4.5 s`);
    });

    await must('Redeliver after the receiver recovers: the page follows it to delivered', async () => {
      recv.mode.fail = false;
      recv.mode.delayMs = 2500; // the redelivery stays in flight a while: room for the next check
      const before = detailGets.length;
      await page.click('#d-redeliver');
      await waitFor('status pending', async () => (await detailStatus(page)) === 'pending', 5000, 50);
      assert(/Redelivery queued/.test(await text(page, '#d-msg')), `message ${await text(page, '#d-msg')}`);

      // Still in flight: the API refuses a second redelivery; the page shows why.
      await page.click('#d-redeliver');
      const err = await waitFor('the refusal', async () => (await visible(page, '#d-action-error')) && text(page, '#d-action-error'), 3000, 50);
      assert(/still pending or retrying/.test(err), `refusal ${err}`);

      await waitFor('status delivered', async () => (await detailStatus(page)) === 'delivered', 15000);
      assert(detailGets.length - before >= 2, 'the page did not poll');
      const rows = await attemptRows(page);
      const last = rows[rows.length - 1];
      assert(last.http === '200' && last.outcome === 'delivered', `last attempt ${JSON.stringify(last)}`);
      assert(/Not refreshing/.test(await text(page, '#d-live')), 'still refreshing');
      assert((await text(page, `#list-body tr[data-id="${target.id}"] .badge`)) === 'delivered', 'list row not updated');
    });

    await check('polling stops once delivered', async () => {
      const n = detailGets.length;
      await sleep(4500);
      assert(detailGets.length === n, `${detailGets.length - n} fetches in 4.5 s`);
    });

    await check('the chart is drawn (or says "no data")', async () => {
      await page.click('#list-refresh'); // reloads the stats too
      const stats = await adminGet(base, '/v1/stats/deliveries?minutes=60');
      const st = await waitFor('the chart', () => page.$eval('#chart svg', (svg) => svg.dataset.state).catch(() => ''));
      if (stats.status === 200) {
        const want = stats.body.minutes.some((m) => m.delivered || m.failed || m.dead) ? 'data' : 'nodata';
        await waitFor(`chart state ${want}`, async () => (await page.$eval('#chart svg', (svg) => svg.dataset.state)) === want, 5000);
        if (want === 'data') {
          const bars = await page.$$eval('#chart svg rect.b-delivered, #chart svg rect.b-failed', (r) => r.length);
          assert(bars > 0, 'no bars');
        }
      } else {
        assert(st === 'nodata' && /no data/i.test(await text(page, '#chart-summary')), `state ${st} with stats ${stats.status}`);
      }
    });

    await check(`screenshot ${path.relative(ROOT, SHOT)} (1280x800)`, async () => {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.evaluate(() => document.activeElement && document.activeElement.blur());
      fs.mkdirSync(path.dirname(SHOT), { recursive: true });
      await page.screenshot({ path: SHOT, type: 'png' });
      const b = fs.readFileSync(SHOT);
      assert(b.readUInt32BE(16) === 1280 && b.readUInt32BE(20) === 800, `size ${b.readUInt32BE(16)}x${b.readUInt32BE(20)}`);
    });

    await check('the dead view offers "Redrive dead letters", and it works', async () => {
      await page.select('#f-status', 'dead');
      await page.click('#f-show');
      await waitFor('the redrive button', () => visible(page, '#redrive'));
      const dead = await waitFor('one dead letter left', async () => {
        const ids = await page.$$eval('#list-body tr[data-id]', (trs) => trs.map((tr) => tr.dataset.id));
        return ids.length === 1 && ids;
      });
      assert(dead[0] !== target.id, 'the redelivered one is still dead');
      recv.mode.delayMs = 0;
      sentBefore = recv.hits['/fail'].filter((h) => h.id === target.id).length;
      await page.click('#redrive'); // confirm() is accepted
      redriveMsg = await waitFor('the redrive answer', async () => /queued again/.test(await text(page, '#redrive-msg')) && text(page, '#redrive-msg'));
      const d = await waitFor('the redriven letter delivered', async () => {
        const r = await adminGet(base, `/v1/deliveries/${encodeURIComponent(dead[0])}`);
        return r.body && r.body.status === 'delivered' && r.body;
      });
      assert(d.status === 'delivered', 'not delivered');
    });

    // Redrive reads the dead-letter stream; a letter redelivered on its own
    // (and delivered since) must not be sent once more.
    await check('redrive sends only the dead letters the dead view lists', async () => {
      await sleep(1500);
      const again = recv.hits['/fail'].filter((h) => h.id === target.id).length - sentBefore;
      assert(/^1 dead letter/.test(redriveMsg) && again === 0,
        `redrive answered "${redriveMsg}" and sent the delivered ${target.id} ${again} more time(s)`);
    });

    await check('the healthy task’s deliveries show as delivered', async () => {
      await page.$eval('#f-task', (el) => (el.value = ''));
      await page.type('#f-task', okTask.id);
      await page.select('#f-status', 'delivered');
      await page.click('#f-show');
      await waitFor('delivered rows', async () => {
        const st = await page.$$eval('#list-body tr[data-id] .badge', (b) => b.map((x) => x.textContent));
        return st.length > 0 && st.every((x) => x === 'delivered');
      });
    });

    await check('the endpoints view shows the endpoint that kept failing disabled; Enable enables it; Configs lists its push configs', async () => {
      for (const n of [1, 2]) {
        await rpc(base, 'SendMessage', {
          message: { role: 'ROLE_USER', messageId: `m-ui-down-${n}`, parts: [{ text: 'down' }], metadata: { demo: { outcome: 'rejected' } } },
          configuration: { taskPushNotificationConfig: { id: 'hook-down', url: `${recv.url}/down` } },
        });
      }
      const downURL = `${recv.url}/down`;
      const row = `#ep-body tr[data-id]`;
      const disabled = await waitFor('the /down endpoint disabled in the view', async () => {
        await page.click('#ep-refresh');
        await sleep(200);
        const rows = await page.$$eval(row, (trs) =>
          trs.map((tr) => ({ id: tr.dataset.id, url: tr.cells[0].textContent, state: tr.cells[1].querySelector('.badge').textContent,
            rate: tr.cells[2].textContent, error: tr.cells[4].textContent, button: !!tr.cells[1].querySelector('button') })),
        );
        return rows.find((r) => r.url === downURL && r.state === 'disabled');
      }, 30000, 300);
      assert(disabled.button && /HTTP 503/.test(disabled.error) && /^0\.0 %/.test(disabled.rate), `row ${JSON.stringify(disabled)}`);
      const others = await page.$$eval(row, (trs) => trs.filter((tr) => tr.cells[1].textContent.includes('disabled')).length);
      assert(others === 1, `${others} disabled endpoints, want only /down`);
      await page.click(`#ep-body tr[data-id="${disabled.id}"] button`); // confirm() is accepted
      await waitFor('the enabled answer', async () => /enabled again/.test(await text(page, '#ep-msg')));
      await waitFor('the row enabled', async () =>
        (await page.$eval(`#ep-body tr[data-id="${disabled.id}"] .badge`, (b) => b.textContent).catch(() => '')) === 'enabled');
      const api = await adminGet(base, `/v1/endpoints/${disabled.id}`);
      assert(api.status === 200 && api.body.state === 'enabled', `API says ${JSON.stringify(api.body)}`);
      // Expanded, the endpoint shows its two push configs, each failing on its own.
      await page.click(`#ep-body tr[data-id="${disabled.id}"] td:last-child button`);
      const items = await waitFor('the endpoint’s configs', async () => {
        const li = await page.$$eval(`#ep-body tr[data-configs-of="${disabled.id}"] li`, (ls) =>
          ls.map((l) => ({ config: l.dataset.config, text: l.textContent })));
        return li.length === 2 && li;
      });
      assert(items.every((i) => i.config === 'hook-down' && / 0 ok, [1-9]\d* failed, [1-9]\d* in a row/.test(i.text) && /HTTP 503/.test(i.text)),
        `configs ${JSON.stringify(items)}`);
    });

    await check('no script error, CSP violation or request beyond relay', async () => {
      assert(problems.length === 0, problems.join(' | '));
      assert(offsite.length === 0, `requests to ${offsite.join(', ')}`);
    });
  } finally {
    await cleanup();
  }
}

const started = Date.now();
main()
  .catch((e) => {
    failed++;
    console.log(`not ok - setup: ${(e && e.message) || e}`.replace(/\n/g, ' '));
  })
  .finally(() => {
    console.log(`${passed} passed, ${failed} failed (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    // Exit now: after a failed setup a server or a poll may still hold the event loop.
    process.exit(failed ? 1 : 0);
  });
