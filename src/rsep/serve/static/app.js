// The rsep serve dashboard: reads the service's JSON API (docs/serve.md) and draws the
// queries, live throughput and latency from /metrics, and per query an event timeline in
// the manner of RSEP-QL's Fig. 1. Plain JavaScript, no dependency, works offline.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const POLL_MS = 2000;        // /metrics, the query and stream lists
const HISTORY = 90;          // samples kept for the charts
const ANSWERS_DRAWN = 40;    // the latest answers the timeline draws
const REFRESH_MS = 1000;     // new answers redraw the timeline at most once a second
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"];

const state = {
  queries: [],
  selected: null,          // the selected query's name
  detail: null,            // GET /api/queries/{name}
  timeline: null,          // GET /api/queries/{name}/timeline
  answer: null,            // the selected answer's number
  socket: null,
  pending: null,           // a timeline refresh waiting to run
  samples: [],             // metrics samples: {at, counters}
};

// helpers -------------------------------------------------------------------------------

async function api(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  if (!response.ok) {
    let message = response.statusText;
    try { message = (await response.json()).error || message; } catch (_) { /* not JSON */ }
    throw new Error(`${path}: ${response.status} ${message}`);
  }
  return response.json();
}

function el(tag, attrs = {}, text = null) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

function svg(tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

// A label with each <IRI> in it shortened: <http://example.org/w1> -> w1.
function shortLabel(text) {
  return String(text).replace(/<[^<>\s]*>/g, (iri) => short(iri));
}

// A term or IRI shortened: <http://example.org/a1> -> a1, "95"^^<…#integer> -> 95,
// "chat"@fr -> "chat"@fr.
function short(text) {
  if (text === null || text === undefined) return "";
  const typed = /^"((?:[^"\\]|\\.)*)"\^\^<[^>]*>$/.exec(text);
  if (typed) return typed[1];
  if (text.startsWith('"')) return text;
  const iri = /^<(.*)>$/.exec(text);
  const value = iri ? iri[1] : text;
  if (!iri && !/^[a-z][a-z0-9+.-]*:/i.test(value)) return value;
  const cut = Math.max(value.lastIndexOf("#"), value.lastIndexOf("/"), value.lastIndexOf(":"));
  return cut >= 0 && cut < value.length - 1 ? value.slice(cut + 1) : value;
}

function setStatus(text, bad = false) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.classList.toggle("bad", bad);
}

// queries and streams -------------------------------------------------------------------

async function refreshLists() {
  try {
    const [queries, streams] = await Promise.all([api("/api/queries"), api("/api/streams")]);
    state.queries = Array.isArray(queries) ? queries : queries.queries || [];
    renderQueries();
    renderStreams(Array.isArray(streams) ? streams : streams.streams || []);
    setStatus(`${state.queries.length} queries · ${new Date().toLocaleTimeString()}`);
    if (state.selected === null && state.queries.length) {
      const wanted = new URLSearchParams(location.hash.slice(1)).get("query");
      const found = state.queries.find((q) => q.name === wanted) || state.queries[0];
      select(found.name);
    } else if (state.selected !== null) {
      const current = state.queries.find((q) => q.name === state.selected);
      if (!current) {
        state.selected = null;
        document.getElementById("query").hidden = true;
      } else if (seqOf(current) !== state.lastSeq) {
        scheduleTimeline();
      }
    }
  } catch (error) {
    setStatus(String(error.message || error), true);
  }
}

function seqOf(query) {
  return (query.counters && query.counters.seq) || 0;
}

function renderQueries() {
  const list = document.getElementById("query-list");
  clear(list);
  document.getElementById("no-queries").hidden = state.queries.length > 0;
  for (const query of state.queries) {
    const item = el("li", { "data-query": query.name });
    item.classList.toggle("selected", query.name === state.selected);
    const button = el("button", { type: "button" }, query.name);
    button.addEventListener("click", () => select(query.name));
    item.append(button);
    const counters = query.counters || {};
    item.append(el("span", { class: `state ${query.state}` }, query.state));
    item.append(el("div", { class: "meta" },
      `${query.dialect} · ${counters.answers ?? 0} answers · ${counters.events ?? 0} events`));
    if (query.error) item.append(el("div", { class: "error" }, query.error));
    list.append(item);
  }
}

