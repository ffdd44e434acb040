// The review page: one item at a time, decided with buttons or keys.
// Item text is always set with textContent, never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { item: null, spans: null, meta: null, name: "", done: [], keys: {} };

// The session token comes in the URL `answerable review serve` prints; it is kept for
// this tab so that a reload works, and sent with every API request.
const TOKEN = (() => {
  const given = new URLSearchParams(location.search).get("token");
  if (given) sessionStorage.setItem("answerable.token", given);
  return given || sessionStorage.getItem("answerable.token") || "";
})();

async function api(path, body) {
  const headers = { "X-Review-Token": TOKEN };
  const options = body === undefined ? { headers } : {
    method: "POST", headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  const reply = await fetch(path, options);
  const data = await reply.json();
  if (!reply.ok) throw new Error(data.error || reply.statusText);
  return data;
}

function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) node.append(child);
  return node;
}

function fillSelect(select, values, keep = []) {
  for (const value of values) select.append(el("option", { value, textContent: value }));
  for (const option of keep) select.prepend(option);
}

function filters() {
  return { db: $("filter-db").value, category: $("filter-category").value,
           status: $("filter-status").value };
}

function annotator() { return state.name; }

function say(text, kind = "") { $("message").textContent = text; $("message").className = kind; }

async function start() {
  const meta = state.meta = await api("/api/meta");
  $("dataset").textContent = meta.dataset;
  $("policy").textContent = "policy: " + meta.policy;
  fillSelect($("filter-db"), meta.databases);
  fillSelect($("filter-category"), meta.categories);
  fillSelect($("filter-status"), meta.statuses);
  fillCategories(meta.guidelines);
  fillGuidelines(meta.guidelines);
  $("who-form").addEventListener("submit", (event) => { event.preventDefault(); setName(); });
  $("who-change").addEventListener("click", changeName);
  for (const id of ["filter-db", "filter-category", "filter-status"]) {
    $(id).addEventListener("change", () => { $(id).blur(); load(); });
  }
  $("accept").addEventListener("click", () => decide("accept"));
  $("reject").addEventListener("click", () => decide("reject"));
  $("relabel").addEventListener("click", () => decide("relabel"));
  $("skip").addEventListener("click", () => load(state.item && state.item.id));
  $("undo").addEventListener("click", undo);
  $("guidelines-toggle").addEventListener("click", toggleGuidelines);
  $("clear-spans").addEventListener("click", () => { state.spans = []; showQuestion(); });
  for (const button of document.querySelectorAll(".spans-edit [data-tag]")) {
    button.addEventListener("click", () => markSelection(button.dataset.tag));
  }
  document.addEventListener("keydown", onKey);
  const saved = localStorage.getItem("answerable.annotator") || "";
  if (saved) { $("annotator").value = saved; setName(); } else changeName();
}

// The relabel list in the guidelines' order; the first nine get the keys 1-9.
function fillCategories(guidelines) {
  const category = $("category");
  category.append(el("option", { value: "", textContent: "choose…" }));
  let group = null;
  for (const entry of guidelines) {
    if (!group || group.label !== entry.label) {
      group = el("optgroup", { label: entry.label });
      category.append(group);
    }
    const key = entry.key ? `${entry.key}  ` : "";
    group.append(el("option", { value: entry.name, textContent: key + entry.name }));
    if (entry.key) state.keys[entry.key] = entry.name;
  }
}

function fillGuidelines(guidelines) {
  const list = $("guidelines-list");
  for (const entry of guidelines) {
    const key = entry.key ? ` (key ${entry.key})` : "";
    list.append(el("dt", { textContent: `${entry.name}${key}` }, [
      el("span", { className: "muted", textContent: ` ${entry.label}` })]));
    const example = entry.example ? el("span", { className: "example",
                                                 textContent: "e.g. " + entry.example }) : "";
    list.append(el("dd", { textContent: entry.definition }, [example]));
  }
}

function toggleGuidelines() {
  const box = $("guidelines");
  box.hidden = !box.hidden;
  $("guidelines-toggle").setAttribute("aria-expanded", String(!box.hidden));
}

// The name is required before anything can be decided, and stays in sight while
// reviewing; the text box is gone then, so no shortcut or undo can change it.
function setName() {
  const name = $("annotator").value.trim();
  if (!name) { changeName(); return; }
  state.name = name;
  localStorage.setItem("answerable.annotator", name);
  $("who-name").textContent = name;
  $("who-form").hidden = true;
  $("who-shown").hidden = false;
  $("annotator").blur();
  state.done = [];
  $("undo").disabled = true;
  load();
}

function changeName() {
  state.name = "";
  state.item = null;
  $("who-shown").hidden = true;
  $("who-form").hidden = false;
  $("card").hidden = $("decide").hidden = true;
  $("empty").hidden = false;
  $("empty").textContent = "Type your name under Annotator and press Start: decisions are " +
                           "recorded under that name.";
  $("annotator").focus();
}

function typingIn(target) {
  return ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) || target.isContentEditable;
}

