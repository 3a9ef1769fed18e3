// relay · deliveries: the operator page over the management API.
//
// Plain JavaScript, no library, no build step. Everything the API returns is
// rendered as text nodes or attribute values (never as HTML), and the page's
// Content-Security-Policy enforces Trusted Types, so an HTML sink would throw.
//
// State lives in the URL fragment (#task=…&config=…&status=…&d=<delivery id>)
// so views can be linked and the back button works.
'use strict';

(() => {
  const API = new URL('../v1/', location.href); // the page is /ui/, the API /v1/
  const TOKEN_KEY = 'relay.adminToken';
  const POLL_MS = 2000; // live updates of a delivery whose retry is pending
  const STATS_MS = 30000; // chart refresh
  const PAGE_SIZE = 50;
  const LIVE = new Set(['pending', 'failed']);
  const SVG_NS = 'http://www.w3.org/2000/svg';

  const $ = (id) => document.getElementById(id);

  const state = {
    filters: { task: '', config: '', status: '' },
    listLoaded: false,
    cursor: '', // cursor of the page shown ('' = first page)
    cursors: [], // cursors of the pages before it
    nextCursor: '',
    rows: new Map(), // delivery id -> its <tr> in the list
    listGen: 0,
    selected: '', // delivery id shown in the detail panel
    record: null,
    recordKey: '',
    detailGen: 0,
    acting: false, // a Redeliver is in flight
    pollTimer: 0,
    statsTimer: 0,
    chart: null, // what the chart shows: { minutes, why }
  };

  // ------------------------------------------------------------ DOM helpers

  function build(el, attrs, kids) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.setAttribute('class', v);
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === undefined || kid === null || kid === false || kid === '') continue;
      el.append(kid instanceof Node ? kid : String(kid)); // strings become text nodes
    }
    return el;
  }

  /** h('td', {class: 'num'}, 'text', node…): an HTML element with text children. */
  const h = (tag, attrs, ...kids) => build(document.createElement(tag), attrs, kids);
  /** s('rect', {x: 1}): an SVG element. */
  const s = (tag, attrs, ...kids) => build(document.createElementNS(SVG_NS, tag), attrs, kids);

  function showError(id, text) {
    const el = $(id);
    el.textContent = text;
    el.hidden = !text;
  }

  function setMsg(id, text, kind) {
    const el = $(id);
    el.textContent = text;
    el.classList.toggle('ok', kind === 'ok');
  }

  const pad = (n, w = 2) => String(n).padStart(w, '0');

  /** Local time, with the date when not today. */
  function fmtTime(iso, withMs) {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return String(iso || '');
    let t = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    if (withMs) t += '.' + pad(d.getMilliseconds(), 3);
    if (d.toDateString() !== new Date().toDateString()) {
      t = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${t}`;
    }
    return t;
  }

  function timeEl(iso, withMs) {
    if (!iso) return h('span', { class: 'none' }, '—');
    return h('time', { datetime: iso, title: iso }, fmtTime(iso, withMs));
  }

  /** "in 3 s", "2 min ago". */
  function relative(iso) {
    const ms = new Date(iso).getTime() - Date.now();
    if (Number.isNaN(ms)) return '';
    const a = Math.abs(ms);
    let v;
    if (a < 1000) return ms >= 0 ? 'in under a second' : 'just now';
    if (a < 60e3) v = `${(a / 1000).toFixed(a < 10e3 ? 1 : 0)} s`;
    else if (a < 3600e3) v = `${Math.round(a / 60e3)} min`;
    else if (a < 86400e3) v = `${(a / 3600e3).toFixed(1)} h`;
    else v = `${(a / 86400e3).toFixed(1)} days`;
    return ms >= 0 ? `in ${v}` : `${v} ago`;
  }

  const short = (id) => (id && id.length > 12 ? id.slice(0, 10) + '…' : id || '');

  const badge = (status) => h('span', { class: `badge st-${String(status).replace(/[^a-z]/g, '')}` }, status || '?');

  // ------------------------------------------------------------ API

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  function token() {
    try {
      return sessionStorage.getItem(TOKEN_KEY) || '';
    } catch {
      return '';
    }
  }

  /** Calls the management API; resolves to the decoded JSON, or throws ApiError with the API's own message. */
  async function api(method, path, query, json) {
    const url = new URL(path, API);
    for (const [k, v] of Object.entries(query || {})) {
      if (v !== '' && v !== undefined && v !== null) url.searchParams.set(k, String(v));
    }
    const headers = { Accept: 'application/json' };
    const tok = token();
    if (tok) headers.Authorization = `Bearer ${tok}`;
    const init = { method, headers, cache: 'no-store' };
    if (json !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(json);
    }
    let res;
    try {
      res = await fetch(url, init);
    } catch (e) {
      throw new ApiError(0, `relay did not answer (${e.message})`);
    }
    const text = await res.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: the status says enough
    }
    const message = body && typeof body.error === 'string' ? body.error : '';
    if (res.status === 401) {
      askToken(message, Boolean(tok));
      throw new ApiError(401, message || 'the management API wants an admin token');
    }
    if (!res.ok) throw new ApiError(res.status, message || `HTTP ${res.status} ${res.statusText}`.trim());
    return body;
  }

  // ------------------------------------------------------------ admin token

  function askToken(reason, hadToken) {
    const why = reason || 'the management API wants Authorization: Bearer <admin token>';
    $('token-reason').textContent = hadToken ? `relay refused the token in use: ${why}` : `relay answered: ${why}`;
    if ($('token-panel').hidden) {
      $('token-panel').hidden = false;
      $('token-input').focus();
    }
  }

  function updateTokenStatus() {
    $('token-status').hidden = !token();
  }

  function useToken(ev) {
    ev.preventDefault();
    const v = $('token-input').value.trim();
    if (!v) return;
    try {
      sessionStorage.setItem(TOKEN_KEY, v);
    } catch {
      showError('list-error', 'This browser does not allow session storage: the token cannot be kept.');
      return;
    }
    $('token-input').value = '';
    $('token-panel').hidden = true;
    updateTokenStatus();
    reloadAll();
  }

  function forgetToken() {
    try {
      sessionStorage.removeItem(TOKEN_KEY);
    } catch {
      // nothing kept
    }
    updateTokenStatus();
    reloadAll();
  }

  function reloadAll() {
    loadList();
    if (state.selected) refreshDetail();
    loadStats();
  }

  // ------------------------------------------------------------ routing

  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    return {
      filters: { task: p.get('task') || '', config: p.get('config') || '', status: p.get('status') || '' },
      selected: p.get('d') || '',
    };
  }

  function hashFor(filters, selected) {
    const p = new URLSearchParams();
    for (const k of ['task', 'config', 'status']) if (filters[k]) p.set(k, filters[k]);
    if (selected) p.set('d', selected);
    return `#${p.toString()}`;
  }

  function go(filters, selected) {
    const target = hashFor(filters, selected);
    if (target !== (location.hash || '#')) history.pushState(null, '', target === '#' ? location.pathname + location.search : target);
    route();
  }

  function sameFilters(a, b) {
    return a.task === b.task && a.config === b.config && a.status === b.status;
  }

  function route() {
    const r = readHash();
    const changed = !state.listLoaded || !sameFilters(r.filters, state.filters);
    state.filters = r.filters;
    $('f-task').value = r.filters.task;
    $('f-config').value = r.filters.config;
    $('f-status').value = r.filters.status;
    $('list').classList.toggle('by-task', Boolean(r.filters.task)); // the task column says nothing then
    $('redrive').hidden = r.filters.status !== 'dead';
    $('redrive').textContent = r.filters.task ? 'Redrive this task’s dead letters' : 'Redrive dead letters';
    if (changed) {
      state.listLoaded = true;
      state.cursor = '';
      state.cursors = [];
      setMsg('redrive-msg', '');
      loadList();
    }
    if (r.selected !== state.selected) openDelivery(r.selected);
  }

  // ------------------------------------------------------------ list

  function listRow(d) {
    const tr = h(
      'tr',
      { 'data-id': d.id, class: d.id === state.selected ? 'selected' : null },
      h('td', {}, h('a', { href: hashFor(state.filters, d.id), title: d.id, class: 'open' }, short(d.id))),
      h('td', { class: 'task' }, h('a', { href: hashFor({ task: d.taskId }, state.selected), title: `Only task ${d.taskId}` }, short(d.taskId))),
      h('td', { class: 'cfg' }, h('code', { title: d.configId }, d.configId)),
      h('td', {}, badge(d.status)),
      h('td', { class: 'num' }, d.attempts),
      h('td', { class: 'time' }, timeEl(d.updated)),
    );
    if (d.id === state.selected) tr.setAttribute('aria-current', 'true');
    return tr;
  }

  function renderList(rows, next, failed) {
    state.rows = new Map();
    const body = $('list-body');
    if (!rows.length) {
      const say = failed ? 'Not loaded: see the error above.' : 'No deliveries match.';
      body.replaceChildren(h('tr', {}, h('td', { class: 'empty', colspan: 6 }, say)));
    } else {
      body.replaceChildren(
        ...rows.map((d) => {
          const tr = listRow(d);
          state.rows.set(d.id, tr);
          return tr;
        }),
      );
    }
    state.nextCursor = next;
    const page = state.cursors.length + 1;
    $('page-info').textContent = rows.length || page > 1 ? `Page ${page}` : '';
    $('page-first').disabled = page === 1;
    $('page-next').disabled = !next;
    const n = rows.length;
    $('list-info').textContent = `${n} ${n === 1 ? 'delivery' : 'deliveries'}${next ? ', more on the next page' : ''}`;
  }

  async function loadList() {
    const gen = ++state.listGen;
    $('list-info').textContent = 'Loading…';
    $('list').setAttribute('aria-busy', 'true');
    try {
      const body = await api('GET', 'deliveries', { ...state.filters, limit: PAGE_SIZE, cursor: state.cursor });
      if (gen !== state.listGen) return;
      showError('list-error', '');
      renderList((body && body.deliveries) || [], (body && body.nextCursor) || '');
    } catch (e) {
      if (gen !== state.listGen) return;
      renderList([], '', true);
      $('list-info').textContent = '';
      showError('list-error', e.status === 401 ? `${e.message}. Enter an admin token above.` : e.message);
    } finally {
      if (gen === state.listGen) $('list').removeAttribute('aria-busy');
    }
  }

  function updateListRow(rec) {
    const tr = state.rows.get(rec.id);
    if (!tr) return;
    const fresh = listRow(rec);
    tr.replaceWith(fresh);
    state.rows.set(rec.id, fresh);
  }

  function markSelectedRow() {
    for (const [id, tr] of state.rows) {
      tr.classList.toggle('selected', id === state.selected);
      if (id === state.selected) tr.setAttribute('aria-current', 'true');
      else tr.removeAttribute('aria-current');
      // keep the task links pointing at the current selection
      const taskLink = tr.cells[1] && tr.cells[1].querySelector('a');
      if (taskLink) {
        const p = new URLSearchParams(taskLink.getAttribute('href').slice(1));
        taskLink.setAttribute('href', hashFor({ task: p.get('task') || '' }, state.selected));
      }
    }
  }

  async function redrive() {
    const task = state.filters.task;
    const what = task ? `every dead letter of task ${task}` : 'every dead letter, of all tasks';
    if (!window.confirm(`Send ${what} again?`)) return;
    const btn = $('redrive');
    btn.disabled = true;
    setMsg('redrive-msg', 'Asking relay to redrive…');
    try {
      const r = await api('POST', 'deliveries/redrive', { task });
      const n = (r && r.redriven) || 0;
      setMsg('redrive-msg', `${n} dead ${n === 1 ? 'letter' : 'letters'} queued again.`, 'ok');
      showError('list-error', '');
      loadList();
      if (state.selected) refreshDetail();
      loadStats();
    } catch (e) {
      setMsg('redrive-msg', '');
      showError('list-error', `Redrive refused: ${e.message}`);
    } finally {
      btn.disabled = false;
    }
  }

  // ------------------------------------------------------------ replay

  /** An RFC 3339 time from a datetime-local input ('' when empty or invalid). */
  function isoOf(id) {
    const v = $(id).value;
    if (!v) return '';
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? '' : d.toISOString();
  }

  /** The datetime-local value of an RFC 3339 time, in local time to the second. */
  function localInput(iso) {
    const d = new Date(iso);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  async function replay(ev) {
    ev.preventDefault();
    const body = { url: $('r-url').value.trim(), taskId: $('r-task').value.trim(), configId: $('r-config').value.trim(),
      since: isoOf('r-since'), until: isoOf('r-until') };
    for (const k of Object.keys(body)) if (!body[k]) delete body[k];
    const what = body.url ? `every notification sent to ${body.url}` : `every notification of task ${body.taskId || '?'}`;
    if (!window.confirm(`Send ${what} since ${body.since || '?'} again?`)) return;
    const btn = $('r-go');
    btn.disabled = true;
    showError('replay-error', '');
    setMsg('replay-msg', 'Asking relay to replay…');
    try {
      const r = await api('POST', 'deliveries/replay', null, body);
      let msg = `${r.queued} ${r.queued === 1 ? 'notification' : 'notifications'} queued again over ${r.configs} push ${r.configs === 1 ? 'config' : 'configs'}.`;
      if (r.alreadyQueued) msg += ` ${r.alreadyQueued} still queued, left as they were.`;
      if (r.truncated && r.nextSince) {
        msg += ` Cut at the bound (${r.max}): replay again since ${r.nextSince} for the rest.`;
        $('r-since').value = localInput(r.nextSince);
      } else if (r.truncated) msg += ' Cut: the URL lists more push configs than one replay reads; replay by task, or with an earlier until.';
      if (r.unavailableBefore) msg += ` Events before ${fmtTime(r.unavailableBefore)} are no longer stored: they cannot be replayed.`;
      setMsg('replay-msg', msg, 'ok');
      loadList();
      loadStats();
    } catch (e) {
      setMsg('replay-msg', '');
      showError('replay-error', `Replay refused: ${e.message}`);
    } finally {
      btn.disabled = false;
    }
  }

  // ------------------------------------------------------------ one delivery

  /** Clears what the last button press (Redeliver) said. */
  function clearAction() {
    setMsg('d-msg', '');
    showError('d-action-error', '');
  }

  function stopPolling() {
    clearTimeout(state.pollTimer);
    state.pollTimer = 0;
    state.detailGen++; // answers in flight are dropped
  }

  function schedulePoll() {
    clearTimeout(state.pollTimer);
    state.pollTimer = setTimeout(refreshDetail, POLL_MS);
  }

  function openDelivery(id) {
    stopPolling();
    state.selected = id;
    state.record = null;
    state.recordKey = '';
    markSelectedRow();
    clearAction();
    showError('d-error', '');
    $('d-announce').textContent = '';
    $('detail').hidden = !id;
    $('detail-empty').hidden = Boolean(id);
    if (!id) return;
    $('d-id').textContent = id;
    $('d-fields').replaceChildren();
    $('attempts-body').replaceChildren();
    setLive(false, 'Loading…');
    $('detail-heading').focus({ preventScroll: true });
    refreshDetail();
  }

  async function refreshDetail() {
    const id = state.selected;
    if (!id) return;
    const gen = ++state.detailGen;
    clearTimeout(state.pollTimer);
    state.pollTimer = 0;
    let rec;
    try {
      rec = await api('GET', `deliveries/${encodeURIComponent(id)}`);
    } catch (e) {
      if (gen !== state.detailGen) return;
      showError('d-error', e.message);
      const wasLive = state.record && LIVE.has(state.record.status);
      if (wasLive && e.status !== 401 && e.status !== 404) {
        setLive(true, 'relay did not answer; trying again every 2 s.');
        schedulePoll(); // a restart or a blip: keep watching
      } else {
        setLive(false, e.status === 401 ? 'Not refreshing: an admin token is needed.' : 'Not refreshing.');
      }
      return;
    }
    if (gen !== state.detailGen) return;
    showError('d-error', '');
    renderDetail(rec);
    updateListRow(rec);
    if (LIVE.has(rec.status)) schedulePoll();
  }

  function setLive(on, text) {
    const el = $('d-live');
    el.classList.toggle('on', on);
    el.textContent = text;
  }

  function liveText(rec) {
    if (!LIVE.has(rec.status)) return `Not refreshing: the delivery is ${rec.status}.`;
    const next = rec.nextAttempt ? ` Next attempt ${relative(rec.nextAttempt)}.` : '';
    const what = rec.status === 'failed' ? `Attempt ${rec.attempts} failed; a retry is pending.` : 'Queued.';
    return `${what}${next} Refreshing every 2 s.`;
  }

  function renderDetail(rec) {
    const key = JSON.stringify(rec);
    const before = state.record;
    setLive(LIVE.has(rec.status), liveText(rec));
    if (key === state.recordKey) return; // nothing new: keep the DOM (and open excerpts) as is
    state.record = rec;
    state.recordKey = key;
    if (before && before.status !== rec.status) {
      // What a button press said held for the status it saw; the new one speaks for itself.
      if (!state.acting) clearAction();
      $('d-announce').textContent = `The delivery is now ${rec.status}.`;
    }

    const field = (label, ...value) => [h('dt', {}, label), h('dd', {}, ...value)];
    $('d-fields').replaceChildren(
      ...field('Status', badge(rec.status)),
      ...field('Attempts', String(rec.attempts)),
      ...field('Task', h('a', { href: hashFor({ task: rec.taskId }, rec.id), title: 'Show this task’s deliveries' }, h('code', {}, rec.taskId))),
      ...field('Config', h('code', {}, rec.configId)),
      ...field('Event', h('code', {}, rec.eventId || '—')),
      ...field('Next retry', rec.nextAttempt ? timeEl(rec.nextAttempt, true) : h('span', { class: 'none' }, 'none')),
      ...field('Created', timeEl(rec.created, true)),
      ...field('Updated', timeEl(rec.updated, true)),
      ...field('Webhook', lastURL(rec) ? h('code', {}, lastURL(rec)) : h('span', { class: 'none' }, 'not tried yet')),
    );

    const body = $('attempts-body');
    const open = new Set();
    body.querySelectorAll('details').forEach((d, i) => d.open && open.add(i));
    const log = Array.isArray(rec.attemptLog) ? rec.attemptLog : [];
    if (!log.length) {
      body.replaceChildren(h('tr', {}, h('td', { class: 'empty', colspan: 7 }, 'No attempt yet.')));
    } else {
      let n = 0;
      body.replaceChildren(...log.map((a) => attemptRow(a || {}, () => open.has(n++))));
    }
  }

  /** The webhook URL of the latest attempt (the record itself does not carry it). */
  function lastURL(rec) {
    const log = Array.isArray(rec.attemptLog) ? rec.attemptLog : [];
    for (let i = log.length - 1; i >= 0; i--) if (log[i] && log[i].url) return String(log[i].url);
    return '';
  }

  function attemptRow(a, isOpen) {
    const status = a.status ? String(a.status) : '';
    return h(
      'tr',
      { class: `outcome-${String(a.outcome || '').replace(/[^a-z]/g, '')}` },
      h('td', { class: 'time' }, timeEl(a.time, true)),
      h('td', { class: 'num' }, a.attempt ?? ''),
      h('td', { class: 'num http-status' }, status || h('span', { class: 'none', title: 'no HTTP answer' }, '—')),
      h(
        'td',
        { class: 'error-class' },
        a.errorClass ? h('code', {}, a.errorClass) : h('span', { class: 'none' }, '—'),
        a.error ? h('div', { class: 'err-text' }, a.error) : null,
      ),
      h('td', { class: 'num' }, typeof a.latencyMs === 'number' ? a.latencyMs.toFixed(1) : ''),
      h('td', {}, excerpt(a.response, isOpen)),
      h(
        'td',
        {},
        badge(a.outcome),
        a.nextAttempt ? h('div', { class: 'err-text' }, 'next ', timeEl(a.nextAttempt, true)) : null,
        a.traceId
          ? h('div', { class: 'err-text', title: 'OpenTelemetry trace id of the task turn' }, 'trace ', h('code', { class: 'trace-id' }, String(a.traceId)))
          : null,
      ),
    );
  }

  function excerpt(text, isOpen) {
    if (!text) return h('span', { class: 'none' }, '—');
    if (text.length <= 80 && !text.includes('\n')) return h('code', { class: 'excerpt' }, text);
    const first = text.split('\n', 1)[0].slice(0, 60);
    return h('details', { class: 'excerpt', open: isOpen() }, h('summary', {}, `${first}…`), h('pre', {}, text));
  }

  async function redeliver() {
    const id = state.selected;
    if (!id) return;
    const btn = $('d-redeliver');
    btn.disabled = true;
    state.acting = true;
    clearAction();
    setMsg('d-msg', 'Asking relay to redeliver…');
    try {
      const r = await api('POST', `deliveries/${encodeURIComponent(id)}/redeliver`);
      if (id !== state.selected) return;
      setMsg('d-msg', `Redelivery queued (status ${(r && r.status) || 'pending'}).`, 'ok');
      await refreshDetail();
      setTimeout(loadStats, 3000);
    } catch (e) {
      if (id !== state.selected) return;
      setMsg('d-msg', '');
      showError('d-action-error', `Redeliver refused: ${e.message}`);
    } finally {
      state.acting = false;
      btn.disabled = false;
    }
  }

  // ------------------------------------------------------------ chart

  async function loadStats() {
    clearTimeout(state.statsTimer);
    try {
      const body = await api('GET', 'stats/deliveries', { minutes: 60 });
      const minutes = body && Array.isArray(body.minutes) ? body.minutes : null;
      drawChart(minutes, minutes ? '' : 'relay answered no per-minute counts');
    } catch (e) {
      let why = e.message;
      if (e.status === 404) why = 'this relay has no delivery stats';
      if (e.status === 401) why = 'an admin token is needed';
      drawChart(null, why);
    }
    state.statsTimer = setTimeout(loadStats, STATS_MS);
  }

  function niceCeil(v) {
    if (v <= 1) return 1;
    const p = 10 ** Math.floor(Math.log10(v));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  const hhmm = (iso) => {
    const d = new Date(iso);
    return Number.isNaN(d.getTime()) ? '' : `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  };

  function drawChart(minutes, why) {
    state.chart = { minutes, why };
    // Drawn at the size it is shown, so that its text stays text-sized.
    const W = Math.max(300, Math.round($('chart-plot').clientWidth || 640));
    const H = 160;
    const L = 36;
    const R = 10;
    const T = 10;
    const B = 22;
    const plotW = W - L - R;
    const plotH = H - T - B;
    const svg = s('svg', {
      id: 'chart-svg',
      viewBox: `0 0 ${W} ${H}`,
      role: 'img',
      'aria-labelledby': 'chart-heading',
      'aria-describedby': 'chart-summary',
      preserveAspectRatio: 'xMidYMid meet',
    });
    const rows = (minutes || []).map((m) => ({
      minute: m && m.minute,
      delivered: Math.max(0, Number(m && m.delivered) || 0),
      failed: Math.max(0, Number(m && m.failed) || 0),
      dead: Math.max(0, Number(m && m.dead) || 0),
    }));
    const totals = rows.reduce(
      (t, r) => ({ delivered: t.delivered + r.delivered, failed: t.failed + r.failed, dead: t.dead + r.dead }),
      { delivered: 0, failed: 0, dead: 0 },
    );
    const max = Math.max(0, ...rows.map((r) => r.delivered + r.failed + r.dead));
    svg.append(
      s('line', { class: 'axis', x1: L, y1: T, x2: L, y2: T + plotH }),
      s('line', { class: 'axis', x1: L, y1: T + plotH, x2: L + plotW, y2: T + plotH }),
    );
    const summary = $('chart-summary');
    if (!rows.length || max === 0) {
      svg.setAttribute('data-state', 'nodata');
      svg.append(
        s('text', { class: 'nodata', x: L + plotW / 2, y: T + plotH / 2, 'text-anchor': 'middle' }, rows.length ? 'no deliveries' : 'no data'),
      );
      summary.textContent = rows.length
        ? `No delivery outcomes in the last ${rows.length} minutes.`
        : `No data${why ? `: ${why}` : ''}.`;
      $('chart-plot').replaceChildren(svg);
      return;
    }
    svg.setAttribute('data-state', 'data');
    const top = niceCeil(max);
    for (const v of [top / 2, top]) {
      const y = T + plotH - (v / top) * plotH;
      svg.append(
        s('line', { class: 'gridline', x1: L, y1: y, x2: L + plotW, y2: y }),
        s('text', { class: 'tick', x: L - 5, y: y + 3.5, 'text-anchor': 'end' }, Number.isInteger(v) ? v : v.toFixed(1)),
      );
    }
    svg.append(s('text', { class: 'tick', x: L - 5, y: T + plotH + 3.5, 'text-anchor': 'end' }, '0'));
    const slot = plotW / rows.length;
    const bw = Math.max(1, slot * 0.72);
    let busiest = rows[0];
    rows.forEach((r, i) => {
      if (r.delivered + r.failed + r.dead > busiest.delivered + busiest.failed + busiest.dead) busiest = r;
      const x0 = L + i * slot;
      const g = s(
        'g',
        {},
        s('title', {}, `${hhmm(r.minute)}: ${r.delivered} delivered, ${r.failed} failed, ${r.dead} dead`),
        s('rect', { class: 'slot', x: x0, y: T, width: slot, height: plotH }),
      );
      let y = T + plotH;
      for (const k of ['delivered', 'failed', 'dead']) {
        if (!r[k]) continue;
        const hgt = (r[k] / top) * plotH;
        y -= hgt;
        g.append(s('rect', { class: `b-${k}`, x: x0 + (slot - bw) / 2, y, width: bw, height: hgt }));
      }
      svg.append(g);
    });
    const ticks = [...new Set([0, 15, 30, 45, rows.length - 1].filter((i) => i < rows.length))];
    for (const i of ticks) {
      const anchor = i === 0 ? 'start' : i === rows.length - 1 ? 'end' : 'middle';
      const x = i === 0 ? L : i === rows.length - 1 ? L + plotW : L + (i + 0.5) * slot;
      svg.append(s('text', { class: 'tick', x, y: H - 6, 'text-anchor': anchor }, hhmm(rows[i].minute)));
    }
    summary.textContent =
      `Last ${rows.length} minutes: ${totals.delivered} delivered, ${totals.failed} failed attempts, ${totals.dead} dead. ` +
      `Busiest minute ${hhmm(busiest.minute)} (${busiest.delivered + busiest.failed + busiest.dead}).`;
    $('chart-plot').replaceChildren(svg);
  }

  // ------------------------------------------------------------ wiring

  function init() {
    $('token-form').addEventListener('submit', useToken);
    $('token-forget').addEventListener('click', forgetToken);
    $('filters').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const f = { task: $('f-task').value.trim(), config: $('f-config').value.trim(), status: $('f-status').value };
      if (sameFilters(f, state.filters)) {
        state.cursor = '';
        state.cursors = [];
        loadList();
      }
      go(f, state.selected);
    });
    $('f-clear').addEventListener('click', () => go({ task: '', config: '', status: '' }, state.selected));
    $('list-refresh').addEventListener('click', () => {
      loadList();
      loadStats();
    });
    $('page-next').addEventListener('click', () => {
      if (!state.nextCursor) return;
      state.cursors.push(state.cursor);
      state.cursor = state.nextCursor;
      loadList();
    });
    $('page-first').addEventListener('click', () => {
      state.cursor = '';
      state.cursors = [];
      loadList();
    });
    $('redrive').addEventListener('click', redrive);
    $('replay').addEventListener('submit', replay);
    $('d-redeliver').addEventListener('click', redeliver);
    $('d-refresh').addEventListener('click', refreshDetail);
    $('d-close').addEventListener('click', () => go(state.filters, ''));
    window.addEventListener('hashchange', route);
    let lastWidth = 0;
    new ResizeObserver(() => {
      const w = $('chart-plot').clientWidth;
      if (state.chart && Math.abs(w - lastWidth) > 4) drawChart(state.chart.minutes, state.chart.why);
      lastWidth = w;
    }).observe($('chart-plot'));
    document.addEventListener('visibilitychange', () => {
      // Timers crawl in background tabs: catch up at once on return.
      if (!document.hidden && state.record && LIVE.has(state.record.status)) refreshDetail();
    });
    updateTokenStatus();
    route();
    loadStats();
  }

  // The endpoints view (endpoints.js) renders with the same helpers and
  // calls the same API, token and all.
  window.relayUI = Object.freeze({ api, h, timeEl, badge, showError, setMsg });

  init();
})();
