// kvfit's page: reads the question from the address, asks the JSON API and draws its answer.
// It computes nothing: every number shown is a field of the report JSON (bytes are only
// written as GiB). Text from the report goes into the page as text (textContent), never as
// markup: model names and config text are untrusted.
"use strict";

const GIB = 1024 ** 3;
const PARTS = [
  ["weights", "weights"], ["state", "KV / state"], ["engine_overheads", "engine overheads"],
  ["reserve", "reserve"], ["free", "free"],
];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") node.textContent = String(v);
    else node.setAttribute(k, String(v));
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

const $ = (id) => document.getElementById(id);
const gib = (bytes) => (bytes === null || bytes === undefined) ? "n/a" : (bytes / GIB).toFixed(2) + " GiB";
const num = (n) => (n === null || n === undefined) ? "n/a" : Number(n).toLocaleString("en-US");

async function getJSON(url, options) {
  const response = await fetch(url, options);
  let body;
  try { body = await response.json(); } catch (e) { body = null; }
  if (!response.ok || body === null) {
    const err = (body && body.error) || { kind: "error", message: `${url} answered HTTP ${response.status}.` };
    throw Object.assign(new Error(err.message), { kvfit: err });
  }
  return body;
}

function showError(err) {
  const box = $("error");
  const e = err.kvfit || { kind: "error", message: String(err.message || err) };
  box.replaceChildren(el("p", { text: `kvfit: ${e.kind}: ${e.message}${e.hint ? " " + e.hint : ""}` }));
  box.hidden = false;
}

// ---- the question: the address <-> the form --------------------------------------------

function questionFromForm(form) {
  const q = new URLSearchParams();
  for (const [k, v] of new FormData(form)) if (String(v).trim() !== "") q.append(k, String(v).trim());
  const engine = $("engine").value;
  if (engine) {
    const version = $("engine_version").value.trim();
    q.set("engine", version ? `${engine}@${version}` : engine);
  }
  // keep what the form has no box for (offline, tp, utilization, ...), so a link keeps them
  for (const [k, v] of new URLSearchParams(location.search)) {
    if (!form.elements.namedItem(k) && k !== "engine" && !q.has(k)) q.append(k, v);
  }
  return q;
}

function fillForm(form, q) {
  for (const [k, v] of q) {
    const box = form.elements.namedItem(k);
    if (box && box.type === "checkbox") box.checked = ["", "true", "1", "on", "yes"].includes(v.trim().toLowerCase());
    else if (box && "value" in box) box.value = v;
  }
  const engine = q.get("engine") || "";
  const at = engine.indexOf("@");
  $("engine").value = at < 0 ? engine : engine.slice(0, at);
  $("engine_version").value = at < 0 ? "" : engine.slice(at + 1);
}

// --tune: the engine's own settings, so the controls are live only with an engine picked
// (and the memory-fraction cap only with tune on); a disabled box is not in the question
function tuneControls() {
  const engine = $("engine"), tune = $("tune"), cap = $("tune_max_utilization");
  const sync = () => {
    const picked = engine.value !== "";
    tune.disabled = !picked;
    cap.disabled = !picked || !tune.checked;
    $("tune-note").textContent = picked
      ? "Tries the engine's own settings and recommends those that hold the most sequences; the memory " +
        "fraction stays at most the engine's default unless a higher cap is given."
      : "Recommending settings needs an engine: pick vLLM or SGLang above.";
  };
  engine.addEventListener("change", sync);
  tune.addEventListener("change", sync);
  sync();
}

function selectValue(select, value) {
  if (value && ![...select.options].some((o) => o.value === value)) {
    select.append(el("option", { value, text: value }));
  }
  select.value = value || "";
}

async function loadPickers(q) {
  const [hardware, systems, detect] = await Promise.all([
    getJSON("/api/hardware"), getJSON("/api/systems"), getJSON("/api/hardware/detect").catch(() => null),
  ]);
  const hw = $("hardware");
  if (detect && detect.detected) {
    const d = detect.detected;
    hw.append(el("option", { value: "auto", text: `auto: ${d.count} x ${d.name} (${d.preset})` }));
    $("detected").textContent = d.summary;
    $("detected").hidden = false;
  }
  for (const a of hardware) hw.append(el("option", { value: a.id, text: `${a.id} (${a.nominal_gib} GiB)` }));
  const sys = $("system");
  for (const s of systems) sys.append(el("option", { value: s.id, text: `${s.id}: ${s.accelerators} x ${s.hardware}` }));
  const detected = detect && detect.detected && !q.has("model");
  selectValue(hw, q.get("hardware") || (detected && !q.get("system") ? "auto" : ""));
  selectValue(sys, q.get("system") || "");
}