function renderStreams(streams) {
  const list = document.getElementById("stream-list");
  clear(list);
  for (const stream of streams) {
    const item = el("li", { title: stream.iri }, stream.name);
    item.append(el("div", { class: "meta" },
      `${stream.events} events · ${stream.late} late · ${stream.bad} bad`));
    list.append(item);
  }
}

async function select(name) {
  if (state.socket) { state.socket.onclose = null; state.socket.close(); state.socket = null; }
  state.selected = name;
  state.answer = null;
  state.timeline = null;
  state.lastSeq = -1;
  history.replaceState(null, "", `#query=${encodeURIComponent(name)}`);
  renderQueries();
  drawCharts();  // the charts follow the selected query
  try {
    state.detail = await api(`/api/queries/${encodeURIComponent(name)}`);
  } catch (error) {
    setStatus(String(error.message || error), true);
    return;
  }
  renderDetail();
  await refreshTimeline();
  listen(name);
}

function renderDetail() {
  const detail = state.detail;
  document.getElementById("query").hidden = false;
  document.getElementById("query-name").textContent = detail.name;
  const streams = (detail.streams || []).map(short).join(", ");
  document.getElementById("query-meta").textContent =
    `${detail.dialect} · ${detail.state} · streams ${streams}` +
    (detail.sink ? ` · sink ${detail.sink}` : "");
  document.getElementById("explain").textContent = detail.explain || "";
  document.getElementById("query-text").textContent = detail.query || "";
  const body = document.querySelector("#parameters tbody");
  clear(body);
  for (const [name, parameter] of Object.entries(detail.parameters || {})) {
    const row = el("tr", { "data-parameter": name });
    row.append(el("td", {}, name), el("td", {}, String(parameter.value)),
      el("td", { class: `source ${String(parameter.source).replace(/\s+/g, "-")}` },
        String(parameter.source)),
      el("td", { class: "note" }, parameter.note || ""));
    body.append(row);
  }
}

// Answers arrive over the query's WebSocket; each message schedules a timeline refresh.
function listen(name) {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const since = state.lastSeq > 0 ? state.lastSeq : 0;
  const url = `${scheme}://${location.host}/api/queries/${encodeURIComponent(name)}/ws?since=${since}`;
  let socket;
  try { socket = new WebSocket(url); } catch (_) { return; }
  state.socket = socket;
  socket.onmessage = () => scheduleTimeline();
  socket.onclose = () => {
    if (state.socket === socket) state.socket = null;
  };
}

function scheduleTimeline() {
  if (state.pending !== null) return;
  state.pending = setTimeout(() => {
    state.pending = null;
    refreshTimeline();
  }, REFRESH_MS);
}

async function refreshTimeline() {
  const name = state.selected;
  if (name === null) return;
  const query = state.queries.find((q) => q.name === name);
  const seq = query ? seqOf(query) : 0;
  const since = Math.max(0, seq - ANSWERS_DRAWN);
  try {
    const data = await api(`/api/queries/${encodeURIComponent(name)}/timeline?since=${since}`);
    if (state.selected !== name) return;
    state.timeline = data;
    const numbers = data.answers.map((a) => a.number);
    state.lastSeq = numbers.length ? Math.max(...numbers) : seq;
    drawTimeline();
  } catch (error) {
    setStatus(String(error.message || error), true);
  }
}

// the timeline ---------------------------------------------------------------------------

