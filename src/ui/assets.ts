// The page's only script and stylesheet, served as static strings (no front-end build step). The CSP
// forbids inline script and style, so everything dynamic lives here.

/**
 * The run page's live event log: an EventSource on the cookie-authenticated stream. Everything is added
 * as text (textContent / text nodes), never as markup: event data is model output.
 */
export const APP_JS = `'use strict';
${viewerScript()}
(function () {
  var log = document.getElementById('run-events');
  if (!log || typeof EventSource === 'undefined') return;
  var state = document.getElementById('run-events-state');
  var runStatus = document.getElementById('run-status');
  var open = null; // the text or thinking block that deltas are appended to
  var openKind = null;

  function setState(text) {
    if (state) state.textContent = text;
  }
  function short(value, max) {
    var s = typeof value === 'string' ? value : JSON.stringify(value);
    if (s === undefined) s = String(value);
    return s.length > max ? s.slice(0, max) + '\\u2026' : s;
  }
  function line(kind, text) {
    var p = document.createElement('p');
    p.className = 'ev ev-' + kind;
    p.textContent = text;
    log.appendChild(p);
    open = null;
    openKind = null;
    return p;
  }
  function delta(kind, text) {
    if (openKind !== kind) {
      open = document.createElement('pre');
      open.className = 'ev ev-' + kind;
      log.appendChild(open);
      openKind = kind;
    }
    open.appendChild(document.createTextNode(text));
  }
  function planLink(p, planId) {
    if (typeof planId !== 'string') return;
    var a = document.createElement('a');
    a.href = '/ui/plans/' + encodeURIComponent(planId);
    a.textContent = 'open plan';
    p.appendChild(document.createTextNode(' '));
    p.appendChild(a);
  }
  function receipt(e) {
    var box = document.createElement('div');
    box.className = 'ev ev-receipt';
    box.setAttribute('data-status', String(e.status));
    var u = e.usage || {};
    var rows = [
      'Run finished: ' + e.status,
      'Turns: ' + e.turns,
      'Tokens: input ' + (u.input_tokens || 0) + ', output ' + (u.output_tokens || 0) +
        ', cache read ' + (u.cache_read_tokens || 0) +
        ', cache write ' + ((u.cache_write_5m_tokens || 0) + (u.cache_write_1h_tokens || 0)),
      'Cost: $' + Number(e.cost_usd || 0).toFixed(4),
      'Duration: ' + (Number(e.duration_ms || 0) / 1000).toFixed(1) + ' s',
    ];
    if (e.error) rows.push('Error: ' + e.error);
    rows.forEach(function (text) {
      var p = document.createElement('p');
      p.textContent = text;
      box.appendChild(p);
    });
    log.appendChild(box);
    open = null;
    openKind = null;
    if (runStatus) runStatus.textContent = String(e.status);
  }

  var source = new EventSource(log.getAttribute('data-events-url'));
  source.onopen = function () {
    setState('Following the run live.');
  };
  source.onmessage = function (msg) {
    var e;
    try {
      e = JSON.parse(msg.data);
    } catch (_) {
      return;
    }
    switch (e.type) {
      case 'text_delta':
        delta('text', String(e.text || ''));
        break;
      case 'thinking_delta':
        delta('thinking', String(e.text || ''));
        break;
      case 'tool_use':
        line('tool', '\\u2192 ' + e.tool + ' ' + short(e.input, 400));
        break;
      case 'tool_result':
        line('result', '\\u2190 ' + e.tool + (e.is_error ? ' failed' : ' done') + ' (' + e.chars + ' chars)');
        break;
      case 'plan_proposed':
        planLink(line('plan', 'Plan proposed (round ' + e.round + ', sha256 ' + short(e.sha256, 12) + ')'), e.plan_id);
        break;
      case 'plan_decided':
        planLink(line('plan', 'Plan ' + e.decision + ' by ' + e.identity + ': now ' + e.plan_status), e.plan_id);
        break;
      case 'run_finished':
        receipt(e);
        source.close();
        setState('The run has finished.');
        break;
      default: {
        var rest = {};
        Object.keys(e).forEach(function (k) {
          if (k !== 'type' && k !== 'seq' && k !== 'at') rest[k] = e[k];
        });
        line('other', e.type + ' ' + short(rest, 400));
      }
    }
  };
  source.addEventListener('end', function () {
    source.close();
    setState('The event log has ended.');
  });
  source.onerror = function () {
    setState(source.readyState === EventSource.CLOSED ? 'Disconnected; reload to retry.' : 'Reconnecting\\u2026');
  };
})();
`;