function catalogSuggestions() {
  const box = $("model");
  const list = $("catalog");
  let asked = 0;
  let timer = null;
  const ask = async () => {
    const mine = ++asked;
    const q = new URLSearchParams({ q: box.value.trim() });
    try {
      // a typed path (/, ./, ~) lists local folders; anything else, catalog ids
      const local = /^(\/|\.\.?\/|~)/.test(box.value.trim());
      const rows = await getJSON((local ? "/api/folders?" : "/api/catalog?") + q);
      if (mine !== asked) return;
      list.replaceChildren(...rows.map((r) => local
        ? el("option", { value: r.path, label: r.checkpoint ? "checkpoint (config.json)" : "folder" })
        : el("option", { value: r.repo_id })));
    } catch (e) { /* suggestions are a help, not an answer */ }
  };
  box.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(ask, 120); });
  ask();
}

// ---- the answer -----------------------------------------------------------------------

function verdictText(r) {
  const rec = r.recommended;
  const need = r.target ? r.target.required_sequences : null;
  if (r.fits === true) return ["fits", "Fits"];
  if (r.fits === false) return ["no", "Does not fit"];
  return ["unknown", rec ? "Not judged" : "State only"];
}

function renderVerdict(r) {
  const [cls, word] = verdictText(r);
  const v = $("verdict");
  v.className = "verdict " + cls;
  const rec = r.recommended;
  const parts = [el("strong", { id: "verdict-word", text: word })];
  if (rec) {
    parts.push(": ", el("span", { id: "verdict-layout", text: rec.label }), " holds ",
      el("span", { id: "max-sequences", text: num(rec.max_sequences) }), " sequences");
    if (r.target) parts.push(`; the target needs ${num(r.target.required_sequences)}`);
    parts.push(".");
  } else if (r.state) {
    parts.push(`: ${gib(r.state.bytes_per_sequence)} of state per sequence; name the GPUs (or a system) to plan a fit.`);
  }
  v.replaceChildren(...parts);
  const hw = r.hardware;
  const where = hw ? (hw.system ? `${hw.gpus} x ${hw.id} (${hw.system_name || hw.system})` : `${hw.gpus} x ${hw.id}`) : "no hardware";
  const model = r.model || {};
  $("summary").textContent = [
    `${model.source || "?"} (${model.model_type || "?"})`, `${num(r.context_tokens)} tokens`,
    `KV ${r.kv_dtype}`, where, r.capacity_model ? r.capacity_model.label : null,
    rec && rec.why ? rec.why : null,
  ].filter(Boolean).join(" · ");
}

function renderLayouts(r) {
  const body = $("layouts").querySelector("tbody");
  const recId = r.recommended ? r.recommended.id : null;
  body.replaceChildren(...(r.layouts || []).map((x) => {
    const answer = x.fits === true ? "fits" : x.fits === false ? "does not fit" : "not judged";
    const row = el("tr", { class: x.id === recId ? "recommended" : null },
      el("th", { scope: "row", class: "layout", text: x.label }, x.id === recId ? el("br") : "",
        x.id === recId ? el("small", { text: "recommended" }) : ""),
      el("td", { text: x.placement || "" }),
      el("td", { class: "num", text: num(x.max_sequences) }),
      el("td", { class: "num", text: gib(x.per_rank ? x.per_rank.weights_bytes : null) }),
      el("td", { class: "num", text: gib(x.per_rank ? x.per_rank.state_bytes_per_sequence : null) }),
      el("td", { title: x.reason || "", text: `${answer}${x.reason ? ": " + x.reason : ""}` }));
    return row;
  }));
}