function drawTimeline() {
  const data = state.timeline;
  const chart = document.getElementById("timeline");
  clear(chart);
  const answers = data.answers.map(justified).slice(-ANSWERS_DRAWN);
  const lanes = data.streams.map((s) => s.iri);
  for (const event of data.events) if (!lanes.includes(event.stream)) lanes.push(event.stream);
  const names = new Map(data.streams.map((s) => [s.iri, s.name]));

  const times = [];
  for (const event of data.events) times.push(event.time, event.end);
  for (const entry of answers) {
    times.push(entry.answer.time);
    for (const [a, b] of entry.justification.intervals) times.push(a, b);
    for (const scope of entry.justification.scopes) {
      if (scope.start !== null) times.push(scope.start);
      if (scope.end !== null) times.push(scope.end);
    }
  }
  let lo = times.length ? Math.min(...times) : 0;
  let hi = times.length ? Math.max(...times) : 1;
  if (hi === lo) { lo -= 1; hi += 1; }
  const pad = (hi - lo) * 0.03;
  lo -= pad; hi += pad;

  const width = Math.max(600, document.getElementById("timeline-box").clientWidth || 900);
  const left = 190, right = 20, laneH = 30, rowH = 24;
  const axisY = 24 + lanes.length * laneH + 10;
  const rowsTop = axisY + 34;
  const height = rowsTop + Math.max(1, answers.length) * rowH + 10;
  chart.setAttribute("viewBox", `0 0 ${width} ${height}`);
  chart.setAttribute("width", width);
  chart.setAttribute("height", height);
  const x = (t) => left + ((t - lo) / (hi - lo)) * (width - left - right);

  // lanes and their events
  lanes.forEach((iri, i) => {
    const y = 24 + i * laneH;
    chart.append(svg("line", { x1: left, x2: width - right, y1: y, y2: y, class: "lane" }));
    const label = svg("text", { x: left - 8, y: y + 4, class: "lane-label", "text-anchor": "end" },
      names.get(iri) || short(iri));
    label.append(svg("title", {}, iri));
    chart.append(label);
  });
  for (const event of data.events) {
    const y = 24 + lanes.indexOf(event.stream) * laneH;
    const group = svg("g", { class: "event", "data-seq": event.seq, "data-stream": event.stream });
    if (event.end > event.time) {
      group.append(svg("line", { x1: x(event.time), x2: x(event.end), y1: y, y2: y, class: "span" }));
    }
    group.append(svg("circle", { cx: x(event.time), cy: y, r: 5 }));
    group.append(svg("title", {}, `#${event.seq} at ${when(event.time)}\n${event.triples.join("\n")}`));
    chart.append(group);
  }

  // the time axis
  chart.append(svg("line", { x1: left, x2: width - right, y1: axisY, y2: axisY, class: "axis" }));
  for (const tick of ticks(lo, hi, 8)) {
    chart.append(svg("line", { x1: x(tick), x2: x(tick), y1: axisY, y2: axisY + 5, class: "axis" }));
    chart.append(svg("text", { x: x(tick), y: axisY + 17, class: "tick", "text-anchor": "middle" },
      tickLabel(tick, hi - lo)));
  }
  chart.append(svg("text", { x: 8, y: axisY + 17, class: "tick" }, "time"));

  // each answer: scopes shaded, intervals bold, justifying events as dots, its time marked
  answers.forEach((entry, i) => {
    const y = rowsTop + i * rowH + rowH / 2;
    const group = svg("g", { class: "answer", "data-answer": entry.number, tabindex: 0 });
    group.classList.toggle("selected", entry.number === state.answer);
    group.append(svg("rect", { x: 0, y: y - rowH / 2, width, height: rowH, class: "row-hit" }));
    const bindings = summary(entry.answer);
    const label = svg("text", { x: 8, y: y + 4, class: "answer-label" },
      clip(`#${entry.number} ${bindings}`, 25));
    label.append(svg("title", {}, `answer #${entry.number} at ${when(entry.answer.time)}: ${bindings}`));
    group.append(label);
    for (const scope of entry.justification.scopes) {
      const a = x(scope.start === null ? lo : scope.start);
      const b = x(scope.end === null ? hi : scope.end);
      const rect = svg("rect", { x: Math.min(a, b), y: y - 8, width: Math.max(2, Math.abs(b - a)),
        height: 16, class: scope.label === "match" ? "scope match" : "scope" });
      rect.append(svg("title", {}, `${shortLabel(scope.label)} ${bracket(scope)}`));
      group.append(rect);
      // each bounded side: a solid edge when the bound belongs to the span, dashed if not
      [[scope.start, scope.bounds[0] === "["], [scope.end, scope.bounds[1] === "]"]]
        .filter(([t]) => t !== null)
        .forEach(([t, closed]) => group.append(svg("line", { x1: x(t), x2: x(t), y1: y - 9,
          y2: y + 9, class: closed ? "bound closed" : "bound open" })));
    }
    for (const [a, b] of entry.justification.intervals) {
      group.append(svg("line", { x1: x(a), x2: x(b), y1: y, y2: y, class: "interval" }));
      group.append(svg("line", { x1: x(a), x2: x(a), y1: y - 5, y2: y + 5, class: "interval-end" }));
      group.append(svg("line", { x1: x(b), x2: x(b), y1: y - 5, y2: y + 5, class: "interval-end" }));
    }
    const t = x(entry.answer.time);  // the answer's time, under the dots that may share it
    group.append(svg("path", { d: `M${t} ${y - 7} L${t + 5} ${y} L${t} ${y + 7} L${t - 5} ${y} Z`,
      class: "answer-time" }));
    for (const event of entry.justification.events) {
      group.append(svg("circle", { cx: x(event.time), cy: y, r: 4, class: "just" }));
    }
    group.addEventListener("click", () => showAnswer(entry.number));
    group.addEventListener("keydown", (e) => { if (e.key === "Enter") showAnswer(entry.number); });
    chart.append(group);
  });
  if (!answers.length) {
    chart.append(svg("text", { x: left, y: rowsTop + 14, class: "hint" }, "no answer yet"));
  }
  if (state.answer !== null) showAnswer(state.answer);
}

