/**
 * The report page's script, part 2: the task table. Filters by status, role, wave and text,
 * sort by a click on a heading, and only the rows in view (plus a margin) are in the DOM,
 * so that 100,000 rows scroll. Text goes in with textContent only.
 */
export const kPageScriptTable = String.raw`
// The task table: filters, sort, and only the rows in view are in the DOM.
var filtered = [];
var sortKey = null;
var sortDir = 1;
var controls = null;

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
  controls.text.placeholder = 'search id, title, findings, error';
  controls.text.addEventListener('input', applyFilters);
  bar.appendChild(controls.text);
  controls.count = el('span', 'muted');
  controls.count.id = 'row-count';
  bar.appendChild(controls.count);
  root.appendChild(bar);
  var head = el('div', 'thead');
  [['id', T.id], ['title', T.title], ['role', T.role], ['wave', T.wave], ['status', T.status], ['findings / error', T.findings]].forEach(function (c) {
    var h = el('span', null, c[0]);
    h.addEventListener('click', function () {
      if (sortKey === c[1]) sortDir = -sortDir; else { sortKey = c[1]; sortDir = 1; }
      applyFilters();
    });
    head.appendChild(h);
  });
  root.appendChild(head);
  controls.viewport = el('div', 'viewport');
  controls.viewport.id = 'table-viewport';
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
  filtered = [];
  for (var i = 0; i < D.tasks.length; i++) {
    var t = D.tasks[i];
    if (status && t[T.status] !== status) continue;
    if (role && t[T.role] !== role) continue;
    if (wave && String(t[T.wave]) !== wave) continue;
    if (text && (t[T.id] + '\n' + t[T.title] + '\n' + t[T.findings] + '\n' + t[T.error]).toLowerCase().indexOf(text) < 0) continue;
    filtered.push(i);
  }
  if (sortKey !== null) {
    var k = sortKey;
    filtered.sort(function (a, b) {
      var x = D.tasks[a][k], y = D.tasks[b][k];
      return (x < y ? -1 : x > y ? 1 : a - b) * sortDir;
    });
  }
  controls.count.textContent = filtered.length + ' of ' + D.tasks.length + ' tasks';
  controls.spacer.style.height = filtered.length * ROW_H + 'px';
  drawRows();
}

function drawRows() {
  var vp = controls.viewport;
  var first = Math.max(0, Math.floor(vp.scrollTop / ROW_H) - 10);
  var last = Math.min(filtered.length, Math.ceil((vp.scrollTop + vp.clientHeight) / ROW_H) + 10);
  clear(controls.spacer);
  for (var r = first; r < last; r++) {
    var t = D.tasks[filtered[r]];
    var row = el('div', 'trow');
    row.style.top = r * ROW_H + 'px';
    row.setAttribute('data-id', t[T.id]);
    row.appendChild(el('span', null, t[T.id]));
    row.appendChild(el('span', null, t[T.title]));
    row.appendChild(el('span', null, t[T.role]));
    row.appendChild(el('span', null, t[T.wave]));
    row.appendChild(el('span', 'status status-' + t[T.status], t[T.status]));
    row.appendChild(el('span', null, cut(t[T.error] || t[T.findings], 300)));
    row.addEventListener('click', showDetail.bind(null, t[T.id]));
    controls.spacer.appendChild(row);
  }
}

`;
