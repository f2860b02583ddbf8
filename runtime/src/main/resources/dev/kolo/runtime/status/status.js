// Kolo live status page. One GET /status gives the full state plus up to 600 samples of
// history; then /status/stream sends one `status` event per second with the newest sample
// (`point`). Plain ES2017, no framework; plots are uPlot (global `uPlot`, from the WebJar).
'use strict';
(() => {
  const MAX_POINTS = 600;   // same window the server keeps
  const PLOT_HEIGHT = 220;
  const STALE_MS = 5000;    // no event for this long: treat the stream as dead even without an error
  const $ = id => document.getElementById(id);
  const DASH = '\u2013';

  // ---------- small helpers ----------
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }
  const isNum = v => typeof v === 'number' && isFinite(v);
  const fix = (v, d) => isNum(v) ? v.toFixed(d) : DASH;
  const orDash = v => v == null ? DASH : String(v);
  const pad = n => String(n).padStart(2, '0');
  const hms = ms => { const d = new Date(ms); return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds()); };
  // Only http(s) links: the URLs come from workers' reports, never let one become javascript:.
  const safeUrl = u => typeof u === 'string' && /^https?:\/\//i.test(u) ? u : null;
  function bytes(n) {
    if (!isNum(n)) return DASH;
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + ' ' + units[i];
  }
  // Distinct, readable colours for any number of series (golden-angle hue steps).
  const colour = i => 'hsl(' + Math.round((i * 137.5 + 210) % 360) + ',70%,42%)';
  const setText = (id, v) => { $(id).textContent = v; };

  // ---------- texts and tables (rebuilt from every event; they are small) ----------
  function renderJob(s) {
    setText('job-name', orDash(s.job));
    setText('job-generation', orDash(s.generation));
    setText('job-size', orDash(s.size));
    setText('job-coordinator', orDash(s.coordinatorRank));
    setText('job-step', isNum(s.step) && s.step >= 0 ? String(s.step) : DASH);   // -1: program reports no step
    setText('job-steps-rate', fix(s.stepsPerSecond, 2));
    setText('job-samples-rate', fix(s.samplesPerSecond, 1));
    setText('job-transport', orDash(s.transport));
    setText('job-kernels', orDash(s.kernels));

    // The link exists only on a non-coordinator's page, so its presence means "rank view".
    const box = $('rank-view');
    let a = $('coordinator-link');
    if (s.view === 'rank') {
      if (!a) {
        a = el('a', null, "this worker's view; the whole job is on the coordinator's page");
        a.id = 'coordinator-link';
        box.appendChild(a);
      }
      const u = safeUrl(s.coordinatorUrl);
      if (u) a.href = u; else a.removeAttribute('href');
    } else if (a) {
      a.remove();
    }
    const stalled = Array.isArray(s.stalls) && s.stalls.length > 0;
    document.title = (stalled ? 'STALLED - ' : '') + 'Kolo ' + orDash(s.job) +
      (isNum(s.step) && s.step >= 0 ? ' - step ' + s.step : '');
  }

  function renderRanks(ranks) {
    const tbody = $('ranks').tBodies[0];
    tbody.textContent = '';
    for (const r of ranks || []) {
      const bad = r.state === 'silent' || r.state === 'lost';
      const tr = el('tr', 'rank-row' + (bad ? ' bad' : ''));
      tr.dataset.rank = r.rank;
      const rankCell = el('td');
      const u = safeUrl(r.statusUrl);
      if (u) { const a = el('a', null, String(r.rank)); a.href = u; a.title = "this rank's own page"; rankCell.appendChild(a); }
      else rankCell.textContent = orDash(r.rank);
      tr.appendChild(rankCell);
      tr.appendChild(el('td', null, orDash(r.host)));
      tr.appendChild(el('td', 'num', orDash(r.pid)));
      tr.appendChild(el('td', 'num', orDash(r.localRank)));
      const st = el('td');
      st.appendChild(el('span', 'state state-' + String(r.state).replace(/[^\w-]/g, ''), orDash(r.state)));
      tr.appendChild(st);
      tr.appendChild(el('td', 'num', isNum(r.step) && r.step >= 0 ? String(r.step) : DASH));
      tr.appendChild(el('td', 'num', fix(r.stepMillis, 1)));
      tr.appendChild(el('td', 'num', fix(r.busyMillis, 1)));
      tr.appendChild(el('td', 'num', bytes(r.bytesSent)));
      tr.appendChild(el('td', 'num', fix(r.samplesPerSecond, 1)));
      tr.appendChild(el('td', 'pace' + (/straggler/.test(r.pace || '') ? ' slow' : ''), orDash(r.pace)));
      tr.appendChild(inFlightCell(r.inFlight, u));
      tr.appendChild(el('td', 'num', fix(r.lastSeenSeconds, 1)));
      tbody.appendChild(tr);
    }
  }

  // How many ops the rank has submitted and not finished, the oldest named with how far it got and since when,
  // and a link to the rank's flight recorder: its last ops, as `flight analyse` reads them.
  function inFlightCell(f, page) {
    const td = el('td', 'in-flight');
    if (!f || !isNum(f.count)) { td.textContent = DASH; return td; }
    td.appendChild(document.createTextNode(String(f.count)));
    if (f.count > 0 && f.oldest) {
      td.appendChild(document.createTextNode(' \u2014 oldest '));
      td.appendChild(el('code', null, String(f.oldest)));
      td.appendChild(document.createTextNode(' ' + orDash(f.state) + ' ' + fix(f.seconds, 1) + ' s'));
    }
    if (page) {
      const a = el('a', 'flight-link', 'dump');
      a.href = page + 'status/flight';
      a.title = "this rank's flight recorder: its last ops";
      td.appendChild(document.createTextNode(' '));
      td.appendChild(a);
    }
    return td;
  }

  function renderStalls(stalls) {
    const box = $('stalls');
    const list = Array.isArray(stalls) ? stalls : [];
    box.classList.toggle('alert', list.length > 0);
    box.textContent = '';
    if (!list.length) { box.appendChild(el('span', 'muted', 'no stalls')); return; }
    box.appendChild(el('h2', null, 'Stalled: ' + list.length + (list.length === 1 ? ' collective is' : ' collectives are') + ' waiting for ranks'));
    const ul = el('ul');
    for (const s of list) {
      const li = el('li', 'stall');
      li.dataset.tensor = s.tensor;
      const missing = Array.isArray(s.missingRanks) ? s.missingRanks : [];
      li.appendChild(el('code', null, orDash(s.tensor)));
      li.appendChild(document.createTextNode(
        ' \u2014 missing rank' + (missing.length === 1 ? ' ' : 's ') + (missing.join(', ') || '?') +
        ' \u2014 waited ' + fix(s.seconds, 1) + ' s'));
      ul.appendChild(li);
    }
    box.appendChild(ul);
  }

  let historyKey = '';
  function renderHistory(history) {
    const h = Array.isArray(history) ? history : [];
    const last = h[h.length - 1];
    // The list is capped at 200, so its length alone can't tell a change; the newest entry can.
    const key = h.length + (last ? ':' + last.time + ':' + last.generation + ':' + last.event : '');
    if (key === historyKey) return;
    historyKey = key;
    const ol = $('history');
    ol.textContent = '';
    if (!h.length) { ol.appendChild(el('li', 'muted', 'no generation events yet')); return; }
    for (let i = h.length - 1; i >= 0; i--) {   // server sends oldest first; show newest first
      const e = h[i];
      const li = el('li', 'event event-' + String(e.event).replace(/[^\w-]/g, ''));
      li.appendChild(el('time', null, isNum(e.time) ? hms(e.time) : DASH));
      li.appendChild(el('span', 'gen', 'gen ' + orDash(e.generation)));
      li.appendChild(el('span', 'ev', orDash(e.event)));
      li.appendChild(el('span', 'size', 'size ' + orDash(e.size)));
      li.appendChild(el('span', 'reason', e.reason ? String(e.reason) : ''));
      ol.appendChild(li);
    }
  }

  function renderCommit(s) {
    // "ago" against the server's clock, so a skewed browser clock can't make it negative or wrong.
    const now = isNum(s.time) ? s.time : Date.now();
    const ago = t => isNum(t) ? Math.max(0, Math.round((now - t) / 1000)) + ' s ago' : DASH;
    const c = s.lastCommit, k = s.lastCheckpoint;
    setText('commit-last', c ? 'rank ' + orDash(c.rank) + ', step ' + orDash(c.step) + ', ' + ago(c.time) : 'none yet');
    setText('checkpoint-last', k ? 'rank ' + orDash(k.rank) + ', step ' + orDash(k.step) + ', ' +
      orDash(k.path) + ', ' + ago(k.time) : 'none yet');
  }

  function renderTexts(s) {
    renderJob(s);
    renderRanks(s.ranks);
    renderStalls(s.stalls);
    renderHistory(s.history);
    renderCommit(s);
  }

  // ---------- plot data: column arrays, the shape uPlot takes (x = epoch seconds) ----------
  let S = { time: [], steps: [], samples: [], scalars: {}, busy: {} };
  const nulls = n => new Array(n).fill(null);
  const numOrNull = v => isNum(v) ? v : null;
  const rankKeysOf = () => Object.keys(S.busy).sort((a, b) => a - b);
  const scalarKeysOf = () => Object.keys(S.scalars).sort();

  function setSeries(series) {
    const sr = series || {};
    const time = Array.isArray(sr.time) ? sr.time.slice() : [];
    const n = time.length;
    const col = a => Array.isArray(a) && a.length === n ? a.map(numOrNull) : nulls(n);   // guard misaligned input
    const cols = obj => { const out = {}; for (const k of Object.keys(obj || {})) out[k] = col(obj[k]); return out; };
    S = { time, steps: col(sr.stepsPerSecond), samples: col(sr.samplesPerSecond), scalars: cols(sr.scalars), busy: cols(sr.rankBusyMillis) };
    trim();
  }

  const allColumns = () => [S.time, S.steps, S.samples].concat(Object.values(S.scalars), Object.values(S.busy));

  function appendPoint(p) {
    if (!p || !isNum(p.time)) return;
    const last = S.time[S.time.length - 1];
    if (last !== undefined && p.time < last) return;              // older than what we hold (fetch raced ahead)
    if (last !== undefined && p.time === last) allColumns().forEach(a => a.pop());   // same sample again: replace it
    const n = S.time.length;
    S.time.push(p.time);
    S.steps.push(numOrNull(p.stepsPerSecond));
    S.samples.push(numOrNull(p.samplesPerSecond));
    const add = (cols, vals) => {
      vals = vals || {};
      for (const k of Object.keys(vals)) if (!cols[k]) cols[k] = nulls(n);   // a name seen for the first time
      for (const k of Object.keys(cols)) cols[k].push(numOrNull(vals[k]));
    };
    add(S.scalars, p.scalars);
    add(S.busy, p.rankBusyMillis);
    trim();
  }

  function trim() {
    const drop = S.time.length - MAX_POINTS;
    if (drop > 0) allColumns().forEach(a => a.splice(0, drop));
    // A rank or scalar with nothing left in the window (e.g. a rank gone for 10 minutes) leaves the plot.
    for (const cols of [S.scalars, S.busy])
      for (const k of Object.keys(cols)) if (cols[k].every(v => v === null)) delete cols[k];
  }

  // ---------- plots ----------
  const plots = { rate: null, scalars: null, ranks: null };
  let scalarKeys = [], rankKeys = [];
  const plotWidth = div => Math.max(240, div.clientWidth);
  const sameKeys = (a, b) => a.length === b.length && a.every((k, i) => k === b[i]);

  // 24-hour clock on the x axis and legend, like the history list (uPlot's default is 12-hour).
  const hm = sec => { const d = new Date(sec * 1000); return pad(d.getHours()) + ':' + pad(d.getMinutes()); };
  const xSeries = { value: (u, v) => v == null ? DASH : hms(v * 1000) };
  // Samples are one per second: no sub-second ticks (they would repeat the same label).
  const xAxis = { incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 86400],
    values: (u, splits, ax, space, incr) => splits.map(v => incr < 60 ? hms(v * 1000) : hm(v)) };

  // series and axes without the x one, which is the same for every plot.
  function makePlot(div, series, axes, data) {
    div.textContent = '';
    return new uPlot({ width: plotWidth(div), height: PLOT_HEIGHT, series: [xSeries].concat(series),
      axes: [xAxis].concat(axes), scales: { x: { time: true } } }, data, div);
  }

  function buildRate() {
    if (plots.rate) plots.rate.destroy();
    // samples/s is ~batch size times steps/s, so it gets its own (right-hand) axis.
    plots.rate = makePlot($('plot-rate'), [
      { label: 'steps/s', scale: 'steps', stroke: colour(0), width: 2, value: (u, v) => fix(v, 2) },
      { label: 'samples/s', scale: 'samples', stroke: colour(1), width: 2, value: (u, v) => fix(v, 1) },
    ], [
      { scale: 'steps', label: 'steps/s', stroke: colour(0) },
      { scale: 'samples', label: 'samples/s', side: 1, stroke: colour(1), grid: { show: false } },
    ], [S.time, S.steps, S.samples]);
  }

  function buildScalars() {
    if (plots.scalars) { plots.scalars.destroy(); plots.scalars = null; }
    scalarKeys = scalarKeysOf();
    const div = $('plot-scalars');
    const none = scalarKeys.length === 0;
    div.hidden = none;
    $('no-scalars').hidden = !none;
    if (none) { div.textContent = ''; return; }
    plots.scalars = makePlot(div,
      scalarKeys.map((k, i) => ({ label: k, stroke: colour(i + 2), width: 2, spanGaps: true,
        value: (u, v) => isNum(v) ? String(Number(v.toPrecision(4))) : DASH })),
      [{}], scalarData());
  }
  const scalarData = () => [S.time].concat(scalarKeys.map(k => S.scalars[k]));

  function buildRanks() {
    if (plots.ranks) plots.ranks.destroy();
    rankKeys = rankKeysOf();
    plots.ranks = makePlot($('plot-ranks'),
      rankKeys.map((k, i) => ({ label: 'rank ' + k, stroke: colour(i), width: 1.5, value: (u, v) => fix(v, 1) })),
      [{ label: 'busy ms' }], rankData());
  }
  const rankData = () => [S.time].concat(rankKeys.map(k => S.busy[k]));

  function markPoints() {
    // For tests: how many samples each plot currently holds.
    $('plot-rate').dataset.points = S.time.length;
    $('plot-scalars').dataset.points = plots.scalars ? S.time.length : 0;
    $('plot-ranks').dataset.points = S.time.length;
  }

  function rebuildPlots() {
    buildRate(); buildScalars(); buildRanks();
    markPoints();
  }

  function updatePlots() {
    if (!plots.rate) { rebuildPlots(); return; }
    plots.rate.setData([S.time, S.steps, S.samples]);
    // A new scalar name or a changed set of ranks changes the series: rebuilding is simplest.
    if (!sameKeys(scalarKeysOf(), scalarKeys)) buildScalars();
    else if (plots.scalars) plots.scalars.setData(scalarData());
    if (!sameKeys(rankKeysOf(), rankKeys)) buildRanks();
    else plots.ranks.setData(rankData());
    markPoints();
  }

  // Follow the container's width (window resize, scrollbar appearing, grid reflow).
  function fitAll() {
    for (const p of Object.values(plots)) {
      if (!p) continue;
      const w = plotWidth(p.root.parentNode);
      if (w !== p.width) p.setSize({ width: w, height: PLOT_HEIGHT });
    }
  }
  if (typeof ResizeObserver === 'function') {
    const ro = new ResizeObserver(fitAll);
    ['plot-rate', 'plot-scalars', 'plot-ranks'].forEach(id => ro.observe($(id)));
  } else {
    window.addEventListener('resize', fitAll);
  }

  // ---------- data flow ----------
  let dropped = false;      // set when the stream failed: refetch /status to fill the gap once it is back
  let lastEvent = Date.now();
  const badge = show => { $('conn').hidden = !show; };

  function loadFull() {
    return fetch('/status', { cache: 'no-store' })
      .then(r => { if (!r.ok) throw new Error('GET /status: HTTP ' + r.status); return r.json(); })
      .then(s => { setSeries(s.series); renderTexts(s); rebuildPlots(); });
  }

  function connect() {
    const es = new EventSource('/status/stream');
    es.addEventListener('status', ev => {
      let s;
      try { s = JSON.parse(ev.data); } catch (e) { return; }   // a torn event: the next one comes in a second
      lastEvent = Date.now();
      badge(false);
      renderTexts(s);
      appendPoint(s.point);
      updatePlots();
      if (dropped) { dropped = false; loadFull().catch(() => { dropped = true; }); }   // try again on the next event
    });
    es.onerror = () => {
      badge(true);
      dropped = true;
      // EventSource retries by itself, except after a non-200 or non-event-stream reply: then it is closed for good.
      if (es.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
    };
  }

  // A half-open connection (e.g. through a proxy) sends no error; silence says the same.
  setInterval(() => { if (Date.now() - lastEvent > STALE_MS) badge(true); }, 1000);

  loadFull()
    .catch(() => { badge(true); dropped = true; rebuildPlots(); })
    .then(connect);
})();