function onKey(event) {
  if (typingIn(event.target)) return; // keys typed into a text box stay there
  const key = event.key.toLowerCase();
  if ((event.ctrlKey || event.metaKey) && key === "z" && !event.shiftKey) {
    // The browser's own undo would act on the last text box edited (the name): never.
    event.preventDefault();
    if (state.name) undo();
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey || !state.name) return;
  const actions = {
    u: undo, g: toggleGuidelines,
    ...(state.item ? {
      a: () => decide("accept"), r: () => decide("reject"), l: () => decide("relabel"),
      s: () => load(state.item.id), c: () => $("comment").focus(),
    } : {}),
  };
  if (state.item && state.keys[key]) {
    event.preventDefault();
    $("category").value = state.keys[key];
    say(`Category ${state.keys[key]} chosen: press L to relabel.`, "ok");
    return;
  }
  if (actions[key]) { event.preventDefault(); actions[key](); }
}

async function load(after) {
  if (!annotator()) { changeName(); return; }
  const query = new URLSearchParams({ annotator: annotator(), ...filters() });
  if (after) query.set("after", after);
  const data = await api("/api/next?" + query);
  showItem(data);
}

function showItem(data) {
  showProgress(data.progress, data.remaining);
  state.item = data.item;
  $("empty").hidden = Boolean(data.item);
  $("card").hidden = $("decide").hidden = !data.item;
  if (!data.item) {
    $("empty").textContent = `Nothing left for ${annotator()} with these filters.`;
    $("decide").hidden = !state.done.length;
    return;
  }
  show(data.item);
}

function showProgress(progress, remaining) {
  const mine = progress.decided_by_you;
  const total = mine + remaining;
  $("bar-done").style.width = total ? `${(100 * mine) / total}%` : "0";
  const s = progress.by_status;
  $("progress-text").textContent =
    `you: ${mine} done, ${remaining} left · all: ${s.accepted} accepted, ` +
    `${s.rejected} rejected, ${s.open} open, ${s.conflict} conflict`;
}

function show(item) {
  $("item-label").textContent = item.label;
  $("item-category").textContent = item.category || "";
  $("item-db").textContent = "database " + item.db_id + (item.db_variant ? ` (${item.db_variant})` : "");
  $("item-generator").textContent = "by " + (item.generator || "unknown") +
                                    (item.spot_check ? " · spot check" : "");
  $("item-status").textContent = `${item.status}, ${item.decisions} decision(s) so far`;
  $("item-id").textContent = item.id;
  state.spans = null;
  showQuestion();
  const trigger = item.trigger ? describeTrigger(item.trigger) : "";
  $("trigger").textContent = trigger;
  $("explanation").textContent = item.explanation || "";
  $("why").hidden = !trigger && !item.explanation;
  $("origin").hidden = !item.parent;
  $("parent-question").textContent = item.parent ? item.parent.question : "";
  $("parent-sql").textContent = item.parent ? item.parent.sql || "" : "";
  showSchema(item.schema);
  $("gold").hidden = !item.sql;
  $("sql").textContent = item.sql || "";
  showResult($("result"), item.result);
  showReadings(item);
  showCandidates(item.candidates || []);
  $("category").value = "";
  $("corrected").value = "";
  $("comment").value = "";
  say("");
}

// The trigger in one line; the readings' SQL is left out (shown side by side below).
function describeTrigger(trigger) {
  const { kind, readings, ...rest } = trigger;
  const shown = (v) => Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : v;
  const details = Object.entries(rest).map(([k, v]) => `${k} ${shown(v)}`).join(" · ");
  return (kind || "trigger") + (details ? ": " + details : "");
}

function spansNow() { return state.spans === null ? state.item.spans : state.spans; }

function showQuestion() {
  const text = state.item.question;
  const spans = [...spansNow()].sort((a, b) => a.start - b.start);
  const box = $("question");
  box.replaceChildren();
  let at = 0;
  for (const span of spans) {
    if (span.start < at) continue; // overlapping spans: show the first
    box.append(text.slice(at, span.start));
    box.append(el("mark", { className: "tag-" + span.tag, textContent: text.slice(span.start, span.end),
                            title: span.tag + (span.concept ? " → " + span.concept : "") }));
    box.lastChild.dataset.tag = span.tag;
    at = span.end;
  }
  box.append(text.slice(at));
  showSpanList(text);
}

// Each span with a button that removes only that one.
function showSpanList(text) {
  const list = $("span-list");
  list.replaceChildren();
  spansNow().forEach((span, n) => {
    const remove = el("button", { type: "button", textContent: "×",
                                  title: "remove this span", className: "remove-span" });
    remove.addEventListener("click", () => removeSpan(n));
    list.append(el("li", { textContent: `${span.tag} "${text.slice(span.start, span.end)}"` },
                   [remove]));
  });
}

function removeSpan(n) {
  const spans = [...spansNow()];
  const [gone] = spans.splice(n, 1);
  state.spans = spans;
  showQuestion();
  say(`Removed ${gone.tag} "${state.item.question.slice(gone.start, gone.end)}".`, "ok");
}

