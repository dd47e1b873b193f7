// qhybrid ui: the pages fill themselves from the JSON API. Job data reach the page only as text
// (textContent, attribute values set one by one), never as HTML. Charts are SVG drawn here.
"use strict";

const TOKEN = document.querySelector('meta[name="qhybrid-token"]').content;
const SVG = "http://www.w3.org/2000/svg";
const PALETTE = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#116329", "#a40e26", "#57606a"];
const TIME_METRICS = new Set(["iteration_seconds", "epoch_seconds"]);
const TERMINAL = new Set(["COMPLETED", "FAILED", "CANCELLED", "DAMAGED"]);
let COLOURS = {};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text != null) node.textContent = String(text);
  return node;
}

function link(path, params) {
  const q = new URLSearchParams(params || {});
  q.set("token", TOKEN);
  return path + "?" + q.toString();
}

async function api(path, params, method) {
  const res = await fetch(link(path, params), {method: method || "GET", headers: {"X-Qhybrid-Token": TOKEN},
                                               cache: "no-store"});
  const doc = await res.json();
  if (!res.ok) throw new Error(doc.error || res.statusText);
  return doc;
}

function status(text, error) {
  const s = document.getElementById("status");
  if (!s) return;
  s.textContent = text;
  s.className = "status" + (error ? " error" : "");
}

function stateNode(state) {
  const n = el("span", {class: "state", "data-state": state}, state);
  n.style.color = COLOURS[state] || "#57606a";
  return n;
}

function when(iso) {
  if (!iso) return "";
  const t = new Date(iso);
  const today = new Date().toDateString() === t.toDateString();
  return today ? t.toLocaleTimeString([], {hour: "2-digit", minute: "2-digit", second: "2-digit"})
               : t.toLocaleString([], {month: "short", day: "numeric", hour: "2-digit", minute: "2-digit"});
}

function num(v) {
  if (v == null) return "";
  if (typeof v !== "number") return String(v);
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 1e6 || Math.abs(v) < 1e-6 ? v.toExponential(3) : String(+v.toPrecision(5));
}

// ---- charts ---------------------------------------------------------------------------------
function ticks(lo, hi, n) {
  // round steps (1, 2 or 5 times a power of ten) covering [lo, hi]
  const raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}