// An answer of the timeline with a justification to draw: a CONSTRUCT or ASK answer has
// no bindings to justify (rsep.serve.timeline.timeline), so an empty one that says so.
function justified(entry) {
  if (entry.justification) return entry;
  const note = "a CONSTRUCT or ASK answer has no bindings: no events are drawn for it";
  return { ...entry, justification: { scopes: [], events: [], intervals: [], notes: [note] } };
}

// An answer in a few words: its bindings, its triples' count, or its boolean.
function summary(answer) {
  if (answer.bindings) {
    return Object.entries(answer.bindings).map(([k, v]) => `${k}=${short(v)}`).join(" ");
  }
  if (answer.triples) return `${answer.triples.length} triples`;
  return `ASK ${answer.boolean}`;
}

// Times are ms (docs/results.md); from 1e11 (1973) on they read as UTC dates and times.
const EPOCH = 1e11;

function when(t) {
  return Math.abs(t) >= EPOCH ? new Date(t).toISOString().replace(".000Z", "Z") : String(t);
}

function tickLabel(t, span) {
  if (Math.abs(t) < EPOCH) return String(t);
  const iso = new Date(t).toISOString();
  if (span >= 2 * 86400000) return iso.slice(0, 10);
  return span >= 10000 ? iso.slice(11, 19) : iso.slice(11, 23);
}

function bracket(scope) {
  const open = scope.bounds[0];
  const close = scope.bounds[1];
  const start = scope.start === null ? "-∞" : when(scope.start);
  const end = scope.end === null ? "+∞" : when(scope.end);
  return `${open}${start}, ${end}${close}`;
}

function clip(text, size) {
  return text.length > size ? `${text.slice(0, size - 1)}…` : text;
}

function ticks(lo, hi, count) {
  const raw = (hi - lo) / count;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) || raw;
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) out.push(Math.round(t * 1e6) / 1e6);
  return out;
}

