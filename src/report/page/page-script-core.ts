/**
 * The report page's script, part 1: data, helpers, tabs (and the address's `#view`), summary, task details, failures. Every text from a task or a model is shown with
 * textContent or an SVG text node, never parsed as HTML; links are relative paths only.
 * Plain ES5-style JavaScript in a string: it runs in the browser, not in Node.
 */
export const kPageScriptCore = String.raw`
var D = JSON.parse(document.getElementById('report-data').textContent);
var SVGNS = 'http://www.w3.org/2000/svg';
var STATUSES = ['completed', 'failed', 'skipped', 'in_progress', 'pending'];
var STATUS_COLORS = { completed: '#2e7d32', failed: '#c62828', skipped: '#9e9e9e', in_progress: '#1565c0', pending: '#f9a825' };
var OUTCOME_COLORS = { completed: '#2e7d32', failed: '#c62828', retried: '#ef6c00' };
var T = { id: 0, title: 1, role: 2, wave: 3, status: 4, findings: 5, error: 6, deps: 7, mode: 8, description: 9 };
var A = { task: 0, attempt: 1, start: 2, ms: 3, outcome: 4, errorClass: 5, thread: 6, run: 7 };
var ROW_H = 24;
var indexById = new Map();
var statsCache = null;

function el(tag, className, text) {
  var e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function svg(tag, attrs) {
  var e = document.createElementNS(SVGNS, tag);
  for (var k in attrs) e.setAttribute(k, String(attrs[k]));
  return e;
}
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
function fmtMs(ms) {
  if (ms < 1000) return Math.round(ms) + ' ms';
  var s = ms / 1000;
  if (s < 60) return s.toFixed(1) + ' s';
  var m = Math.floor(s / 60);
  return m + ' min ' + Math.round(s - m * 60) + ' s';
}
/** A link target only for a plain relative path: no scheme (javascript:, data:), no way up, no absolute path. */
function safeHref(path) {
  return typeof path === 'string' && /^[A-Za-z0-9_][A-Za-z0-9._\/-]*$/.test(path) && path.indexOf('..') < 0 ? path : null;
}
/** The first n UTF-16 units of a text, never half of a surrogate pair (an emoji cut in two shows as a replacement box). */
function cut(text, n) {
  var s = text.slice(0, n);
  return /[\uD800-\uDBFF]$/.test(s) ? s.slice(0, -1) : s;
}
/** 12345 as 12,345, the same in every locale. */
function fmtInt(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
function reindex() {
  indexById = new Map();
  statsCache = null;
  for (var i = 0; i < D.tasks.length; i++) indexById.set(D.tasks[i][T.id], i);
}
/** Per task, over every run: its attempts, and the time they ran (typed arrays: one number per task, even for a million). */
function taskStats() {
  if (statsCache) return statsCache;
  var count = new Int32Array(D.tasks.length), ms = new Float64Array(D.tasks.length);
  for (var j = 0; j < D.attempts.length; j++) { var a = D.attempts[j]; count[a[A.task]]++; ms[a[A.task]] += a[A.ms]; }
  statsCache = { count: count, ms: ms };
  return statsCache;
}
/** A task's requests (usage.ndjson), or null. */
function usageOf(id) {
  return Object.prototype.hasOwnProperty.call(D.details, id) && D.details[id].usage ? D.details[id].usage : null;
}

var VIEWS = ['summary', 'dag', 'timeline', 'failures', 'tasks'];
var LABELS = { summary: 'Summary', dag: 'DAG', timeline: 'Timeline', failures: 'Failures', tasks: 'Tasks' };
var RENDER = {};
var rendered = {};
var current = 'summary';
var sections = {};
var tabs = {};
var aside;

function buildShell() {
  var header = el('header');
  var h1 = el('h1', null, 'csv-wave report: ' + D.session);
  header.appendChild(h1);
  var meta = el('span', 'meta');
  meta.id = 'generated';
  header.appendChild(meta);
  document.title = 'csv-wave report: ' + D.session;
  var nav = el('nav');
  nav.setAttribute('role', 'tablist');
  VIEWS.forEach(function (view) {
    var b = el('button', null, LABELS[view]);
    b.id = 'tab-' + view;
    b.setAttribute('role', 'tab');
    // The address says the view: the back button goes to the view before (hashchange below).
    b.addEventListener('click', function () {
      show(view);
      if (location.hash !== '#' + view) location.hash = view;
    });
    tabs[view] = b;
    nav.appendChild(b);
  });
  var layout = el('div', 'layout');
  var main = el('main');
  VIEWS.forEach(function (view) {
    var s = el('section');
    s.id = 'view-' + view;
    s.hidden = true;
    sections[view] = s;
    main.appendChild(s);
  });
  aside = el('aside');
  aside.id = 'detail';
  aside.hidden = true;
  layout.appendChild(main);
  layout.appendChild(aside);
  document.body.appendChild(header);
  document.body.appendChild(nav);
  document.body.appendChild(layout);
}

var liveStopped = false;
function renderHeader() {
  var live = liveStopped ? ' · live updates stopped (reload the page to try again)' : ' · live';
  document.getElementById('generated').textContent = 'written ' + D.generated + (D.live ? live : '');
}

/** The view the address names (report.html#timeline), or the summary. */
function viewInAddress() {
  var view = location.hash.slice(1);
  return VIEWS.indexOf(view) >= 0 ? view : 'summary';
}

function show(view) {
  if (view === current && rendered[view]) return;
  current = view;
  VIEWS.forEach(function (v) {
    sections[v].hidden = v !== view;
    tabs[v].setAttribute('aria-selected', v === view ? 'true' : 'false');
  });
  if (!rendered[view]) {
    rendered[view] = true;
    RENDER[view](sections[view]);
  }
}

RENDER.summary = function (root) {
  clear(root);
  root.appendChild(el('h2', null, 'Summary'));
  var table = el('table', 'counts');
  var total = 0;
  STATUSES.forEach(function (status) {
    var tr = el('tr');
    var th = el('th');
    var sw = el('span', 'swatch');
    sw.style.background = STATUS_COLORS[status];
    th.appendChild(sw);
    th.appendChild(document.createTextNode(status));
    var td = el('td', null, D.counts[status] || 0);
    td.setAttribute('data-count', status);
    total += D.counts[status] || 0;
    tr.appendChild(th);
    tr.appendChild(td);
    table.appendChild(tr);
  });
  var tr = el('tr');
  tr.appendChild(el('th', null, 'total'));
  var td = el('td', null, total);
  td.setAttribute('data-count', 'total');
  tr.appendChild(td);
  table.appendChild(tr);
  root.appendChild(table);
  if (D.failedSpend) {
    var spent = el('p', 'callout', D.failedSpend);
    spent.id = 'failed-spend';
    root.appendChild(spent);
  }
  var facts = el('dl', 'facts');
  var fact = function (name, value) { facts.appendChild(el('dt', null, name)); facts.appendChild(el('dd', null, value)); };
  fact('waves', D.waveCount);
  fact('wall time (latest run)', fmtMs(D.wallMs));
  fact('attempts', D.attempts.length);
  fact('retries', D.retries);
  fact('runs', D.runs.length);
  fact('tokens', D.tokens ? fmtTokens(D.tokens) : 'none recorded');
  // The cost's text comes with the data, made by the functions status and context.md use.
  if (D.cost) fact('cost', D.cost);
  // The share of the prompt tokens the provider's cache served, as status says it.
  if (D.promptCache) fact('prompt cache', D.promptCache);
  // The results taken from the cache (docs/cache.md), as status says it.
  if (D.cache) fact('from the cache', D.cache.text);
  root.appendChild(facts);
};

function fmtTokens(u) {
  return fmtInt(u.prompt) + ' prompt (' + fmtInt(u.cached) + ' cached), ' + fmtInt(u.completion) + ' completion, in ' + fmtInt(u.requests) + ' request' + (u.requests === 1 ? '' : 's');
}

function showDetail(id) {
  var i = indexById.get(id);
  if (i === undefined) return;
  var t = D.tasks[i];
  var d = Object.prototype.hasOwnProperty.call(D.details, id) ? D.details[id] : {};
  var discoveries = d.discoveries || [], artifacts = d.artifacts || [];
  clear(aside);
  aside.hidden = false;
  aside.setAttribute('data-task', id);
  var close = el('button', 'chip', 'close');
  close.addEventListener('click', function () { aside.hidden = true; });
  aside.appendChild(close);
  aside.appendChild(el('h2', null, t[T.id] + (t[T.title] ? ' — ' + t[T.title] : '')));
  var facts = el('dl', 'facts');
  var stats = taskStats();
  var ran = stats.count[i] > 0 ? [['duration', fmtMs(stats.ms[i])], ['attempts', stats.count[i]]] : [];
  var spent = d.usage ? [['tokens', fmtTokens(d.usage)], ['cost', d.usage.cost_text]] : [];
  [['status', t[T.status]], ['role', t[T.role]], ['wave', t[T.wave]], ['deps', t[T.deps] || '—'], ['exec_mode', t[T.mode] || 'csv-wave']].concat(ran, spent).forEach(function (f) {
    facts.appendChild(el('dt', null, f[0]));
    facts.appendChild(el('dd', null, f[1]));
  });
  aside.appendChild(facts);
  var block = function (title, text, field) {
    if (!text) return;
    aside.appendChild(el('h3', null, title));
    var pre = el('pre', null, text);
    pre.setAttribute('data-field', field);
    aside.appendChild(pre);
  };
  block('Error', t[T.error], 'error');
  block('Findings', t[T.findings], 'findings');
  block('Description', t[T.description], 'description');
  block('prev_context', d.prev_context, 'prev_context');
  var tries = D.attempts.filter(function (a) { return a[A.task] === i; });
  if (tries.length > 0) {
    aside.appendChild(el('h3', null, 'Attempts'));
    var ul = el('ul');
    tries.forEach(function (a) {
      var run = D.runs.length > 1 ? ', run ' + (a[A.run] + 1) : '';
      ul.appendChild(el('li', null, '#' + a[A.attempt] + ' ' + a[A.outcome] + (a[A.errorClass] ? ' (' + a[A.errorClass] + ')' : '') + ', ' + fmtMs(a[A.ms]) + (a[A.thread] === null ? '' : ', thread ' + a[A.thread]) + run));
    });
    aside.appendChild(ul);
  }
  if (discoveries.length > 0) block('Discoveries', discoveries.map(function (x) { return x.type + ': ' + JSON.stringify(x.data, null, 2); }).join('\n\n'), 'discoveries');
  if (artifacts.length > 0) {
    aside.appendChild(el('h3', null, 'Artifacts'));
    var list = el('ul');
    artifacts.forEach(function (path) {
      var li = el('li');
      var href = safeHref(path);
      if (href) {
        var a = el('a', null, path);
        a.href = href;
        a.rel = 'noopener noreferrer';
        li.appendChild(a);
      } else li.textContent = path;
      list.appendChild(li);
    });
    aside.appendChild(list);
  }
}

RENDER.failures = function (root) {
  clear(root);
  root.appendChild(el('h2', null, 'Failures'));
  if (D.failures.length === 0) { root.appendChild(el('p', 'muted', 'No failed or skipped-for-failure tasks.')); return; }
  D.failures.forEach(function (g) {
    var box = el('div', 'failure-group');
    box.setAttribute('data-kind', g.kind);
    var title = g.kind === 'failed'
      ? 'failed · ' + (g.errorClass || 'unknown class') + ' · ' + g.tasks.length + ' task(s)'
      : 'skipped because ' + (g.message || 'an unknown task') + ' failed · ' + g.tasks.length + ' task(s)';
    box.appendChild(el('h3', null, title));
    if (g.kind === 'failed') box.appendChild(el('pre', null, g.message));
    else if (g.message) { var root2 = chip(g.message); root2.setAttribute('data-root', g.message); box.appendChild(el('span', 'muted', 'root: ')); box.appendChild(root2); box.appendChild(el('br')); }
    g.tasks.slice(0, 200).forEach(function (id) { box.appendChild(chip(id)); });
    if (g.tasks.length > 200) box.appendChild(el('span', 'muted', ' and ' + (g.tasks.length - 200) + ' more (filter the task table)'));
    root.appendChild(box);
  });
};

function chip(id) {
  var b = el('button', 'chip', id);
  b.setAttribute('data-id', id);
  b.addEventListener('click', function () { showDetail(id); });
  return b;
}
`;
