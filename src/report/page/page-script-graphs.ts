/**
 * The report page's script, part 3: the DAG laid out by wave (SVG; each box with its
 * task's role and duration; per-wave aggregates that expand on click past kDagLimit tasks),
 * start-up, the address's `#view`, and live updates from `csv-wave serve`.
 */
export const kPageScriptGraphs = String.raw`
var DAG_LIMIT = 2000;
var NODE_W = 170, NODE_H = 34, COL_W = 220, ROW_GAP = 44;

RENDER.dag = function (root) {
  clear(root);
  root.appendChild(el('h2', null, 'DAG by wave'));
  var box = el('div', 'graph');
  root.appendChild(box);
  if (D.tasks.length <= DAG_LIMIT) drawDag(box, D.tasks.map(function (_, i) { return i; }));
  else drawAggregates(root, box);
};

function drawDag(box, indexes) {
  var byWave = {};
  var pos = new Map();
  var maxRows = 0, maxWave = 0, minWave = Infinity;
  indexes.forEach(function (i) {
    var w = D.tasks[i][T.wave];
    (byWave[w] = byWave[w] || []).push(i);
    maxWave = Math.max(maxWave, w);
    minWave = Math.min(minWave, w);
  });
  if (minWave === Infinity) minWave = 0;
  Object.keys(byWave).forEach(function (w) {
    byWave[w].forEach(function (i, row) { pos.set(i, { x: 10 + (Number(w) - minWave) * COL_W, y: 24 + row * ROW_GAP }); });
    maxRows = Math.max(maxRows, byWave[w].length);
  });
  var s = svg('svg', { width: 20 + (maxWave - minWave + 1) * COL_W, height: 40 + maxRows * ROW_GAP });
  s.id = 'dag-chart';
  var stats = taskStats();
  for (var w = minWave; w <= maxWave; w++) {
    if (!byWave[w]) continue;
    var label = svg('text', { x: 10 + (w - minWave) * COL_W, y: 14 });
    label.textContent = w === 0 ? 'no wave' : 'wave ' + w;
    s.appendChild(label);
  }
  var edges = svg('g', { stroke: '#9aa5b1', fill: 'none' });
  s.appendChild(edges);
  indexes.forEach(function (i) {
    var to = pos.get(i);
    String(D.tasks[i][T.deps]).split(';').forEach(function (dep) {
      var j = indexById.get(dep.trim());
      var from = j === undefined ? undefined : pos.get(j);
      if (!from) return;
      var x1 = from.x + NODE_W, y1 = from.y + NODE_H / 2, x2 = to.x, y2 = to.y + NODE_H / 2;
      edges.appendChild(svg('path', { d: 'M' + x1 + ' ' + y1 + ' C' + (x1 + 25) + ' ' + y1 + ' ' + (x2 - 25) + ' ' + y2 + ' ' + x2 + ' ' + y2 }));
    });
  });
  indexes.forEach(function (i) {
    var t = D.tasks[i], p = pos.get(i);
    var g = svg('g', { class: 'node', 'data-id': t[T.id], 'data-status': t[T.status] });
    var rect = svg('rect', { x: p.x, y: p.y, width: NODE_W, height: NODE_H, rx: 4, fill: STATUS_COLORS[t[T.status]] || '#777' });
    // Its role, and the time its attempts ran (every run's), under its id.
    var meta = t[T.role] + (stats.count[i] > 0 ? ' · ' + fmtMs(stats.ms[i]) : '');
    var title = svg('title', {});
    title.textContent = t[T.id] + ' (' + t[T.status] + ')' + (t[T.title] ? ': ' + t[T.title] : '') + '\n' + meta;
    rect.appendChild(title);
    var text = svg('text', { x: p.x + 6, y: p.y + 14, fill: '#fff' });
    text.textContent = t[T.id].length > 24 ? cut(t[T.id], 23) + '…' : t[T.id];
    var sub = svg('text', { x: p.x + 6, y: p.y + 28, fill: '#fff', class: 'node-meta' });
    sub.textContent = meta.length > 28 ? cut(meta, 27) + '…' : meta;
    g.appendChild(rect);
    g.appendChild(text);
    g.appendChild(sub);
    g.addEventListener('click', function () { showDetail(t[T.id]); });
    s.appendChild(g);
  });
  box.appendChild(s);
}

function drawAggregates(root, box) {
  var waves = {};
  D.tasks.forEach(function (t, i) {
    var w = waves[t[T.wave]] = waves[t[T.wave]] || { indexes: [], counts: {} };
    w.indexes.push(i);
    w.counts[t[T.status]] = (w.counts[t[T.status]] || 0) + 1;
  });
  var keys = Object.keys(waves).map(Number).sort(function (a, b) { return a - b; });
  var s = svg('svg', { width: 20 + keys.length * COL_W, height: 90 });
  s.id = 'dag-chart';
  var expanded = el('div');
  keys.forEach(function (w, col) {
    var info = waves[w], x = 10 + col * COL_W;
    var g = svg('g', { class: 'aggregate', 'data-wave': w });
    var label = svg('text', { x: x, y: 14 });
    label.textContent = (w === 0 ? 'no wave' : 'wave ' + w) + ': ' + info.indexes.length + ' tasks';
    g.appendChild(label);
    var offset = 0;
    STATUSES.forEach(function (st) {
      var n = info.counts[st] || 0;
      if (!n) return;
      var width = (NODE_W * n) / info.indexes.length;
      var r = svg('rect', { x: x + offset, y: 22, width: Math.max(width, 1), height: 26, fill: STATUS_COLORS[st] });
      var title = svg('title', {});
      title.textContent = st + ': ' + n;
      r.appendChild(title);
      g.appendChild(r);
      offset += width;
    });
    var hint = svg('text', { x: x, y: 66 });
    hint.textContent = 'click to show';
    g.appendChild(hint);
    g.addEventListener('click', function () {
      clear(expanded);
      expanded.appendChild(el('h3', null, 'wave ' + w + (info.indexes.length > DAG_LIMIT ? ' (first ' + DAG_LIMIT + ' tasks)' : '')));
      var inner = el('div', 'graph');
      expanded.appendChild(inner);
      drawDag(inner, info.indexes.slice(0, DAG_LIMIT));
    });
    s.appendChild(g);
  });
  box.appendChild(s);
  root.appendChild(el('p', 'muted', D.tasks.length + ' tasks: one box per wave; click a wave to draw its tasks.'));
  root.appendChild(expanded);
}

// Start-up, and live updates from csv-wave serve.
reindex();
buildShell();
renderHeader();
// A view can be linked to: report.html#timeline opens on the timeline. A new #view in the
// address (typed, or the back button after a tab) switches to it.
show(viewInAddress());
window.addEventListener('hashchange', function () { show(viewInAddress()); });
var updates = 0;
document.body.setAttribute('data-updates', '0');
if (D.live && /^https?:$/.test(location.protocol) && typeof EventSource === 'function') {
  // A notice holds the number of the latest change only; the page fetches that data itself,
  // one fetch at a time, and after it the latest again if more changes were announced meanwhile.
  var wanted = D.generation, loading = false;
  var load = function () {
    if (loading || wanted === D.generation) return;
    loading = true;
    var asked = wanted;
    fetch('data', { cache: 'no-store', credentials: 'same-origin' })
      .then(function (response) {
        if (!response.ok) throw new Error('HTTP ' + response.status);
        return response.json();
      })
      .then(function (next) {
        if (next.generation === D.generation) return;
        D = next;
        reindex();
        rendered = {};
        renderHeader();
        show(current);
        updates++;
        document.body.setAttribute('data-updates', String(updates));
      })
      // A failed fetch waits for the next notice rather than trying again at once.
      .catch(function () { if (wanted === asked) wanted = D.generation; })
      .then(function () { loading = false; load(); });
  };
  var source = new EventSource('events');
  source.onmessage = function (event) {
    wanted = Number(event.data);
    load();
  };
  // Closed for good (the server refused the stream, say with 503): the header says so.
  source.onerror = function () {
    if (source.readyState === EventSource.CLOSED) { liveStopped = true; renderHeader(); }
  };
}
document.body.setAttribute('data-ready', 'true');
`;
