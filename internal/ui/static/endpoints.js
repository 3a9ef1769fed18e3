// relay · webhook endpoints: their health (success rate, last error, state)
// and the button that enables a disabled one again. Renders as app.js does:
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

  function row(e) {
    const action =
      e.state === 'disabled'
        ? h('button', { type: 'button', onclick: () => enable(e), 'aria-label': `Enable ${e.url}` }, 'Enable')
        : '';
    return h(
      'tr',
      { 'data-id': e.id },
      h('td', { class: 'url' }, h('code', { title: `id ${e.id}` }, e.url)),
      h('td', {}, badge(e.state), ' ', action),
      h('td', { class: 'num' }, rate(e)),
      h('td', { class: 'num' }, e.consecutiveFailures),
      h('td', { title: e.lastError || '' }, clip(e.lastError, 80), e.lastErrorAt ? [' ', timeEl(e.lastErrorAt)] : ''),
    );
  }

  async function load() {
    $('endpoints').setAttribute('aria-busy', 'true');
    try {
      const body = await api('GET', 'endpoints', { limit: 200 });
      const eps = (body && body.endpoints) || [];
      showError('ep-error', '');
      $('ep-body').replaceChildren(
        ...(eps.length ? eps.map(row) : [h('tr', {}, h('td', { class: 'empty', colspan: 5 }, 'No endpoint has had a delivery yet.'))]),
      );
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