function renderBars(layouts) {
  const box = $("bars");
  const rows = layouts.filter((x) => x.memory_per_rank);
  if (!rows.length) {
    box.replaceChildren(el("p", { class: "note", text: "No memory bars: no layout has known weights and a valid split." }));
    return;
  }
  const W = 760, left = 150, barW = W - left - 90, rowH = 26, top = 6;
  const chart = svg("svg", { viewBox: `0 0 ${W} ${top + rows.length * rowH + 4}`, role: "img",
    "aria-label": "memory per rank of each layout", class: "bars" });
  rows.forEach((x, i) => {
    const m = x.memory_per_rank;
    const y = top + i * rowH;
    chart.append(svg("text", { x: left - 8, y: y + 15, "text-anchor": "end", class: "label" }, x.label));
    let at = left;
    // the drawn width is the larger of the total and the parts; a negative part (an engine
    // pool below zero: it would not start) is not drawn but said
    const scale = Math.max(m.total_bytes, PARTS.reduce((t, [p]) => t + Math.max(0, m[p + "_bytes"] || 0), 0));
    const negative = PARTS.filter(([p]) => (m[p + "_bytes"] || 0) < 0).map(([p, name]) => `${name} ${gib(m[p + "_bytes"])}`);
    for (const [part, name] of PARTS) {
      const bytes = m[part + "_bytes"] || 0;
      if (bytes <= 0 || !scale) continue;
      const w = bytes / scale * barW;
      const rect = svg("rect", { x: at, y, width: Math.max(w, 0.5), height: rowH - 8, class: "part " + part });
      rect.append(svg("title", {}, `${x.label}: ${name} ${gib(bytes)} of ${gib(m.total_bytes)}`));
      chart.append(rect);
      if (w > 70) chart.append(svg("text", { x: at + 4, y: y + 13, class: "in" }, `${name} ${(bytes / GIB).toFixed(1)}`));
      at += w;
    }
    chart.append(svg("text", { x: left + barW + 6, y: y + 13, class: "total" },
      gib(m.total_bytes) + (negative.length ? ` (${negative.join(", ")})` : "")));
  });
  const legend = el("p", { class: "legend" }, ...PARTS.map(([part, name]) =>
    el("span", {}, el("i", { class: "swatch " + part }), name)),
    el("span", { class: "note", text: rows[0].memory_per_rank.basis ? ` · ${rows[0].memory_per_rank.basis}` : "" }));
  box.replaceChildren(chart, legend);
}

function replanLink(q, s) {
  // a suggestion names the option it changes (`change`) and its new `value`; other fields
  // it carries beside them (e.g. the context an fp8 cache reaches) change too
  const next = new URLSearchParams(q);
  const shown = new Set(["change", "flags", "description", "layout", "max_sequences", "value"]);
  next.set(s.change, s.value === undefined ? "true" : String(s.value));
  for (const [k, v] of Object.entries(s)) if (!shown.has(k) && v !== null && typeof v !== "object") next.set(k, String(v));
  if (s.change === "max_context") next.delete("context");
  return "/?" + next.toString();
}

function renderSuggestions(r, q) {
  const list = $("suggestions");
  const rows = r.suggestions || [];
  $("suggest-block").hidden = rows.length === 0;
  list.replaceChildren(...rows.map((s) => el("li", {},
    el("a", { href: replanLink(q, s), class: "suggestion", text: s.description }), " ",
    el("code", { text: s.flags }),
    s.layout ? ` → ${s.layout} holds ${num(s.max_sequences)}` : "")));
}

function renderSearch(r, q) {
  const box = $("search");
  const c = r.search && r.search.candidates;
  box.hidden = !c;
  if (!c) return;
  const rows = c.map((x) => {
    const next = new URLSearchParams(q);
    next.delete("systems"); next.delete("max_nodes");
    next.set("system", x.system); next.set("nodes", String(x.nodes));
    const best = x.best_any_fabric;
    return el("tr", {}, el("th", { scope: "row" }, el("a", { href: "/?" + next, text: x.name || x.system })),
      el("td", { class: "num", text: num(x.nodes) }), el("td", { class: "num", text: num(x.gpus) }),
      el("td", { text: x.status }), el("td", { class: "layout", text: best ? best.label : "" }),
      el("td", { class: "num", text: best ? num(best.max_sequences) : "" }), el("td", { text: x.reason || "" }));
  });
  box.replaceChildren(el("h2", { text: "Systems searched" }), el("div", { class: "scroll" },
    el("table", {}, el("thead", {}, el("tr", {}, ...["System", "Nodes", "GPUs", "Answer", "Best layout", "Max sequences", "Why"]
      .map((h) => el("th", { scope: "col", text: h })))), el("tbody", {}, ...rows))));
}

function renderInverse(r) {
  const box = $("inverse");
  const inv = r.inverse;
  box.hidden = !inv;
  if (!inv) return;
  const items = Object.entries(inv).filter(([, v]) => v === null || typeof v !== "object");
  box.replaceChildren(el("h2", { text: inv.question === "min_gpus" ? "Fewest GPUs" : "Longest context" }),
    el("dl", {}, ...items.flatMap(([k, v]) => [el("dt", { text: k.replaceAll("_", " ") }), el("dd", { text: v === null ? "none" : num(v) })])));
}

