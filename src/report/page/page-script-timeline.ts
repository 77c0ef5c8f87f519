/**
 * The report page's script, part 4: the timeline of one run (the latest, or the one picked):
 * one row per task with its name on the left, each attempt a segment of its row (retried
 * ones marked), a time axis from the run's first start, wave starts labelled without
 * overlap. Only the rows in view are drawn, so a run of a million tasks scrolls. Zoom with
 * the buttons or Ctrl+wheel, pan by dragging or a sideways wheel.
 */
export const kPageScriptTimeline = String.raw`
// TL_RIGHT: room right of the run's end, for the label of a wave that starts there.
var TL_NAME_W = 200, TL_ROW_H = 22, TL_TOP = 48, TL_RIGHT = 56;
// Ticks fall on these steps (ms): the first at least 90 px apart at the zoom.
var TICK_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5];
/** The run picked in the selector (its id), or null for the latest: a new run shows when it starts. */
var timelineRun = null;
/** Zoom, pan and scroll of the run drawn, kept across live updates. */
var timelineView = null;
/** The drawn timeline's handlers for the window's events (one set of listeners, whatever is redrawn). */
var timelineActive = null;
/** Watches the drawn timeline's width: the window, or the task details opened beside it. */
var timelineResize = null;

function tickStep(minMs) {
  for (var i = 0; i < TICK_STEPS.length; i++) if (TICK_STEPS[i] >= minMs) return TICK_STEPS[i];
  var day = TICK_STEPS[TICK_STEPS.length - 1];
  return Math.ceil(minMs / day) * day;
}
function fmtTick(ms) {
  if (ms === 0) return '0';
  if (ms < 1000) return ms + ' ms';
  if (ms < 60000) return ms / 1000 + ' s';
  var h = Math.floor(ms / 36e5), m = Math.floor((ms % 36e5) / 6e4), s = Math.round((ms % 6e4) / 1000);
  return [h ? h + ' h' : '', m ? m + ' min' : '', s ? s + ' s' : ''].filter(Boolean).join(' ');
}
/** A time of the session (ms after D.t0) as a clock in UTC. */
function fmtClock(offset) {
  var ms = Date.parse(D.t0) + offset;
  return isFinite(ms) ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '';
}

RENDER.timeline = function (root) {
  clear(root);
  timelineActive = null;
  if (timelineResize) { timelineResize.disconnect(); timelineResize = null; }
  root.appendChild(el('h2', null, 'Timeline'));
  if (D.attempts.length === 0) { root.appendChild(el('p', 'muted', 'No attempt recorded yet (attempts.ndjson is empty).')); return; }
  var latest = D.runs.length - 1;
  var run = timelineRun !== null && D.runs.indexOf(timelineRun) >= 0 ? D.runs.indexOf(timelineRun) : latest;
  var bar = el('div', 'controls');
  var picker = el('select');
  picker.id = 'timeline-run';
  picker.setAttribute('aria-label', 'run');
  var runs = D.runs.map(function () { return { attempts: 0, first: Infinity }; });
  D.attempts.forEach(function (a) {
    var r = runs[a[A.run]];
    r.attempts++;
    if (a[A.start] < r.first) r.first = a[A.start];
  });
  runs.forEach(function (r, index) {
    var text = 'run ' + (index + 1) + ' of ' + runs.length + (index === latest ? ' (latest)' : '') + ' · ' + fmtClock(r.first) + ' · ' + fmtInt(r.attempts) + ' attempt' + (r.attempts === 1 ? '' : 's');
    var option = el('option', null, text);
    option.value = String(index);
    option.title = D.runs[index];
    picker.appendChild(option);
  });
  picker.value = String(run);
  picker.addEventListener('change', function () {
    var picked = Number(picker.value);
    timelineRun = picked === D.runs.length - 1 ? null : D.runs[picked];
    RENDER.timeline(root);
  });
  bar.appendChild(picker);
  var zoomIn = el('button', 'chip', 'zoom in'), zoomOut = el('button', 'chip', 'zoom out'), reset = el('button', 'chip', 'reset');
  zoomIn.id = 'timeline-zoom-in';
  zoomOut.id = 'timeline-zoom-out';
  reset.id = 'timeline-zoom-reset';
  [zoomIn, zoomOut, reset].forEach(function (b) { bar.appendChild(b); });
  ['completed', 'failed', 'retried'].forEach(function (o) {
    var sw = el('span', 'swatch' + (o === 'retried' ? ' swatch-retried' : ''));
    sw.style.background = OUTCOME_COLORS[o];
    bar.appendChild(sw);
    bar.appendChild(el('span', null, o === 'retried' ? 'retried (↻n beside a task: its retries) ' : o + ' '));
  });
  bar.appendChild(el('span', 'muted', 'Ctrl+wheel zooms, drag pans'));
  root.appendChild(bar);
  drawTimeline(root, run, { zoomIn: zoomIn, zoomOut: zoomOut, reset: reset });
};

function drawTimeline(root, run, buttons) {
  var n = D.tasks.length;
  // The run's tasks in the order they first started; then each one's attempts, in file order.
  var first = new Float64Array(n).fill(Infinity);
  var origin = Infinity, count = 0;
  for (var j = 0; j < D.attempts.length; j++) {
    var a = D.attempts[j];
    if (a[A.run] !== run) continue;
    count++;
    if (a[A.start] < first[a[A.task]]) first[a[A.task]] = a[A.start];
    if (a[A.start] < origin) origin = a[A.start];
  }
  var tasks = [];
  for (var i = 0; i < n; i++) if (first[i] !== Infinity) tasks.push(i);
  tasks.sort(function (x, y) { return first[x] - first[y] || x - y; });
  var rowOf = new Int32Array(n).fill(-1);
  tasks.forEach(function (task, r) { rowOf[task] = r; });
  var offsets = new Int32Array(tasks.length + 1), retries = new Int32Array(tasks.length);
  var end = 1, waveAt = new Map();
  for (j = 0; j < D.attempts.length; j++) {
    a = D.attempts[j];
    if (a[A.run] !== run) continue;
    var r = rowOf[a[A.task]];
    offsets[r + 1]++;
    if (a[A.outcome] === 'retried') retries[r]++;
    end = Math.max(end, a[A.start] + a[A.ms] - origin);
    var w = D.tasks[a[A.task]][T.wave];
    if (!waveAt.has(w) || a[A.start] - origin < waveAt.get(w)) waveAt.set(w, a[A.start] - origin);
  }
  for (r = 0; r < tasks.length; r++) offsets[r + 1] += offsets[r];
  var order = new Int32Array(count), fill = offsets.slice(0, tasks.length);
  for (j = 0; j < D.attempts.length; j++) if (D.attempts[j][A.run] === run) order[fill[rowOf[D.attempts[j][A.task]]]++] = j;
  var waves = [];
  waveAt.forEach(function (at, wave) { waves.push({ wave: wave, at: at }); });
  waves.sort(function (x, y) { return x.at - y.at || x.wave - y.wave; });

  var wrap = el('div', 'timeline');
  wrap.id = 'timeline-viewport';
  var spacer = el('div', 'tl-spacer');
  spacer.style.height = TL_TOP + tasks.length * TL_ROW_H + 'px';
  var s = svg('svg', { 'data-run': run, 'data-rows': tasks.length });
  s.id = 'timeline-chart';
  spacer.appendChild(s);
  wrap.appendChild(spacer);
  root.appendChild(wrap);

  var width = 0, height = 0, k0 = 1, k = 1, tx = 0;
  function size() {
    width = Math.max(600, wrap.clientWidth);
    height = Math.max(TL_TOP + TL_ROW_H, Math.min(wrap.clientHeight, TL_TOP + tasks.length * TL_ROW_H));
    s.setAttribute('width', String(width));
    s.setAttribute('height', String(height));
    k0 = (width - TL_NAME_W - TL_RIGHT) / end;
  }
  size();
  k = k0;
  // The same run drawn again (a live update): its zoom, pan and scroll stay.
  if (timelineView && timelineView.run === D.runs[run]) {
    k = k0 * timelineView.zoom;
    tx = timelineView.tx;
    wrap.scrollTop = timelineView.scrollTop;
  }
  var x = function (t) { return TL_NAME_W + tx + t * k; };

  function draw() {
    timelineView = { run: D.runs[run], zoom: k / k0, tx: tx, scrollTop: wrap.scrollTop };
    s.setAttribute('data-zoom', String(Math.round((k / k0) * 1000) / 1000));
    clear(s);
    var stripes = svg('g', {}), grid = svg('g', {}), bars = svg('g', {}), names = svg('g', {}), head = svg('g', {});
    [stripes, grid, bars, names, head].forEach(function (g) { s.appendChild(g); });
    names.appendChild(svg('rect', { x: 0, y: 0, width: TL_NAME_W, height: height, fill: '#fff' }));
    names.appendChild(svg('line', { x1: TL_NAME_W - 0.5, x2: TL_NAME_W - 0.5, y1: 0, y2: height, stroke: '#d8dee4' }));
    head.appendChild(svg('rect', { x: 0, y: 0, width: width, height: TL_TOP, fill: '#fff' }));
    head.appendChild(svg('line', { x1: 0, x2: width, y1: TL_TOP - 0.5, y2: TL_TOP - 0.5, stroke: '#d8dee4' }));
    var heading = svg('text', { x: 6, y: TL_TOP - 8, class: 'tl-head' });
    heading.textContent = 'task';
    head.appendChild(heading);

    // The axis.
    var step = tickStep(90 / k);
    for (var t = Math.max(0, Math.ceil(-tx / k / step) * step); x(t) <= width; t += step) {
      var xt = x(t);
      if (xt < TL_NAME_W) continue;
      grid.appendChild(svg('line', { x1: xt, x2: xt, y1: TL_TOP, y2: height, stroke: '#eef1f4' }));
      head.appendChild(svg('line', { x1: xt, x2: xt, y1: TL_TOP - 5, y2: TL_TOP, stroke: '#5f6b76', class: 'tick' }));
      var label = svg('text', { x: xt + 3, y: TL_TOP - 8, class: 'tick-label', 'data-ms': t });
      label.textContent = fmtTick(t);
      head.appendChild(label);
    }

    // The rows in view.
    var top = wrap.scrollTop;
    var firstRow = Math.max(0, Math.floor(top / TL_ROW_H));
    var lastRow = Math.min(tasks.length, Math.ceil((top + height - TL_TOP) / TL_ROW_H) + 1);
    for (var r = firstRow; r < lastRow; r++) {
      var task = D.tasks[tasks[r]], y = TL_TOP + r * TL_ROW_H - top;
      if (r % 2) stripes.appendChild(svg('rect', { x: 0, y: y, width: width, height: TL_ROW_H, fill: '#f8fafb' }));
      var row = svg('g', { class: 'tl-row', 'data-task': task[T.id] });
      for (var p = offsets[r]; p < offsets[r + 1]; p++) {
        var a = D.attempts[order[p]];
        var bx = x(a[A.start] - origin), bw = Math.max(2, a[A.ms] * k);
        var rect = svg('rect', { class: 'bar', x: bx, y: y + 3, width: bw, height: TL_ROW_H - 6, rx: 2, fill: OUTCOME_COLORS[a[A.outcome]] || '#777', 'data-task': task[T.id], 'data-outcome': a[A.outcome], 'data-attempt': a[A.attempt] });
        if (a[A.outcome] === 'retried') { rect.setAttribute('stroke', '#7a3a00'); rect.setAttribute('stroke-dasharray', '3 2'); }
        var title = svg('title', {});
        title.textContent = task[T.id] + ' #' + a[A.attempt] + ' ' + a[A.outcome] + (a[A.errorClass] ? ' (' + a[A.errorClass] + ')' : '') + ' · ' + fmtMs(a[A.ms]) + ' from ' + fmtMs(a[A.start] - origin) + ' · wave ' + task[T.wave];
        rect.appendChild(title);
        row.appendChild(rect);
      }
      bars.appendChild(row);
      var room = Math.floor((TL_NAME_W - 12 - (retries[r] > 0 ? 34 : 0)) / 7);
      var name = svg('text', { x: 6, y: y + 15, class: 'tl-name', 'data-task': task[T.id] });
      name.textContent = task[T.id].length > room ? cut(task[T.id], room - 1) + '…' : task[T.id];
      // The whole id (and title) as the name's tooltip, beside the text so that the text is the name alone.
      var named = svg('g', { 'data-task': task[T.id] });
      var full = svg('title', {});
      full.textContent = task[T.id] + (task[T.title] ? ': ' + task[T.title] : '');
      named.appendChild(full);
      named.appendChild(name);
      names.appendChild(named);
      if (retries[r] > 0) {
        var badge = svg('text', { x: TL_NAME_W - 6, y: y + 15, 'text-anchor': 'end', class: 'tl-retries', 'data-task': task[T.id] });
        badge.textContent = '↻' + retries[r];
        names.appendChild(badge);
      }
    }

    // Wave starts: a line each across the rows, and a label above it where one fits in one
    // of two lines without touching another (zoom in to see the others). No line crosses the
    // head, so that none runs through a label.
    var ends = [-Infinity, -Infinity];
    waves.forEach(function (wave) {
      var xw = x(wave.at);
      if (xw < TL_NAME_W || xw > width) return;
      grid.appendChild(svg('line', { x1: xw, x2: xw, y1: TL_TOP, y2: height, stroke: '#5f6b76', 'stroke-dasharray': '3 3', class: 'wave-mark' }));
      var label = svg('text', { x: xw + 3, y: 12, class: 'wave-label', 'data-wave': wave.wave });
      label.textContent = wave.wave === 0 ? 'no wave' : 'wave ' + wave.wave;
      head.appendChild(label);
      var length = Math.max(label.getComputedTextLength(), label.textContent.length * 7);
      var line = ends[0] + 6 <= xw ? 0 : ends[1] + 6 <= xw ? 1 : -1;
      if (line < 0) { head.removeChild(label); return; }
      label.setAttribute('y', String(12 + line * 13));
      ends[line] = xw + 3 + length;
    });
  }
  var scheduled = false;
  function redraw() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(function () { scheduled = false; draw(); });
  }
  function zoom(factor, at) {
    tx = at - TL_NAME_W - (at - TL_NAME_W - tx) * factor;
    k *= factor;
    redraw();
  }
  buttons.zoomIn.addEventListener('click', function () { zoom(2, TL_NAME_W + (width - TL_NAME_W) / 2); });
  buttons.zoomOut.addEventListener('click', function () { zoom(0.5, TL_NAME_W + (width - TL_NAME_W) / 2); });
  buttons.reset.addEventListener('click', function () { k = k0; tx = 0; redraw(); });
  wrap.addEventListener('scroll', redraw);
  s.addEventListener('wheel', function (e) {
    if (e.ctrlKey || e.metaKey) {
      e.preventDefault();
      zoom(Math.exp(-e.deltaY * 0.002), e.clientX - s.getBoundingClientRect().left);
    } else if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      e.preventDefault();
      tx -= e.deltaX;
      redraw();
    }
  }, { passive: false });
  // A drag pans; a click without one opens the task.
  var drag = null, dragged = false;
  s.addEventListener('mousedown', function (e) {
    if (e.button !== 0) return;
    drag = { x: e.clientX, tx: tx };
    dragged = false;
  });
  s.addEventListener('click', function (e) {
    if (dragged) return;
    var node = e.target && e.target.closest ? e.target.closest('[data-task]') : null;
    if (node) showDetail(node.getAttribute('data-task'));
  });
  timelineActive = {
    move: function (e) {
      if (!drag) return;
      if (Math.abs(e.clientX - drag.x) > 3) dragged = true;
      if (dragged) { tx = drag.tx + e.clientX - drag.x; redraw(); }
    },
    up: function () { drag = null; },
  };
  if (typeof ResizeObserver === 'function') {
    var seen = wrap.clientWidth;
    timelineResize = new ResizeObserver(function () {
      // Hidden (another view) is no new width; a new one keeps the zoom and pan.
      if (wrap.clientWidth === 0 || wrap.clientWidth === seen) return;
      seen = wrap.clientWidth;
      var zoomed = k / k0;
      size();
      k = k0 * zoomed;
      redraw();
    });
    timelineResize.observe(wrap);
  }
  draw();
}

window.addEventListener('mousemove', function (e) { if (timelineActive) timelineActive.move(e); });
window.addEventListener('mouseup', function () { if (timelineActive) timelineActive.up(); });
`;