function showAnswer(number) {
  const found = state.timeline && state.timeline.answers.find((a) => a.number === number);
  if (!found) return;
  const entry = justified(found);
  state.answer = number;
  const justification = entry.justification;
  document.querySelectorAll("#timeline g.answer").forEach((g) => {
    g.classList.toggle("selected", Number(g.getAttribute("data-answer")) === number);
  });
  const keys = new Set(justification.events.map((e) => `${e.stream} ${e.seq}`));
  document.querySelectorAll("#timeline g.event").forEach((g) => {
    const key = `${g.getAttribute("data-stream")} ${g.getAttribute("data-seq")}`;
    g.classList.toggle("justifying", keys.has(key));
  });
  const panel = document.getElementById("answer-details");
  panel.hidden = false;
  document.getElementById("answer-number").textContent = `#${number} at ${when(entry.answer.time)}`;
  const body = document.querySelector("#answer-bindings tbody");
  clear(body);
  for (const [name, term] of Object.entries(entry.answer.bindings || {})) {
    const row = el("tr", { "data-variable": name });
    row.append(el("td", {}, `?${name}`), el("td", {}, term));
    body.append(row);
  }
  for (const triple of entry.answer.triples || []) {
    const row = el("tr", { class: "triple" });
    row.append(el("td", {}, "triple"), el("td", {}, triple));
    body.append(row);
  }
  if ("boolean" in entry.answer) {
    const row = el("tr");
    row.append(el("td", {}, "ASK"), el("td", {}, String(entry.answer.boolean)));
    body.append(row);
  }
  const spans = [];
  if (justification.intervals.length) {
    spans.push("intervals " +
      justification.intervals.map(([a, b]) => `[${when(a)}, ${when(b)}]`).join(", "));
  }
  for (const scope of justification.scopes) spans.push(`${shortLabel(scope.label)} ${bracket(scope)}`);
  document.getElementById("answer-spans").textContent = spans.join(" · ");
  const list = document.getElementById("answer-events");
  clear(list);
  for (const event of justification.events) {
    const item = el("li", { "data-seq": event.seq });
    item.append(el("span", { class: "meta" },
      `#${event.seq} at ${when(event.time)} on ${short(event.stream)} · ${event.steps.map(shortLabel).join(", ")}`));
    for (const triple of event.triples) item.append(el("code", {}, triple));
    list.append(item);
  }
  if (!justification.events.length) list.append(el("li", { class: "hint" }, "none among the recent events"));
  const notes = document.getElementById("answer-notes");
  clear(notes);
  for (const note of justification.notes) notes.append(el("li", {}, note));
}

// metrics --------------------------------------------------------------------------------

// Prometheus text: {"name{labels}": value}.
function parseMetrics(text) {
  const out = new Map();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match) out.set(match[1] + (match[2] || ""), Number(match[3]));
  }
  return out;
}

function total(counters, name, filter = null) {
  let sum = 0;
  for (const [key, value] of counters) {
    if (!key.startsWith(name + "{") && key !== name) continue;
    if (filter !== null && !key.includes(filter)) continue;
    sum += value;
  }
  return sum;
}

// The latency histogram's buckets, summed over queries (or the selected one): [[le, count]].
function buckets(counters, filter) {
  const found = new Map();
  for (const [key, value] of counters) {
    if (!key.startsWith("rsep_push_latency_seconds_bucket{")) continue;
    if (filter !== null && !key.includes(filter)) continue;
    const le = /le="([^"]+)"/.exec(key)[1];
    found.set(le, (found.get(le) || 0) + value);
  }
  return [...found].map(([le, n]) => [le === "+Inf" ? Infinity : Number(le), n])
    .sort((a, b) => a[0] - b[0]);
}

async function refreshMetrics() {
  let text;
  try {
    const response = await fetch("/metrics");
    text = await response.text();
  } catch (_) {
    return;
  }
  const counters = parseMetrics(text);
  state.samples.push({ at: performance.now() / 1000, counters });
  if (state.samples.length > HISTORY + 1) state.samples.shift();
  drawCharts();
}