function chart(title, lines, opts) {
  // lines: [{label, points: [[x, y], ...]}]; opts: {xlabel, optimum}
  const W = 560, H = 240, L = 62, R = 12, T = 24, B = 34;
  const pts = lines.flatMap(l => l.points);
  const xs = pts.map(p => p[0]), ys = pts.map(p => p[1]);
  if (opts.optimum != null) ys.push(opts.optimum);
  let [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  if (x0 === x1) { x0 -= 1; x1 += 1; }
  if (y0 === y1) { y0 -= 1; y1 += 1; }
  const pad = (y1 - y0) * 0.05; y0 -= pad; y1 += pad;
  const sx = x => L + (x - x0) / (x1 - x0) * (W - L - R);
  const sy = y => H - B - (y - y0) / (y1 - y0) * (H - T - B);
  const root = svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img", "data-metric": title,
                           "data-points": String(pts.length)});
  root.append(svg("title", {}, title));
  root.append(svg("text", {x: L, y: 15, class: "title"}, title));
  for (const y of ticks(y0, y1, 5)) {
    root.append(svg("line", {x1: L, x2: W - R, y1: sy(y), y2: sy(y), class: "grid"}));
    root.append(svg("text", {x: L - 6, y: sy(y) + 4, "text-anchor": "end"}, num(y)));
  }
  for (const x of ticks(x0, x1, 5)) {
    if (opts.xlabel === "iteration" && !Number.isInteger(x)) continue;
    root.append(svg("text", {x: sx(x), y: H - B + 15, "text-anchor": "middle"}, num(x)));
  }
  root.append(svg("line", {x1: L, x2: L, y1: T, y2: H - B, class: "axis"}));
  root.append(svg("line", {x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis"}));
  root.append(svg("text", {x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle"}, opts.xlabel));
  if (opts.note) root.append(svg("text", {x: W - R, y: 15, "text-anchor": "end"}, opts.note));
  if (opts.optimum != null) {
    root.append(svg("line", {x1: L, x2: W - R, y1: sy(opts.optimum), y2: sy(opts.optimum), class: "optimum",
                             "data-optimum": String(opts.optimum)}));
    root.append(svg("text", {x: W - R - 4, y: sy(opts.optimum) - 4, "text-anchor": "end"}, "optimum " + num(opts.optimum)));
  }
  lines.forEach((l, i) => {
    const colour = PALETTE[i % PALETTE.length];
    const d = l.points.map(p => `${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(" ");
    root.append(svg("polyline", {points: d, fill: "none", stroke: colour, "stroke-width": 1.6,
                                 "data-series": l.label, "data-count": l.points.length}));
    if (l.points.length < 60) {
      for (const p of l.points) root.append(svg("circle", {cx: sx(p[0]), cy: sy(p[1]), r: 2, fill: colour}));
    }
  });
  const box = el("div", {class: "chart"}, root);
  if (lines.length > 1) {
    box.append(el("div", {class: "legend"}, ...lines.map((l, i) => {
      const key = el("span", {class: "key"}, l.label);
      key.style.borderColor = PALETTE[i % PALETTE.length];
      return key;
    })));
  }
  return box;
}

function drawCharts(box, perJob) {
  // perJob: [{label, metrics: {x, series}, optimum}]; one chart per metric name, the jobs overlaid
  const names = [...new Set(perJob.flatMap(j => Object.keys(j.metrics.series)))];
  box.replaceChildren();
  if (!names.length) { box.append(el("p", {class: "legend"}, "no metrics yet")); return; }
  for (const name of names) {
    let lines = perJob.filter(j => j.metrics.series[name]).map(j => ({label: j.label, points: j.metrics.series[name]}));
    let note = null;
    if (TIME_METRICS.has(name) && lines.some(l => l.points.length > 1)) {
      // the first iteration compiles the kernels on a first run: drawn, it flattens the rest
      note = "first iteration left out (" + lines.map(l => num(l.points[0][1]) + " s").join(", ") + ")";
      lines = lines.map(l => ({label: l.label, points: l.points.length > 1 ? l.points.slice(1) : l.points}));
    }
    const optima = [...new Set(perJob.map(j => j.optimum).filter(o => o != null))];
    const optimum = name === "energy" && optima.length === 1 ? optima[0] : null;
    box.append(chart(name, lines, {xlabel: perJob[0].metrics.x, optimum, note}));
  }
}

// ---- the jobs table ---------------------------------------------------------------------------
const PAGE = 50;
const listState = {offset: 0, selected: new Set()};

async function refreshJobs() {
  const params = {offset: listState.offset, limit: PAGE, q: document.getElementById("q").value,
                  state: document.getElementById("state").value};
  const page = await api("/api/jobs", params);
  const body = document.querySelector("#jobs tbody");
  body.replaceChildren(...page.rows.map(r => {
    const box = el("input", {type: "checkbox", "aria-label": "select " + r.name});
    box.checked = listState.selected.has(r.name);
    box.addEventListener("change", () => { box.checked ? listState.selected.add(r.name) : listState.selected.delete(r.name);
                                           updateCompare(); });
    const name = el("a", {href: link("/job", {name: r.name}), class: "job-link"}, r.name);
    return el("tr", {"data-job": r.name}, el("td", {}, box), el("td", {}, name), el("td", {}, stateNode(r.state)),
              el("td", {}, r.device), el("td", {}, r.instance), el("td", {}, when(r.started || r.created)),
              el("td", {class: "num"}, r.duration), el("td", {class: "result"}, r.result), el("td", {class: "num"}, r.cost));
  }));
  const last = Math.min(page.total, page.offset + page.rows.length);
  document.getElementById("range").textContent = page.total ? `${page.offset + 1}-${last} of ${page.total}` : "no jobs";
  document.getElementById("newer").disabled = page.offset === 0;
  document.getElementById("older").disabled = last >= page.total;
}

function updateCompare() {
  document.getElementById("compare").disabled = listState.selected.size < 1;
}

function jobsPage() {
  const again = () => { listState.offset = 0; refreshJobs().catch(e => status(e.message, true)); };
  document.getElementById("q").addEventListener("input", again);
  document.getElementById("state").addEventListener("change", again);
  document.getElementById("filters").addEventListener("submit", e => { e.preventDefault(); again(); });
  document.getElementById("newer").addEventListener("click", () => { listState.offset = Math.max(0, listState.offset - PAGE); again2(); });
  document.getElementById("older").addEventListener("click", () => { listState.offset += PAGE; again2(); });
  document.getElementById("compare").addEventListener("click", () => {
    location.href = link("/compare", {jobs: [...listState.selected].join(",")});
  });
  function again2() { refreshJobs().catch(e => status(e.message, true)); }
  poll(refreshJobs, 2000, () => false);
}

// ---- a job ------------------------------------------------------------------------------------
const jobState = {logOffset: null, follow: true, log: null};

function rows(table, pairs) {
  table.replaceChildren(...pairs.filter(p => p[1] != null && p[1] !== "")
    .map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v))));
}

function costBars(c) {
  const box = document.getElementById("cost");
  const top = Math.max(c.so_far_usd || 0, c.estimate_usd || 0, c.max_cost_usd || 0) || 1;
  const bar = el("div", {class: "bar"});
  const fill = el("div", {class: "fill"}); fill.style.width = `${100 * (c.so_far_usd || 0) / top}%`;
  bar.append(fill);
  for (const [value, colour] of [[c.estimate_usd, "#1a7f37"], [c.max_cost_usd, "#cf222e"]]) {
    if (value == null) continue;
    const m = el("div", {class: "mark"}); m.style.left = `calc(${100 * value / top}% - 1px)`; m.style.background = colour;
    bar.append(m);
  }
  box.replaceChildren(el("div", {id: "cost-text"}, c.text), bar,
    el("div", {class: "legend"}, "blue: so far; green mark: the estimate; red mark: max_cost"));
}

function showLog(log) {
  jobState.log = log;
  const pre = document.getElementById("log");
  const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
  pre.textContent = log.text;
  if (jobState.follow && atBottom) pre.scrollTop = pre.scrollHeight;
  document.getElementById("log-range").textContent = log.size ? `bytes ${log.start}-${log.end} of ${log.size}` : "empty";
  document.getElementById("log-older").disabled = log.start === 0;
  document.getElementById("log-newer").disabled = log.end >= log.size;
}

async function refreshJob() {
  const name = new URLSearchParams(location.search).get("name");
  const d = await api("/api/jobs/" + encodeURIComponent(name), jobState.follow ? {} : {log_offset: jobState.logOffset});
  document.title = "qhybrid " + d.name;
  document.getElementById("name").textContent = d.name;
  document.getElementById("state").replaceChildren(stateNode(d.state));
  document.getElementById("cancel").hidden = TERMINAL.has(d.state);
  rows(document.getElementById("facts"), [["result", d.result], ["device", d.device_arn], ["entry point", d.entry_point],
    ["instance", `${d.instance_count} x ${d.instance}`], ["distribution", d.distribution ? `${d.distribution} (world size ${d.world_size})` : null],
    ["created", d.created], ["started", d.started], ["ended", d.ended], ["duration", d.duration],
    ["hyperparameters", Object.entries(d.hyperparameters).map(([k, v]) => `${k}=${v}`).join("  ")],
    ["tags", Object.entries(d.tags).map(([k, v]) => `${k}=${v}`).join("  ")],
    ["estimate", d.predicted ? `${num(d.predicted.total_seconds)} s (${num(d.predicted.seconds_per_iteration)} s/iteration, ${d.predicted.method})` : null],
    ["measured", d.measured_seconds != null ? `${num(d.measured_seconds)} s` + (d.measured_seconds_per_iteration != null ? ` (${num(d.measured_seconds_per_iteration)} s/iteration)` : "") : null],
    ["folder", d.folder]]);
  costBars(d.cost_view);
  drawCharts(document.getElementById("charts"), [{label: d.name, metrics: d.metrics, optimum: d.optimum}]);
  showLog(d.log);
  document.getElementById("result").textContent = d.result_data ? JSON.stringify(d.result_data, null, 2) : "(none yet)";
  document.getElementById("checkpoints").replaceChildren(...(d.checkpoints.length ? d.checkpoints.map(c => el("li", {}, `${c.name} (${c.bytes} bytes)`)) : [el("li", {}, "none")]));
  const env = d.environment || {};
  rows(document.getElementById("environment"), [["host", env.host], ["cpu", env.cpu ? `${env.cpu} (${env.cpu_count} cores)` : null],
    ["gpus", (env.gpus || []).join("; ") || (env.host ? "none" : null)],
    ["packages", Object.entries(env.packages || {}).filter(([, v]) => v).map(([k, v]) => `${k} ${v}`).join(", ")],
    ["git", env.git_commit ? `qhybrid ${env.git_commit}, source ${env.source_git_commit || "-"}` : null],
    ["command line", (env.command_line || []).join(" ")], ["dependencies", d.dependency_environment || "the caller's interpreter"]]);
  const failure = [d.failure_reason, d.damaged, d.traceback_tail].filter(Boolean).join("\n\n");
  document.getElementById("failure-box").hidden = !failure;
  document.getElementById("failure").textContent = failure;
  return d;
}

function jobPage() {
  document.getElementById("home").href = link("/");
  document.getElementById("cancel").addEventListener("click", async () => {
    const name = new URLSearchParams(location.search).get("name");
    if (!confirm(`Cancel job ${name}?`)) return;
    try { const r = await api(`/api/jobs/${encodeURIComponent(name)}/cancel`, {}, "POST"); status(`${r.job} ${r.state}`); }
    catch (e) { status(e.message, true); }
  });
  const page = step => {
    const log = jobState.log; if (!log) return;
    jobState.follow = false;
    jobState.logOffset = Math.max(0, step < 0 ? log.start - 65536 : log.end);
    api(`/api/jobs/${encodeURIComponent(new URLSearchParams(location.search).get("name"))}/log`, {offset: jobState.logOffset})
      .then(showLog).catch(e => status(e.message, true));
  };
  document.getElementById("log-older").addEventListener("click", () => page(-1));
  document.getElementById("log-newer").addEventListener("click", () => page(1));
  document.getElementById("log-tail").addEventListener("click", () => { jobState.follow = true; refreshJob(); });
  poll(refreshJob, 1000, d => d && TERMINAL.has(d.state));
}

// ---- compare ------------------------------------------------------------------------------------
async function refreshCompare() {
  const names = new URLSearchParams(location.search).get("jobs") || "";
  const doc = await api("/api/compare", {jobs: names});
  const table = document.getElementById("versus");
  const head = el("tr", {}, ...["job", "state", "device", "instance", "result", "estimate s", "measured s",
                                "estimate s/iter", "measured s/iter", "estimate $", "measured $"].map(h => el("th", {}, h)));
  table.replaceChildren(el("thead", {}, head), el("tbody", {}, ...doc.jobs.map(j => el("tr", {"data-job": j.name},
    el("td", {}, el("a", {href: link("/job", {name: j.name})}, j.name)), el("td", {}, stateNode(j.row.state)),
    el("td", {}, j.row.device), el("td", {}, j.row.instance), el("td", {class: "result"}, j.row.result),
    el("td", {class: "num"}, num(j.estimate.seconds)), el("td", {class: "num"}, num(j.measured.seconds)),
    el("td", {class: "num"}, num(j.estimate.seconds_per_iteration)), el("td", {class: "num"}, num(j.measured.seconds_per_iteration)),
    el("td", {class: "num"}, num(j.estimate.cost_usd)), el("td", {class: "num"}, num(j.measured.cost_usd))))));
  drawCharts(document.getElementById("charts"), doc.jobs.map(j => ({label: j.name, metrics: j.metrics, optimum: j.optimum})));
  return doc.jobs.every(j => TERMINAL.has(j.row.state));
}

function comparePage() {
  document.getElementById("home").href = link("/");
  poll(refreshCompare, 2000, done => done === true);
}

// ---- polling ------------------------------------------------------------------------------------
function poll(refresh, every, finished) {
  const tick = async () => {
    try {
      const value = await refresh();
      status("updated " + new Date().toLocaleTimeString());
      if (finished(value)) { status("final " + new Date().toLocaleTimeString()); return; }
    } catch (e) { status(e.message, true); }
    setTimeout(tick, every);
  };
  tick();
}

api("/api/states").then(c => { COLOURS = c; }).catch(() => {}).finally(() => {
  const page = document.body.dataset.page;
  if (page === "jobs") jobsPage(); else if (page === "job") jobPage(); else if (page === "compare") comparePage();
});
