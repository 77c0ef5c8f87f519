/**
 * The report page's script, part 2: the task table. Its columns are tasks.csv's, in file
 * order, but those empty in every task, then what the run measured: duration, attempts,
 * tokens and cost. Filters by status, role, wave and text, sort by a click on a heading, and
 * only the rows in view (plus a margin) are in the DOM, so that 100,000 rows scroll. Text
 * goes in with textContent only.
 */
export const kPageScriptTable = String.raw`
// The task table: filters, sort, and only the rows in view are in the DOM.
var filtered = [];
var sortKey = null;
var sortDir = 1;
var controls = null;
var columns = [];
var HEAD_H = 28;
// The columns a task's array holds, by name; any other column of tasks.csv comes with its cells.
var TASK_FIELDS = new Map([['id', T.id], ['title', T.title], ['role', T.role], ['wave', T.wave], ['status', T.status], ['findings', T.findings], ['error', T.error], ['deps', T.deps], ['exec_mode', T.mode], ['description', T.description]]);
// Widths in px. A column of text (your own columns among them) has a least width and a share
// of the room left, so that the table fits the page when it can; past that it scrolls sideways.
var FIXED_WIDTHS = new Map([['id', 130], ['role', 90], ['wave', 45], ['status', 90], ['exec_mode', 80]]);
var TEXT_SHARES = new Map([['title', 2], ['description', 3], ['findings', 3], ['error', 3]]);

/** The table's columns: tasks.csv's as the data lists them, then the run's measures that any task has. */
function tableColumns() {
  var list = D.columns.map(function (c) {
    var field = TASK_FIELDS.get(c.name);
    var fixed = FIXED_WIDTHS.get(c.name), share = TEXT_SHARES.get(c.name);
    var column = { key: 'col:' + c.name, name: c.name, stat: false, width: fixed || (share ? 100 : 80), share: fixed ? 0 : share || 1 };
    if (field === undefined) {
      var cells = c.cells || [];
      column.text = function (i) { return cells[i] || ''; };
      column.value = column.text;
    } else if (field === T.mode) {
      column.text = function (i) { return D.tasks[i][T.mode] || 'csv-wave'; };
      column.value = column.text;
    } else if (field === T.wave) {
      column.text = function (i) { return D.tasks[i][T.wave] || ''; };
      column.value = function (i) { return D.tasks[i][T.wave]; };
    } else {
      column.text = function (i) { return D.tasks[i][field]; };
      column.value = column.text;
    }
    return column;
  });
  var stat = function (name, width, text, value) { list.push({ key: name, name: name, stat: true, width: width, share: 0, text: text, value: value }); };
  var stats = taskStats();
  if (D.attempts.length > 0) {
    stat('duration', 75, function (i) { return stats.count[i] > 0 ? fmtMs(stats.ms[i]) : ''; }, function (i) { return stats.ms[i]; });
    stat('attempts', 75, function (i) { return stats.count[i] > 0 ? String(stats.count[i]) : ''; }, function (i) { return stats.count[i]; });
  }
  if (D.tokens) {
    var spent = function (i) { return usageOf(D.tasks[i][T.id]); };
    stat('tokens', 75, function (i) { var u = spent(i); return u ? fmtInt(u.prompt + u.completion) : ''; }, function (i) { var u = spent(i); return u ? u.prompt + u.completion : -1; });
    stat('cost', 90, function (i) { var u = spent(i); return u ? u.cost_text : ''; }, function (i) { var u = spent(i); return u ? u.cost_usd : -1; });
  }
  return list;
}

function buildControls(root) {
  controls = {};
  var bar = el('div', 'controls');
  var select = function (id, label, plural) {
    var s = el('select');
    s.id = id;
    s.setAttribute('aria-label', label);
    s.setAttribute('data-plural', plural);
    s.addEventListener('change', applyFilters);
    bar.appendChild(s);
    return s;
  };
  controls.status = select('filter-status', 'status', 'statuses');
  controls.role = select('filter-role', 'role', 'roles');
  controls.wave = select('filter-wave', 'wave', 'waves');
  controls.text = el('input');
  controls.text.id = 'filter-text';
  controls.text.type = 'search';
  controls.text.placeholder = 'search id, title, findings, error, your columns';
  controls.text.addEventListener('input', applyFilters);
  bar.appendChild(controls.text);
  controls.count = el('span', 'muted');
  controls.count.id = 'row-count';
  bar.appendChild(controls.count);
  root.appendChild(bar);
  controls.viewport = el('div', 'viewport');
  controls.viewport.id = 'table-viewport';
  // The heading scrolls sideways with the rows, and stays on top (sticky).
  controls.head = el('div', 'thead');
  controls.viewport.appendChild(controls.head);
  controls.spacer = el('div', 'spacer');
  controls.viewport.appendChild(controls.spacer);
  var scheduled = false;
  controls.viewport.addEventListener('scroll', function () {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(function () { scheduled = false; drawRows(); });
  });
  root.appendChild(controls.viewport);
}

function buildHead() {
  clear(controls.head);
  var tracks = [], total = 12;
  columns.forEach(function (c) {
    var h = el('span', c.stat ? 'stat' : null, c.name);
    h.setAttribute(c.stat ? 'data-stat' : 'data-col', c.name);
    if (sortKey === c.key) h.setAttribute('aria-sort', sortDir > 0 ? 'ascending' : 'descending');
    h.addEventListener('click', function () {
      if (sortKey === c.key) sortDir = -sortDir; else { sortKey = c.key; sortDir = 1; }
      buildHead();
      applyFilters();
    });
    controls.head.appendChild(h);
    tracks.push(c.share ? 'minmax(' + c.width + 'px, ' + c.share + 'fr)' : c.width + 'px');
    total += c.width + 8;
  });
  // Through CSSOM, which the page's Content-Security-Policy allows (a style attribute it would not).
  controls.viewport.style.setProperty('--cols', tracks.join(' '));
  controls.viewport.style.setProperty('--table-width', total + 'px');
}

function fillOptions(selectNode, values) {
  var keep = selectNode.value;
  clear(selectNode);
  var all = el('option', null, 'all ' + selectNode.getAttribute('data-plural'));
  all.value = '';
  selectNode.appendChild(all);
  values.forEach(function (v) { var o = el('option', null, v); o.value = String(v); selectNode.appendChild(o); });
  selectNode.value = values.map(String).indexOf(keep) >= 0 ? keep : '';
}

RENDER.tasks = function (root) {
  if (!controls) buildControls(root);
  columns = tableColumns();
  if (!columns.some(function (c) { return c.key === sortKey; })) sortKey = null;
  buildHead();
  // Keyed by text from the session: no prototype, so a role named __proto__ is a role like any other.
  var roles = Object.create(null), waves = Object.create(null);
  D.tasks.forEach(function (t) { roles[t[T.role]] = true; waves[t[T.wave]] = true; });
  fillOptions(controls.status, STATUSES);
  fillOptions(controls.role, Object.keys(roles).sort());
  fillOptions(controls.wave, Object.keys(waves).map(Number).sort(function (a, b) { return a - b; }));
  applyFilters();
};

function applyFilters() {
  var status = controls.status.value, role = controls.role.value, wave = controls.wave.value;
  var text = controls.text.value.toLowerCase();
  var own = D.columns.filter(function (c) { return c.cells; });
  filtered = [];
  for (var i = 0; i < D.tasks.length; i++) {
    var t = D.tasks[i];
    if (status && t[T.status] !== status) continue;
    if (role && t[T.role] !== role) continue;
    if (wave && String(t[T.wave]) !== wave) continue;
    if (text) {
      var hay = t[T.id] + '\n' + t[T.title] + '\n' + t[T.findings] + '\n' + t[T.error];
      for (var c = 0; c < own.length; c++) hay += '\n' + (own[c].cells[i] || '');
      if (hay.toLowerCase().indexOf(text) < 0) continue;
    }
    filtered.push(i);
  }
  var sorted = null;
  for (var s = 0; s < columns.length; s++) if (columns[s].key === sortKey) sorted = columns[s];
  if (sorted) {
    // Each value once, then a sort of positions: a comparison never looks a task up again.
    var values = filtered.map(function (i) { return sorted.value(i); });
    var order = filtered.map(function (_, p) { return p; });
    order.sort(function (a, b) {
      var x = values[a], y = values[b];
      return (x < y ? -1 : x > y ? 1 : filtered[a] - filtered[b]) * sortDir;
    });
    filtered = order.map(function (p) { return filtered[p]; });
  }
  controls.count.textContent = filtered.length + ' of ' + D.tasks.length + ' tasks';
  controls.spacer.style.height = filtered.length * ROW_H + 'px';
  drawRows();
}

function drawRows() {
  var vp = controls.viewport;
  var top = Math.max(0, vp.scrollTop - HEAD_H);
  var first = Math.max(0, Math.floor(top / ROW_H) - 10);
  var last = Math.min(filtered.length, Math.ceil((top + vp.clientHeight) / ROW_H) + 10);
  clear(controls.spacer);
  for (var r = first; r < last; r++) {
    var i = filtered[r], t = D.tasks[i];
    var row = el('div', 'trow');
    row.style.top = r * ROW_H + 'px';
    row.setAttribute('data-id', t[T.id]);
    columns.forEach(function (c) {
      var cell = el('span', c.name === 'status' && !c.stat ? 'status status-' + t[T.status] : null, cut(String(c.text(i)), 300));
      cell.setAttribute(c.stat ? 'data-stat' : 'data-col', c.name);
      row.appendChild(cell);
    });
    row.addEventListener('click', showDetail.bind(null, t[T.id]));
    controls.spacer.appendChild(row);
  }
}

`;