// a tried value of a tuned setting as the report writes its default and recommendation
function settingText(s, v) {
  if (v === s.recommended) return s.recommended_text;
  if (v === s.default || v === null || v === undefined) return s.default_text;
  if (typeof v === "boolean") return v ? "on" : "off";
  return typeof v === "number" ? num(v) : String(v);
}

function launchOf(cmd) {
  if (cmd && cmd.launch) return cmd.launch;
  if (cmd && cmd.hosts && cmd.hosts.length) return cmd.hosts.map((h) => h.launch).join("\n");
  return "";
}

// an engine id as the engine picker names it (vllm -> vLLM)
function engineLabel(id) {
  const o = [...$("engine").options].find((x) => x.value === id);
  return o ? o.textContent : id;
}

function renderTune(r) {
  const t = r.tune;
  $("tune-block").hidden = !t;
  if (!t) return;
  const [cls, word] = t.holds === true ? ["fits", "Holds"] : t.holds === false ? ["no", "Does not hold"] : ["unknown", "Not judged"];
  const v = $("tune-verdict");
  v.className = "verdict tune " + cls;
  v.replaceChildren(el("strong", { id: "tune-word", text: word }), " ",
    el("span", { id: "tune-max-sequences", class: "figure", text: num(t.max_sequences) }),
    ` resident sequences with these settings${t.layout ? " on " + t.layout : ""}, `,
    el("span", { id: "tune-default-sequences", class: "figure", text: num(t.default_max_sequences) }),
    ` with ${engineLabel(t.engine)} ${t.version}'s defaults; the target needs `,
    el("span", { id: "tune-required", class: "figure", text: num(t.required_sequences) }), ".");
  // the summary sentence says more than the figures when nothing was held or judged
  const said = t.max_sequences ? "" : ` ${t.summary[0].toUpperCase()}${t.summary.slice(1)}.`;
  $("tune-summary").textContent = `${num(t.combinations)} combinations of ${engineLabel(t.engine)}'s settings tried.${said}`;
  $("tune-settings").querySelector("tbody").replaceChildren(...t.settings.map((s) => el("tr", { class: s.changed ? "changed" : null },
    el("th", { scope: "row", title: s.rule }, s.name, el("br"), el("code", { class: "flag", text: s.flag })),
    el("td", { text: s.default_text }),
    el("td", { class: "num", text: num(s.max_sequences_at_default) }),
    el("td", {}, s.changed ? el("strong", { text: s.recommended_text }) : s.recommended_text,
      s.changed ? el("small", { class: "note", text: " changed" }) : ""),
    el("td", { class: "num", text: num(s.max_sequences) }),
    el("td", { class: "tried" }, ...s.values.flatMap((x, i) => [i ? " · " : "",
      el("span", { text: `${settingText(s, x.value)}: ${num(x.max_sequences)}` })])))));
  $("tune-refusals").replaceChildren(...t.settings.filter((s) => s.default_refusal).map((s) =>
    el("li", { text: `${s.flag} at ${s.default_text}: the engine refuses to start: ${s.default_refusal}` })));
  const launch = launchOf(t.command);
  const none = t.command && t.command.notes && t.command.notes.length ? "none: " + t.command.notes.join("; ") : "none";
  $("tune-launch").textContent = launch || none;
  $("tune-launch").classList.toggle("none", !launch);
  $("copy-tune-launch").disabled = !launch;
  $("tune-warnings-block").hidden = !t.warnings.length;
  $("tune-warnings").replaceChildren(...t.warnings.map((w) => el("li", { text: w })));
}

function renderCommands(r, command) {
  $("command").textContent = command;
  const launch = launchOf(r.engine_command);
  // with --tune the recommended settings' launch is in their section; this one is the defaults'
  $("launch-what").textContent = r.tune ? "launch (defaults)" : "launch";
  $("launch").textContent = launch || "choose an engine (vLLM or SGLang) for its launch command";
  $("launch").classList.toggle("none", !launch);
  $("copy-launch").disabled = !launch;
}

