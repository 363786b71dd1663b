import { STATUS_WORDS } from './status-words.js';

// The page's only script and stylesheet, served as static strings (no front-end build step). The CSP
// forbids inline script and style, so everything dynamic lives here.

/**
 * The run page's live event log as a timeline: an EventSource on the cookie-authenticated stream, one entry
 * per event (text and thinking gathered from their deltas, a tool call with its result on one line), each
 * with its time and its JSON one click away. Everything is added as text (textContent / text nodes), never
 * as markup: event data is model output.
 */
export const APP_JS = `'use strict';
${viewerScript()}
(function () {
  var log = document.getElementById('run-events');
  if (!log || typeof EventSource === 'undefined') return;
  var state = document.getElementById('run-events-state');
  var runStatus = document.getElementById('run-status');
  var open = null; // the text or thinking entry that deltas are appended to
  var openKind = null;
  var tools = {}; // tool_use_id -> its entry, for the result
  var WORDS = { allowed: 'allowed', denied: 'denied', timed_out: 'timed out' };
  var RUN_WORDS = ${JSON.stringify(STATUS_WORDS.run)};

  function setState(text) {
    if (state) state.textContent = text;
  }
  function el(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function str(v) {
    return v === null || v === undefined ? '-' : String(v);
  }
  function short(value, max) {
    var s = typeof value === 'string' ? value : JSON.stringify(value);
    if (s === undefined) s = String(value);
    s = s.replace(/\\s+/g, ' ');
    return s.length > max ? s.slice(0, max) + '\\u2026' : s;
  }
  function size(n) {
    n = Number(n) || 0;
    return n < 1000 ? n + ' chars' : (n / 1000).toFixed(1) + 'k chars';
  }
  function clock(at) {
    var d = new Date(at);
    return isNaN(d.getTime()) ? '' : d.toLocaleTimeString();
  }
  /** The JSON of the entry's events, built only when someone opens it. */
  function rawJson(li, events) {
    var box = el('details', 'ev-raw');
    box.appendChild(el('summary', null, 'JSON'));
    var pre = el('pre');
    box.appendChild(pre);
    box.addEventListener('toggle', function () {
      if (box.open) pre.textContent = JSON.stringify(events.length === 1 ? events[0] : events, null, 2);
    });
    li.appendChild(box);
  }
  /** A timeline entry: time, a readable line, its JSON one click away. */
  function entry(kind, e, text) {
    var li = el('li', 'ev ev-' + kind);
    var t = el('time', 'ev-time', clock(e.at));
    if (typeof e.at === 'string') {
      t.setAttribute('datetime', e.at);
      t.title = e.at;
    }
    li.appendChild(t);
    var body = el('div', 'ev-body');
    if (text !== undefined) body.appendChild(el('span', 'ev-line', text));
    li.appendChild(body);
    var events = [e];
    rawJson(li, events);
    log.appendChild(li);
    open = null;
    openKind = null;
    return { li: li, body: body, events: events };
  }
  function link(x, href, text) {
    var a = el('a', null, text);
    a.href = href;
    x.body.appendChild(document.createTextNode(' '));
    x.body.appendChild(a);
  }
  function planLink(x, planId) {
    if (typeof planId === 'string') link(x, '/ui/plans/' + encodeURIComponent(planId), 'open plan');
  }
  function delta(kind, e) {
    if (openKind !== kind) {
      var x = entry(kind, e);
      x.body.appendChild(el('span', 'ev-label', kind === 'thinking' ? 'Thinking' : 'Text'));
      x.text = el('p', 'ev-prose');
      x.body.appendChild(x.text);
      open = x;
      openKind = kind;
    } else open.events.push(e);
    open.text.appendChild(document.createTextNode(String(e.text || '')));
  }
  /** The argument that says what a tool call is about: a path, a command, a pattern. */
  function mainArg(input) {
    if (!input || typeof input !== 'object') return short(input, 120);
    var keys = ['file_path', 'command', 'pattern', 'path', 'url', 'plan'];
    for (var i = 0; i < keys.length; i++) {
      if (typeof input[keys[i]] === 'string') return short(input[keys[i]], 160);
    }
    return short(input, 120);
  }
  function receipt(e) {
    var x = entry('receipt', e);
    x.li.setAttribute('data-status', String(e.status));
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
      x.body.appendChild(el('p', null, text));
    });
    planLink(x, e.plan_id);
    if (runStatus) {
      runStatus.textContent = Object.prototype.hasOwnProperty.call(RUN_WORDS, e.status) ? RUN_WORDS[e.status] : String(e.status);
      runStatus.setAttribute('data-status', String(e.status));
      runStatus.setAttribute('title', String(e.status));
    }
  }
  function questions(qs) {
    if (!Array.isArray(qs)) return '';
    return qs
      .map(function (q) {
        var opts = Array.isArray(q && q.options) ? q.options.map(function (o) { return str(o && o.label); }) : [];
        return str(q && q.question) + (opts.length ? ' (' + opts.join(' | ') + ')' : '');
      })
      .join('; ');
  }

  // One function per family of events: a tool call and what became of it; a person's part (questions, plans).
  function showTool(e) {
    var x;
    switch (e.type) {
      case 'tool_use':
        x = entry('tool', e, '\\u2192 ' + str(e.tool) + ' ' + mainArg(e.input));
        tools[String(e.tool_use_id)] = x;
        return true;
      case 'tool_result': {
        var text = (e.is_error ? 'error' : 'ok') + ', ' + size(e.chars) + (e.truncated ? ', truncated' : '');
        x = tools[String(e.tool_use_id)];
        if (x) {
          x.events.push(e);
          x.li.classList.add(e.is_error ? 'ev-failed' : 'ev-ok');
          x.body.appendChild(el('span', 'ev-result', ' \\u2190 ' + text));
          open = null;
          openKind = null;
        } else entry('result', e, '\\u2190 ' + str(e.tool) + ' ' + text);
        return true;
      }
      case 'tool_interrupted':
        entry('result', e, '\\u2190 ' + str(e.tool) + ' was interrupted by a restart and is not run again');
        return true;
      case 'tool_call_cut_off':
        entry('result', e, str(e.tool) + ' call cut off at max_tokens; not run');
        return true;
      case 'tool_approval_request':
        x = entry('approval', e, 'Approval needed: ' + str(e.tool) + ' ' + mainArg(e.input) + ' (' + str(e.reason) + ')');
        link(x, e.tool_approval_id ? '/ui/tool-approvals/' + encodeURIComponent(str(e.tool_approval_id)) : '/ui/tool-approvals', 'decide');
        return true;
      case 'tool_approval_resolved':
        entry('decision', e, 'Tool call ' + (WORDS[e.decision] || str(e.decision)) + (e.by ? ' by ' + e.by : '') +
          (e.message ? ': ' + short(e.message, 300) : ''));
        return true;
      default:
        return false;
    }
  }
  function showPerson(e) {
    var x;
    switch (e.type) {
      case 'question_request':
        x = entry('question', e, 'Question: ' + questions(e.questions));
        link(x, e.question_id ? '/ui/questions#q-' + encodeURIComponent(str(e.question_id)) : '/ui/questions', 'answer');
        return true;
      case 'question_resolved':
        entry('decision', e, e.reason === 'answered'
          ? 'Question answered' + (e.by ? ' by ' + e.by : '') + (e.answers ? ': ' + short(e.answers, 300) : '')
          : 'Question ' + str(e.reason));
        return true;
      case 'plan_proposed':
        planLink(entry('plan', e, 'Plan proposed (round ' + str(e.round) + ', sha256 ' + short(str(e.sha256), 12) + ')'), e.plan_id);
        return true;
      case 'plan_decided':
        planLink(entry('decision', e, 'Plan ' + str(e.decision) + ' by ' + str(e.identity) + ': now ' + str(e.plan_status)), e.plan_id);
        return true;
      case 'plan_closed':
        planLink(entry('decision', e, 'Plan ' + str(e.plan_status) + ' before anyone decided'), e.plan_id);
        return true;
      case 'execution_recorded':
        planLink(entry('execution', e, 'Execution recorded: ' + (e.commit ? 'commit ' + str(e.commit).slice(0, 12) : 'no commit') +
          (e.branch ? ' on ' + e.branch : '') + ', ' + (Array.isArray(e.changed_files) ? e.changed_files.length : 0) +
          ' file(s) changed'), e.plan_id);
        return true;
      default:
        return false;
    }
  }

  function show(e) {
    if (showTool(e) || showPerson(e)) return;
    switch (e.type) {
      case 'text_delta':
        return delta('text', e);
      case 'thinking_delta':
        return delta('thinking', e);
      case 'run_started':
      case 'run_resumed':
        entry('run', e, (e.type === 'run_started' ? 'Run started: ' : 'Run resumed: ') + str(e.phase) +
          ' phase, model ' + str(e.model) + ', attempt ' + str(e.attempt));
        return;
      case 'model_retry':
        entry('retry', e, 'Model retry: attempt ' + str(e.attempt) + ' failed (' + str(e.cause) + '); next in ' +
          (Number(e.next_attempt_in_ms || 0) / 1000).toFixed(1) + ' s');
        return;
      case 'spend_limit_reached':
        entry('warning', e, 'Waiting on the spend limit: ' + str(e.reason) + '; resumes by ' + str(e.resumes_at));
        return;
      case 'spend_limit_resumed':
        entry('retry', e, 'Resumed after the spend limit by ' + str(e.by));
        return;
      case 'spend_cap_reached':
        entry('warning', e, 'Waiting on a spend cap: ' + str(e.reason));
        return;
      case 'spend_cap_resumed':
        entry('retry', e, 'Resumed after a spend cap by ' + str(e.by));
        return;
      case 'turn_finished':
        entry('turn', e, 'Turn ' + str(e.turn) + ' finished: ' + str(e.stop_reason) + ', $' + Number(e.cost_usd || 0).toFixed(4));
        return;
      case 'policy_violation':
        entry('warning', e, 'Refused: ' + str(e.tool) + ' is not allowed in the ' + str(e.phase) + ' phase' + (e.reason ? ' (' + e.reason + ')' : ''));
        return;
      case 'mode_fallback':
        entry('warning', e, 'Execute mode ' + str(e.from) + ' fell back to ' + str(e.to) + ': ' + str(e.reason));
        return;
      case 'run_interrupted':
        entry('warning', e, 'Run interrupted by a restart' + (e.retrying ? '; retrying (attempt ' + str(e.attempt) + ')' : ''));
        return;
      case 'run_finished':
        receipt(e);
        source.close();
        setState('The run has finished.');
        return;
      default: {
        var rest = {};
        Object.keys(e).forEach(function (k) {
          if (k !== 'type' && k !== 'seq' && k !== 'at') rest[k] = e[k];
        });
        entry('other', e, str(e.type) + ' ' + short(rest, 300));
      }
    }
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
    if (e && typeof e === 'object') show(e);
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
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
svg.chart { width: 100%; max-width: 48rem; height: auto; }
.chart-bar { fill: var(--accent); }
.chart-bar:hover { fill: var(--fg); }
.chart-axis { stroke: var(--fg); }
.chart-grid { stroke: var(--line); stroke-dasharray: 4 4; }
.chart-label { fill: var(--muted); font-size: 12px; }
form.filters label { display: inline; margin: 0 .25rem 0 .75rem; }
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
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.timeline { list-style: none; padding: .5rem 1rem; }
.timeline .ev { display: grid; grid-template-columns: 6.5rem 1fr; gap: 0 .75rem; border-bottom: 1px solid var(--line); padding: .3rem 0; }
.timeline .ev-time { color: var(--muted); font-size: .85em; font-variant-numeric: tabular-nums; }
.timeline .ev-body { overflow-wrap: anywhere; min-width: 0; }
.timeline .ev-raw { grid-column: 2; font-size: .85em; }
.timeline .ev-raw summary { color: var(--muted); cursor: pointer; }
.ev-label { font-weight: 600; margin-right: .5rem; }
.ev-prose { white-space: pre-wrap; margin: .1rem 0; }
.ev-thinking .ev-prose { color: var(--muted); font-style: italic; }
.ev-failed .ev-result, .ev-warning .ev-line { color: var(--err); }
.ev-turn .ev-line { color: var(--muted); font-size: .9em; }
.ev-approval, .ev-question { background: color-mix(in srgb, var(--accent) 8%, transparent); }
.diff-file { border: 1px solid var(--line); margin: 1rem 0; }
.diff-head { font-size: 1rem; margin: 0; padding: .4rem .6rem; background: color-mix(in srgb, var(--fg) 5%, transparent); overflow-wrap: anywhere; }
.diff-mark { font-size: .8em; font-weight: 600; border: 1px solid var(--line); border-radius: 3px; padding: 0 .3rem; margin-left: .3rem; }
.diff-count-add { color: #1a7f37; } .diff-count-del { color: #cf222e; }
@media (prefers-color-scheme: dark) { .diff-count-add { color: #7ee2a8; } .diff-count-del { color: #ffa198; } }
.diff-counts { font-family: ui-monospace, monospace; font-size: .85em; margin-left: .5rem; }
.diff-files { columns: 2 20rem; }
table.diff { font-family: ui-monospace, monospace; font-size: .85em; table-layout: fixed; }
table.diff th { font-size: .8em; color: var(--muted); padding: .1rem .4rem; }
table.diff th:nth-child(1), table.diff th:nth-child(2) { width: 3.5rem; } table.diff th:nth-child(3) { width: 1.5rem; }
table.diff td { padding: 0 .4rem; border: 0; }
.diff-ln { color: var(--muted); text-align: right; user-select: none; }
.diff-marker { user-select: none; font-weight: 700; }
.diff-code code { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 1em; }
.diff-add { background: color-mix(in srgb, #2da44e 16%, transparent); }
.diff-del { background: color-mix(in srgb, #cf222e 14%, transparent); }
.diff-hunk td { color: var(--muted); background: color-mix(in srgb, var(--accent) 8%, transparent); padding: .15rem .4rem; }
.diff-note td { color: var(--muted); font-style: italic; }
.tk-kw { color: #8250df; } .tk-str { color: #0a3069; } .tk-com { color: #6e7781; font-style: italic; } .tk-num { color: #0550ae; }
@media (prefers-color-scheme: dark) { .tk-kw { color: #d2a8ff; } .tk-str { color: #a5d6ff; } .tk-com { color: #8b949e; } .tk-num { color: #79c0ff; } }
.commands { padding-left: 1.25rem; }
.command { margin: .5rem 0; }
.cmd-line { margin: .2rem 0; overflow-wrap: anywhere; }
.cmd-state { font-size: .8em; font-weight: 600; border-radius: 3px; padding: 0 .3rem; margin-left: .3rem; }
.cmd-ok { background: var(--ok-bg); color: var(--ok); } .cmd-error { background: var(--err-bg); color: var(--err); } .cmd-pending { color: var(--muted); }
.cmd-output { max-height: 30rem; overflow: auto; }
.tool-preview { margin: .5rem 0; }
form.inline { display: inline; }
form.inline button { margin: 0 .3rem .3rem 0; padding: .2rem .6rem; }
ol.slots { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; margin: 0; padding: 0; max-width: 16rem; }
.slot { font-size: .8em; font-weight: 600; border: 1px solid var(--line); border-radius: 3px; padding: 0 .3rem; white-space: nowrap; }
.slot-fired { background: var(--ok-bg); color: var(--ok); }
.slot-missed, .slot-capped, .slot-canceled { background: var(--err-bg); color: var(--err); }
.slot-coalesced, .slot-skipped, .slot-buffered { color: var(--muted); }
.slot-plan { font-size: .8em; }
ul.times { margin: 0; padding-left: 1rem; }
th .muted { font-weight: 400; }
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
