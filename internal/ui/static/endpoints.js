// relay · webhook endpoints: their health (success rate, last error, state),
// the button that enables a disabled one again, and the one that expands an
// endpoint to the push configs that send to it, each with its own health. Renders as app.js does:
// text nodes and attribute values only, through its helpers (window.relayUI).
'use strict';

(() => {
  const ui = window.relayUI;
  if (!ui) return;
  const { api, h, timeEl, badge, showError, setMsg } = ui;
  const $ = (id) => document.getElementById(id);
  const REFRESH_MS = 30000;

  function rate(e) {
    if (e.successRate === null || e.successRate === undefined) return '—';
    return `${(e.successRate * 100).toFixed(1)} % of ${e.succeeded + e.failed}`;
  }

  const clip = (t, n) => (!t ? '—' : t.length > n ? t.slice(0, n - 1) + '…' : t);
  // open holds the ids of the endpoints expanded to their configs, kept
  // across refreshes.
  const open = new Set();

  function row(e) {
    const action =
      e.state === 'disabled'
        ? h('button', { type: 'button', onclick: () => enable(e), 'aria-label': `Enable ${e.url}` }, 'Enable')
        : '';
    return h(
      'tr',
      { 'data-id': e.id },
      h('td', { class: 'url' }, h('code', { title: `id ${e.id}` }, e.url), e.owner ? [' ', h('span', { class: 'owner', title: 'the client whose push configs send here' }, `(${e.owner})`)] : ''),
      h('td', {}, badge(e.state), ' ', action),
      h('td', { class: 'num' }, rate(e)),
      h('td', { class: 'num' }, e.consecutiveFailures),
      h('td', { title: e.lastError || '' }, clip(e.lastError, 80), e.lastErrorAt ? [' ', timeEl(e.lastErrorAt)] : ''),
      h(
        'td',
        {},
        h(
          'button',
          { type: 'button', class: 'secondary', 'aria-expanded': String(open.has(e.id)), onclick: (ev) => toggle(e, ev.currentTarget) },
          'Configs',
        ),
      ),
    );
  }

  function configItem(c) {
    return h(
      'li',
      { 'data-task': c.taskId, 'data-config': c.configId },
      h('code', {}, `${c.taskId} / ${c.configId}`),
      ` — ${c.succeeded} ok, ${c.failed} failed, ${c.consecutiveFailures} in a row`,
      c.lastError ? [' — ', h('span', { title: c.lastError }, clip(c.lastError, 80))] : '',
      c.lastSuccess ? [' — last success ', timeEl(c.lastSuccess)] : '',
    );
  }

  // configsRow reads endpoint e with its configs: the row shown under it.
  async function configsRow(e) {
    let kid;
    try {
      const body = await api('GET', `endpoints/${encodeURIComponent(e.id)}`);
      const cs = (body && body.configs) || [];
      kid = cs.length ? h('ul', { class: 'configs' }, ...cs.map(configItem)) : 'No push config has sent to it lately.';
    } catch (err) {
      kid = `Cannot read its configs: ${err.message}`;
    }
    return h('tr', { class: 'configs', 'data-configs-of': e.id }, h('td', { colspan: 6 }, kid));
  }

  async function expand(e, tr) {
    const sub = await configsRow(e);
    const old = tr.nextElementSibling;
    if (old && old.getAttribute('data-configs-of') === e.id) old.replaceWith(sub);
    else tr.after(sub);
  }

  async function toggle(e, button) {
    const tr = button.closest('tr');
    if (open.has(e.id)) {
      open.delete(e.id);
      button.setAttribute('aria-expanded', 'false');
      const sub = tr.nextElementSibling;
      if (sub && sub.getAttribute('data-configs-of') === e.id) sub.remove();
      return;
    }
    open.add(e.id);
    button.setAttribute('aria-expanded', 'true');
    await expand(e, tr);
  }

  async function load() {
    $('endpoints').setAttribute('aria-busy', 'true');
    try {
      const body = await api('GET', 'endpoints', { limit: 200 });
      const eps = (body && body.endpoints) || [];
      showError('ep-error', '');
      $('ep-body').replaceChildren(
        ...(eps.length ? eps.map(row) : [h('tr', {}, h('td', { class: 'empty', colspan: 6 }, 'No endpoint has had a delivery yet.'))]),
      );
      const rows = new Map([...$('ep-body').querySelectorAll('tr[data-id]')].map((tr) => [tr.getAttribute('data-id'), tr]));
      await Promise.all(eps.filter((e) => open.has(e.id) && rows.has(e.id)).map((e) => expand(e, rows.get(e.id))));
      const off = eps.filter((e) => e.state === 'disabled').length;
      $('ep-info').textContent = `${eps.length} ${eps.length === 1 ? 'endpoint' : 'endpoints'}, ${off} disabled`;
    } catch (e) {
      $('ep-body').replaceChildren();
      $('ep-info').textContent = '';
      showError('ep-error', e.message);
    } finally {
      $('endpoints').removeAttribute('aria-busy');
    }
  }

  async function enable(e) {
    if (!window.confirm(`Enable ${e.url} again? New notifications are sent to it at once; those skipped meanwhile are not, until replayed.`)) return;
    setMsg('ep-msg', 'Enabling…');
    try {
      await api('POST', `endpoints/${encodeURIComponent(e.id)}/enable`);
      setMsg('ep-msg', `${e.url} is enabled again.`, 'ok');
    } catch (err) {
      setMsg('ep-msg', '');
      showError('ep-error', `Not enabled: ${err.message}`);
    }
    load();
  }

  $('ep-refresh').addEventListener('click', load);
  setInterval(() => {
    if (!document.hidden) load();
  }, REFRESH_MS);
  load();
})();