function renderWarnings(r) {
  const rows = [...(r.warnings || []), ...((r.model && r.model.notes) || [])];
  $("warnings-block").hidden = rows.length === 0;
  $("warnings").replaceChildren(...rows.map((w) => el("li", { text: w })));
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {
    const area = el("textarea", { readonly: "" });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  document.body.dataset.copied = text;   // what was copied, for a reader of the page
  $("copied").textContent = "Copied: " + text;
}

async function plan(q) {
  const apiQ = new URLSearchParams(q);
  const engine = (q.get("engine") || "").split("@")[0];
  if (engine && !apiQ.has("print_command")) apiQ.set("print_command", engine);
  $("status").textContent = "Planning…";
  document.body.dataset.state = "planning";
  let report;
  try {
    report = await getJSON("/api/plan?" + apiQ);
  } catch (err) {
    $("status").hidden = true;
    $("result").hidden = true;
    showError(err);
    document.body.dataset.state = "error";
    return;
  }
  $("status").hidden = true;
  $("error").hidden = true;
  renderVerdict(report);
  renderLayouts(report);
  renderSuggestions(report, q);
  renderSearch(report, q);
  renderInverse(report);
  renderTune(report);
  renderWarnings(report);
  $("raw").href = "/api/plan?" + apiQ;
  $("result").hidden = false;
  const command = await getJSON("/api/command?" + apiQ).then((c) => c.command, () => "");
  renderCommands(report, command);
  document.body.dataset.state = "answered";
  await drawBars(report, q);
}

// contexts the capacity chart asks about (a sweep of the same question), up to the model's
// declared maximum or the asked context, whichever is longer
const LADDER = [4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576];
const tokensText = (n) => n % 1048576 === 0 ? `${n / 1048576}m` : n % 1024 === 0 ? `${n / 1024}k` : num(n);

async function drawBars(report, q) {
  // the chart and the memory bars are the sweep's: the same question over a context axis
  const none = (why) => {
    $("bars").replaceChildren(el("p", { class: "note", text: why }));
    $("capacity").replaceChildren(el("p", { class: "note", text: why }));
  };
  if (report.search) return none("A systems search: open one system above for its chart and memory bars.");
  if (report.inverse || !report.layouts || !report.layouts.length) return none("No chart for this question: it plans no fixed layout.");
  const asked = report.context_tokens;
  const top = Math.max(asked, report.max_context_tokens || 0);
  const points = [...new Set([...LADDER.filter((n) => n <= top), asked])].sort((a, b) => a - b);
  const sq = new URLSearchParams(q);
  // the chart and bars are the plan's own layouts (--tune answers one plan, not a sweep)
  for (const k of ["context", "print_command", "tune", "tune_max_utilization"]) sq.delete(k);
  sq.set("sweep", `context=${points.join(",")}`);
  try {
    const s = await getJSON("/api/sweep?" + sq);
    const cells = (s.sweep && s.sweep.cells) || [];
    const here = cells.find((c) => c.context_tokens === asked);
    renderBars(here ? here.layouts : []);
    renderCapacity(cells, asked);
  } catch (err) {
    none("No chart: " + err.message);
  }
  document.body.dataset.bars = "drawn";
}

function renderCapacity(cells, asked) {
  const box = $("capacity");
  const ids = [];
  const labels = {};
  for (const c of cells) for (const x of c.layouts) if (!(x.id in labels)) { ids.push(x.id); labels[x.id] = x.label; }
  const value = (c, id) => { const x = c.layouts.find((y) => y.id === id); return x ? x.max_sequences : null; };
  const ys = cells.flatMap((c) => [...ids.map((id) => value(c, id)), c.required_sequences]).filter((v) => v !== null && v !== undefined);
  if (!cells.length || !ys.length) { box.replaceChildren(el("p", { class: "note", text: "No chart: no cell was judged." })); return; }
  const W = 760, H = 200, left = 56, right = 150, top = 10, bottom = 34;
  const top_ = Math.max(...ys, 1);
  const x = (i) => left + (cells.length === 1 ? 0 : i / (cells.length - 1)) * (W - left - right);
  const y = (v) => top + (1 - v / top_) * (H - top - bottom);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", class: "capacity",
    "aria-label": "max sequences of each layout by context" });
  for (const f of [0, 0.5, 1]) {
    const v = Math.round(top_ * f);
    chart.append(svg("line", { x1: left, x2: W - right, y1: y(v), y2: y(v), class: "grid" }));
    chart.append(svg("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end" }, num(v)));
  }
  cells.forEach((c, i) => {
    chart.append(svg("text", { x: x(i), y: H - bottom + 16, "text-anchor": "middle",
      class: c.context_tokens === asked ? "asked" : "" }, tokensText(c.context_tokens)));
    if (c.context_tokens === asked) chart.append(svg("line", { x1: x(i), x2: x(i), y1: top, y2: H - bottom, class: "asked" }));
  });
  chart.append(svg("text", { x: (left + W - right) / 2, y: H - 2, "text-anchor": "middle", class: "axis" }, "context (tokens per sequence)"));
  const target = cells.map((c, i) => `${x(i)},${y(c.required_sequences)}`).join(" ");
  chart.append(svg("polyline", { points: target, class: "target" }));
  ids.forEach((id, k) => {
    const pts = cells.map((c, i) => [i, value(c, id)]).filter(([, v]) => v !== null && v !== undefined);
    const line = svg("polyline", { points: pts.map(([i, v]) => `${x(i)},${y(v)}`).join(" "), class: `curve c${k % 6}` });
    line.append(svg("title", {}, labels[id]));
    chart.append(line);
    for (const [i, v] of pts) {
      const dot = svg("circle", { cx: x(i), cy: y(v), r: 3, class: `dot c${k % 6}` });
      dot.append(svg("title", {}, `${labels[id]} at ${tokensText(cells[i].context_tokens)}: ${num(v)} sequences`));
      chart.append(dot);
    }
    chart.append(svg("text", { x: W - right + 10, y: top + 12 + k * 16, class: `key c${k % 6}` }, labels[id]));
  });
  chart.append(svg("text", { x: W - right + 10, y: top + 12 + ids.length * 16, class: "key target" }, "target"));
  box.replaceChildren(chart);
}