function markSelection(tag) {
  const selection = window.getSelection();
  const box = $("question");
  if (!selection.rangeCount || !box.contains(selection.anchorNode)) {
    say("Select words of the question first.", "error");
    return;
  }
  const range = selection.getRangeAt(0);
  const before = document.createRange();
  before.selectNodeContents(box);
  before.setEnd(range.startContainer, range.startOffset);
  const start = before.toString().length;
  const end = start + range.toString().length;
  if (end <= start) { say("Select words of the question first.", "error"); return; }
  state.spans = [...spansNow(), { start, end, tag }];
  selection.removeAllRanges();
  showQuestion();
  say(`Marked "${state.item.question.slice(start, end)}" as ${tag}.`, "ok");
}

function showSchema(tables) {
  const box = $("schema");
  box.replaceChildren();
  if (!tables.length) { box.append(el("span", { className: "muted", textContent: "no schema" })); return; }
  for (const table of tables) {
    const name = el("span", { className: "table-name" + (table.joined ? " joined" : ""),
                              textContent: table.name });
    const line = el("div", {}, [name]);
    for (const column of table.columns) {
      const text = column.name + (column.type ? " " + column.type.toLowerCase() : "");
      line.append(el("span", { className: "col " + (column.mark || ""), textContent: text,
                               title: column.mark || "" }));
    }
    box.append(line);
  }
}

function showResult(box, result) {
  box.replaceChildren();
  if (!result) return;
  if (result.error) {
    box.append(el("p", { className: "muted legend", textContent: "did not run: " + result.error }));
    return;
  }
  const head = el("tr", {}, result.columns.map((c) => el("th", { textContent: c })));
  const rows = result.rows.map((row) => el("tr", {}, row.map((v) =>
    el("td", { textContent: v === null ? "NULL" : String(v) }))));
  box.append(el("table", {}, [head, ...rows]));
  const shown = result.rows.length;
  box.append(el("p", { className: "muted legend",
                       textContent: `${result.row_count} row(s)` + (shown < result.row_count ? `, first ${shown} shown` : "") }));
}

// Each reading of an ambiguous item: its SQL and first rows, side by side, so that a
// reviewer sees whether they really differ.
function showReadings(item) {
  const readings = item.readings || [];
  $("readings-box").hidden = !readings.length;
  $("readings-note").textContent = item.readings_source || "";
  const box = $("readings");
  box.replaceChildren();
  for (const reading of readings) {
    const result = el("div");
    showResult(result, reading);
    box.append(el("div", { className: "reading" }, [
      el("h3", { textContent: reading.name }), el("pre", { textContent: reading.sql }), result]));
  }
}

function showCandidates(candidates) {
  $("candidates-box").hidden = !candidates.length;
  const box = $("candidates");
  box.replaceChildren();
  for (const found of candidates) {
    const about = [found.generator, found.stratum, found.error].filter(Boolean).join(" · ");
    box.append(el("div", { className: "candidate" }, [
      el("p", { className: "muted legend", textContent: about }),
      el("pre", { textContent: found.sql || "(no SQL)" })]));
  }
}

async function decide(verdict) {
  if (!state.item || !annotator()) return;
  const decision = {
    item_id: state.item.id, annotator: annotator(), verdict,
    comment: $("comment").value.trim() || null,
    question: $("corrected").value.trim() || null,
    spans: state.spans === null ? null : state.spans.map(({ start, end, tag }) => ({ start, end, tag })),
  };
  if (verdict === "relabel") {
    const category = $("category").value;
    if (!category) { say("Choose the new category first (keys 1-9), then relabel.", "error"); $("category").focus(); return; }
    decision.label = category === "answerable" ? "answerable" : null;
    decision.category = category === "answerable" ? null : category;
  }
  try {
    await api("/api/decisions", decision);
  } catch (error) {
    say(error.message, "error");
    return;
  }
  const id = state.item.id;
  state.done.push({ id, verdict });
  $("undo").disabled = false;
  await load(id);
  say(`Saved: ${verdict} on ${id}.`, "ok");
}

// Undo takes the last decision of this session back: the server appends a retraction to
// the trail (nothing is deleted) and the item is shown again.
async function undo() {
  const last = state.done[state.done.length - 1];
  if (!last) { say("Nothing to undo in this session.", "error"); return; }
  try {
    await api("/api/decisions", { item_id: last.id, annotator: annotator(), verdict: "retract" });
  } catch (error) {
    say(error.message, "error");
    return;
  }
  state.done.pop();
  $("undo").disabled = !state.done.length;
  const data = await api("/api/next?" + new URLSearchParams({ annotator: annotator(), ...filters(), item: last.id }));
  showItem(data);
  say(`Undone: ${last.verdict} on ${last.id}; decide it again.`, "ok");
}

// A page that cannot start (no or a wrong session token) says why where it can be seen.
start().catch((error) => {
  $("card").hidden = $("decide").hidden = true;
  $("empty").hidden = false;
  $("empty").textContent = error.message;
});