function drawCharts() {
  const samples = state.samples;
  const filter = state.selected === null ? null : `query="${state.selected}"`;
  const events = [], answers = [], mean = [], p99 = [];
  for (let i = 1; i < samples.length; i++) {
    const before = samples[i - 1], now = samples[i];
    const dt = Math.max(1e-3, now.at - before.at);
    const delta = (name, f) => total(now.counters, name, f) - total(before.counters, name, f);
    events.push(Math.max(0, delta("rsep_events_in_total", null)) / dt);
    answers.push(Math.max(0, delta("rsep_answers_out_total", filter)) / dt);
    const count = delta("rsep_push_latency_seconds_count", filter);
    const sum = delta("rsep_push_latency_seconds_sum", filter);
    mean.push(count > 0 ? (sum / count) * 1000 : null);
    const a = buckets(before.counters, filter), b = buckets(now.counters, filter);
    let quantile = null;
    if (count > 0 && a.length === b.length) {
      for (let k = 0; k < b.length; k++) {
        if (b[k][1] - a[k][1] >= 0.99 * count) { quantile = b[k][0] * 1000; break; }
      }
    }
    p99.push(quantile !== null && Number.isFinite(quantile) ? quantile : null);
  }
  const who = state.selected === null ? "all queries" : state.selected;
  drawChart("throughput-chart", "throughput-legend", [
    { name: "events in (all streams)", values: events },
    { name: `answers out (${who})`, values: answers },
  ]);
  drawChart("latency-chart", "latency-legend", [
    { name: `mean (${who})`, values: mean },
    { name: `p99 bucket bound (${who})`, values: p99 },
  ]);
}

function drawChart(id, legendId, series) {
  const chart = document.getElementById(id);
  clear(chart);
  const width = 460, height = 160, left = 44, bottom = 18, top = 8;
  const values = series.flatMap((s) => s.values).filter((v) => v !== null);
  const max = Math.max(1, ...values) * 1.1;
  const y = (v) => top + (1 - v / max) * (height - top - bottom);
  const x = (i) => left + (i / Math.max(1, HISTORY - 1)) * (width - left - 6);
  for (const fraction of [0, 0.5, 1]) {
    const v = max * fraction;
    chart.append(svg("line", { x1: left, x2: width - 6, y1: y(v), y2: y(v), class: "grid" }));
    chart.append(svg("text", { x: left - 4, y: y(v) + 4, class: "tick", "text-anchor": "end" },
      v >= 100 ? v.toFixed(0) : v.toPrecision(2)));
  }
  series.forEach((s, k) => {
    const offset = HISTORY - s.values.length;
    let path = "";
    s.values.forEach((v, i) => {
      if (v === null) return;
      path += `${path && s.values[i - 1] !== null ? "L" : "M"}${x(offset + i).toFixed(1)} ${y(v).toFixed(1)} `;
    });
    chart.append(svg("path", { d: path || "M0 0", class: "series", stroke: COLORS[k] }));
    s.values.forEach((v, i) => {  // a value without neighbours draws no line: a dot
      const alone = (i === 0 || s.values[i - 1] === null) &&
        (i === s.values.length - 1 || s.values[i + 1] === null);
      if (v !== null && alone) {
        chart.append(svg("circle", { cx: x(offset + i), cy: y(v), r: 2.5, fill: COLORS[k] }));
      }
    });
  });
  const legend = document.getElementById(legendId);
  clear(legend);
  series.forEach((s, k) => {
    const last = [...s.values].reverse().find((v) => v !== null);
    const item = el("span", { class: "key" }, `${s.name}: ${last === undefined ? "–" : last.toFixed(1)}`);
    item.style.borderColor = COLORS[k];
    legend.append(item);
  });
}

// start ----------------------------------------------------------------------------------

window.addEventListener("resize", () => { if (state.timeline) drawTimeline(); });
refreshLists();
refreshMetrics();
setInterval(refreshLists, POLL_MS);
setInterval(refreshMetrics, POLL_MS);