// the question form filled from the URL, asking `page` on submit; returns the URL's question
function questionForm(page) {
  const form = $("question");
  const q = new URLSearchParams(location.search);
  fillForm(form, q);
  tuneControls();
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    location.assign(page + "?" + questionFromForm(form));
  });
  return q;
}

function start() {
  const q = questionForm("/");
  document.addEventListener("click", (ev) => {
    const button = ev.target.closest("button.copy");
    if (button) copy($(button.dataset.copy).textContent);
  });
  catalogSuggestions();
  loadPickers(q).catch(showError);
  if (q.get("model")) plan(q);
  else document.body.dataset.state = "idle";
}

// ---- the fit page ---------------------------------------------------------------------

// the settings --tune changed for a row, as flags (as `kvfit fit --tune` lists them)
function tunedFlags(t) {
  if (!t) return [];
  const flags = t.changed.map((c) => c.value === true ? c.flag : c.value === false ? "--no-" + c.flag.slice(2) : `${c.flag} ${c.value}`);
  return flags.length ? flags : ["the defaults"];
}

async function fitPage() {
  const q = questionForm("/fit");
  await loadPickers(q).catch(showError);
  if (!q.get("context")) { document.body.dataset.state = "idle"; return; }
  $("status").textContent = "Planning every catalog checkpoint…";
  let d;
  try {
    d = await getJSON("/api/fit?" + q);
  } catch (err) {
    $("status").hidden = true;
    showError(err);
    document.body.dataset.state = "error";
    return;
  }
  $("status").hidden = true;
  const counts = Object.entries(d.counts || {}).map(([k, v]) => `${num(v)} ${k}`).join(", ");
  $("verdict").textContent = `${num(d.planned)} checkpoints planned: ${counts}.`;
  const planQ = new URLSearchParams(q);
  planQ.delete("family"); planQ.delete("all"); planQ.delete("no_catalog");
  const all = Object.values(d.rows || {}).flat();
  const tuned = all.some((x) => x.tune);
  $("fit-tuned").hidden = !tuned;
  const rows = all.map((x) => {
    const link = new URLSearchParams(planQ);
    link.set("model", x.model);
    return el("tr", {}, el("th", { scope: "row" }, el("a", { href: "/?" + link, text: x.model })),
      el("td", { text: x.status }), el("td", { class: "num", text: num(x.max_sequences) }),
      el("td", { class: "layout", text: x.recommended ? x.recommended.label : "" }),
      el("td", { class: "num", text: x.weights ? gib(x.weights.bytes) : "" }),
      el("td", { text: x.reason || "" }),
      tuned ? el("td", { class: "tuned", title: x.tune ? x.tune.launch : null },
        ...tunedFlags(x.tune).flatMap((f, i) => [i ? " " : "", el("code", { text: f })])) : "");
  });
  $("fit-rows").replaceChildren(...rows);
  $("verify").textContent = d.verify || "";
  $("result").hidden = false;
  document.body.dataset.state = "answered";
}

document.addEventListener("DOMContentLoaded", () => {
  if (document.body.dataset.page === "fit") fitPage();
  else start();
});
