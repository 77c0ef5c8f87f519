/**
 * The report page's script, part 3: the DAG laid out by wave (SVG; per-wave aggregates
 * that expand on click past kDagLimit tasks), the timeline (one bar per attempt, lanes
 * by slot, wave starts marked, zoom with the wheel or buttons, pan by dragging), start-up and
 * live updates from `csv-wave serve`.
 */
export const kPageScriptGraphs = String.raw`
var DAG_LIMIT = 2000;
var NODE_W = 150, NODE_H = 22, COL_W = 200, ROW_GAP = 30;

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
  s.id = 'dag';
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
    var title = svg('title', {});
    title.textContent = t[T.id] + ' (' + t[T.status] + ')' + (t[T.title] ? ': ' + t[T.title] : '');
    rect.appendChild(title);
    var text = svg('text', { x: p.x + 6, y: p.y + 15, fill: '#fff' });
    text.textContent = t[T.id].length > 22 ? t[T.id].slice(0, 21) + '…' : t[T.id];
    g.appendChild(rect);
    g.appendChild(text);
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
  s.id = 'dag';
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

RENDER.timeline = function (root) {
  clear(root);
  root.appendChild(el('h2', null, 'Timeline'));
  if (D.attempts.length === 0) { root.appendChild(el('p', 'muted', 'No attempt recorded yet (attempts.ndjson is empty).')); return; }
  var bar = el('div', 'controls');
  var zoomIn = el('button', 'chip', 'zoom in'), zoomOut = el('button', 'chip', 'zoom out'), reset = el('button', 'chip', 'reset');
  zoomIn.id = 'timeline-zoom-in';
  zoomOut.id = 'timeline-zoom-out';
  bar.appendChild(zoomIn); bar.appendChild(zoomOut); bar.appendChild(reset);
  var legend = el('span', 'muted', 'wheel to zoom, drag to pan · ');
  bar.appendChild(legend);
  Object.keys(OUTCOME_COLORS).forEach(function (o) {
    var sw = el('span', 'swatch');
    sw.style.background = OUTCOME_COLORS[o];
    bar.appendChild(sw);
    bar.appendChild(el('span', null, o + ' '));
  });
  root.appendChild(bar);
  var wrap = el('div', 'graph timeline');
  root.appendChild(wrap);
  var lanes = 1, end = 1;
  D.attempts.forEach(function (a) { lanes = Math.max(lanes, a[7] + 1); end = Math.max(end, a[2] + a[3]); });
  var width = Math.max(600, root.clientWidth - 20), LANE_H = 16, TOP = 28;
  var s = svg('svg', { width: width, height: TOP + lanes * LANE_H + 10 });
  s.id = 'timeline';
  var marks = svg('g', {}), bars = svg('g', {});
  s.appendChild(marks);
  s.appendChild(bars);
  wrap.appendChild(s);
  var k0 = (width - 20) / end, k = k0, tx = 10;
  var nodes = D.attempts.map(function (a) {
    var t = D.tasks[a[0]];
    var r = svg('rect', { class: 'bar', y: TOP + a[7] * LANE_H + 1, height: LANE_H - 3, rx: 2, fill: OUTCOME_COLORS[a[4]] || '#777', 'data-task': t[T.id], 'data-outcome': a[4] });
    var title = svg('title', {});
    title.textContent = t[T.id] + ' #' + a[1] + ' ' + a[4] + (a[5] ? ' (' + a[5] + ')' : '') + ' · ' + fmtMs(a[3]) + ' · wave ' + t[T.wave];
    r.appendChild(title);
    r.addEventListener('click', function () { showDetail(t[T.id]); });
    bars.appendChild(r);
    return r;
  });
  // Wave starts: the first start of each wave in each run.
  var waveStarts = {};
  D.attempts.forEach(function (a) {
    var key = a[8] + ':' + D.tasks[a[0]][T.wave];
    if (!(key in waveStarts) || a[2] < waveStarts[key].at) waveStarts[key] = { at: a[2], wave: D.tasks[a[0]][T.wave] };
  });
  function draw() {
    // The zoom factor, for people reading the page's state (and tests).
    s.setAttribute('data-zoom', String(Math.round((k / k0) * 1000) / 1000));
    nodes.forEach(function (r, i) {
      var a = D.attempts[i];
      r.setAttribute('x', String(tx + a[2] * k));
      r.setAttribute('width', String(Math.max(2, a[3] * k)));
    });
    clear(marks);
    Object.keys(waveStarts).forEach(function (key) {
      var x = tx + waveStarts[key].at * k;
      marks.appendChild(svg('line', { x1: x, x2: x, y1: 14, y2: TOP + lanes * LANE_H, stroke: '#5f6b76', 'stroke-dasharray': '3 3', class: 'wave-mark' }));
      var label = svg('text', { x: x + 2, y: 12 });
      label.textContent = 'wave ' + waveStarts[key].wave;
      marks.appendChild(label);
    });
    var axis = svg('text', { x: 4, y: TOP - 2 });
    axis.textContent = 'view: ' + fmtMs(Math.max(0, -tx / k)) + ' → ' + fmtMs((width - tx) / k);
    marks.appendChild(axis);
  }
  var scheduled = false;
  function redraw() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(function () { scheduled = false; draw(); });
  }
  function zoom(factor, at) {
    tx = at - (at - tx) * factor;
    k *= factor;
    redraw();
  }
  zoomIn.addEventListener('click', function () { zoom(2, width / 2); });
  zoomOut.addEventListener('click', function () { zoom(0.5, width / 2); });
  reset.addEventListener('click', function () { k = k0; tx = 10; redraw(); });
  s.addEventListener('wheel', function (e) {
    e.preventDefault();
    zoom(Math.exp(-e.deltaY * 0.002), e.clientX - s.getBoundingClientRect().left);
  }, { passive: false });
  var dragFrom = null;
  s.addEventListener('mousedown', function (e) { dragFrom = { x: e.clientX, tx: tx }; });
  window.addEventListener('mousemove', function (e) { if (dragFrom) { tx = dragFrom.tx + e.clientX - dragFrom.x; redraw(); } });
  window.addEventListener('mouseup', function () { dragFrom = null; });
  draw();
};

// Start-up, and live updates from csv-wave serve.
reindex();
buildShell();
renderHeader();
// A view can be linked to: report.html#timeline opens on the timeline.
show(VIEWS.indexOf(location.hash.slice(1)) >= 0 ? location.hash.slice(1) : 'summary');
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