export const APP_CSS = `${viewerStyles()}:root { color-scheme: light dark; --fg: #1b1b1f; --bg: #fff; --muted: #5c5f66; --line: #d0d3d9;
  --accent: #0b5cad; --err-bg: #fde8e8; --err: #8a1111; --ok-bg: #e6f4ea; --ok: #14532d; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e8ec; --bg: #16171a; --muted: #a4a7ae; --line: #3a3d44;
  --accent: #7fb3ff; --err-bg: #3b1414; --err: #ffb4b4; --ok-bg: #12301d; --ok: #b6f0c8; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .5rem; z-index: 1; }
.top { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; padding: .5rem 1rem; border-bottom: 1px solid var(--line); }
.brand { margin: 0; font-weight: 700; }
.top nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
.top nav a[aria-current="page"] { font-weight: 700; }
.logout { margin-left: auto; display: flex; gap: .5rem; align-items: center; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; color: var(--muted); padding: .25rem 0; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
code, pre { font-family: ui-monospace, monospace; font-size: .9em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: color-mix(in srgb, var(--fg) 6%, transparent); padding: .5rem; }
.plan-body { border: 1px solid var(--line); padding: 0 1rem; margin: 1rem 0; overflow-wrap: anywhere; }
.alert { padding: .25rem 1rem; margin: 1rem 0; border-radius: 4px; }
.alert.error { background: var(--err-bg); color: var(--err); }
.alert.notice { background: var(--ok-bg); color: var(--ok); }
form.decide, form.answer, form.tool { border: 1px solid var(--line); padding: .75rem 1rem; margin: 1rem 0; }
label { display: block; font-weight: 600; margin: .5rem 0 .25rem; }
fieldset label, .choice label { display: inline; font-weight: 400; }
textarea, input[type="password"], input[type="text"] { width: 100%; max-width: 40rem; font: inherit; padding: .4rem; }
button { font: inherit; padding: .4rem .9rem; margin-top: .5rem; cursor: pointer; }
.choice { margin: .25rem 0; }
.choice pre.preview { margin: .25rem 0 .5rem 1.5rem; }
fieldset .own label { display: block; margin-top: .5rem; }
.hint, .muted { color: var(--muted); }
.warning { color: var(--err); }
.events { border: 1px solid var(--line); padding: .5rem 1rem; min-height: 3rem; }
.ev { margin: .25rem 0; }
.ev-thinking { color: var(--muted); font-style: italic; }
.ev-tool, .ev-result, .ev-other, .ev-plan { font-family: ui-monospace, monospace; font-size: .9em; overflow-wrap: anywhere; }
.ev-receipt { border-top: 2px solid var(--line); margin-top: .5rem; padding-top: .25rem; font-weight: 600; }
.ev-receipt p { margin: .1rem 0; }
`;

// ---- times in the viewer's zone, the queue's refresh and bulk selection ---------------------------------
// (Function declarations: hoisted, so the constants above can include them.)

/**
 * Every <time datetime> rendered by the server in UTC is rewritten into the browser's own zone, the UTC time
 * staying in its title (hover). The queue's table body is fetched again every ~15 s and replaced, but never
 * while the person is using the page: a focused field, a typed-in text, a ticked box or a hidden tab pauses it.
 */
function viewerScript(): string {
  return `(function () {
  function pad(n) { return (n < 10 ? '0' : '') + n; }
  function zoneName(d) {
    try {
      var parts = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' }).formatToParts(d);
      for (var i = 0; i < parts.length; i++) if (parts[i].type === 'timeZoneName') return parts[i].value;
    } catch (_) {}
    return '';
  }
  function localTimes(root) {
    var times = root.querySelectorAll('time[datetime]');
    for (var i = 0; i < times.length; i++) {
      var t = times[i];
      if (t.getAttribute('data-local') === '1') continue;
      var d = new Date(t.getAttribute('datetime'));
      if (isNaN(d.getTime())) continue;
      if (!t.title) t.title = t.textContent;
      t.textContent = d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' +
        pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds()) + ' ' + zoneName(d);
      t.setAttribute('data-local', '1');
    }
  }
  localTimes(document);

  var all = document.getElementById('select-all');
  var rows = document.getElementById('queue-rows');
  function boxes() { return rows ? rows.querySelectorAll('input[type="checkbox"][name="plan"]') : []; }
  if (all && rows) {
    all.addEventListener('change', function () {
      var b = boxes();
      for (var i = 0; i < b.length; i++) b[i].checked = all.checked;
    });
  }

  if (!rows || typeof fetch === 'undefined') return;
  var url = rows.getAttribute('data-rows-url');
  var every = Number(rows.getAttribute('data-refresh-ms')) || 15000;
  var state = document.getElementById('queue-refresh');
  function say(text) { if (state) state.textContent = text; }
  function busy() {
    var a = document.activeElement;
    if (a && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName)) return 'a field has the focus';
    var typed = document.querySelectorAll('textarea, input[type="text"], input[type="number"], input[type="search"]');
    for (var i = 0; i < typed.length; i++) if (typed[i].value !== typed[i].defaultValue) return 'a text is being written';
    var b = boxes();
    for (var j = 0; j < b.length; j++) if (b[j].checked) return 'plans are selected';
    return null;
  }
  function refresh() {
    if (document.hidden) return;
    var why = busy();
    if (why) { say('Auto-refresh paused: ' + why + '.'); return; }
    fetch(url, { credentials: 'same-origin', headers: { Accept: 'text/html' } }).then(function (res) {
      if (!res.ok) throw new Error('HTTP ' + res.status);
      return res.text();
    }).then(function (text) {
      // Looked at again: the person may have started typing while the rows were on their way.
      var late = busy();
      if (late) { say('Auto-refresh paused: ' + late + '.'); return; }
      // The rows are our own server's markup (escaped there as on any page), parsed into an inert
      // document and moved over: no markup string is ever assigned to the live page.
      var parsed = new DOMParser().parseFromString('<table><tbody>' + text + '</tbody></table>', 'text/html');
      var fresh = parsed.querySelector('tbody');
      if (!fresh) return;
      rows.replaceChildren.apply(rows, Array.prototype.slice.call(fresh.children).map(function (tr) {
        return document.adoptNode(tr);
      }));
      if (all) all.checked = false;
      localTimes(rows);
      var n = new Date();
      say('Updated ' + pad(n.getHours()) + ':' + pad(n.getMinutes()) + ':' + pad(n.getSeconds()) + '.');
    }).catch(function () {
      say('Could not refresh the queue; trying again shortly.');
    });
  }
  setInterval(refresh, every);
})();`;
}

function viewerStyles(): string {
  return `.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
time[title] { text-decoration: underline dotted; text-underline-offset: 2px; }
pre.prompt, pre.untrusted { max-height: 24rem; overflow: auto; }
.untrusted { overflow-wrap: anywhere; }
pre.untrusted { border-left: 4px solid var(--line); }
.diff { border: 1px solid var(--line); margin: .5rem 0 1rem; }
.diff .hunk { margin: .25rem .5rem; font-size: .9em; }
ol.diff-lines { list-style: none; margin: 0; padding: 0; font-family: ui-monospace, monospace; font-size: .9em; }
ol.diff-lines li { white-space: pre-wrap; overflow-wrap: anywhere; padding: 0 .5rem; }
ol.diff-lines ins, ol.diff-lines del { text-decoration: none; display: block; }
ol.diff-lines li.add { background: var(--ok-bg); color: var(--ok); }
ol.diff-lines li.remove { background: var(--err-bg); color: var(--err); }
ol.diff-lines .sign { display: inline-block; width: 1.25em; font-weight: 700; }
form.decide fieldset { border: 0; padding: 0; margin: 0; }
form.decide legend { font-weight: 600; }
.why, .cannot, .stale { color: var(--err); }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin: 1rem 0 .25rem; }
form.filters label { margin: 0; }
form.filters input[type="text"], form.filters input[type="number"], form.filters select { width: 12rem; font: inherit; padding: .4rem; }
form.filters .check label { display: inline; font-weight: 400; }
.quick { margin-top: 0; }
.bulk-results { border: 1px solid var(--line); padding: .25rem 1rem; margin: 1rem 0; }
td.mark { max-width: 14rem; }
`;
}
