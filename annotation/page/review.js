// The review page: one item at a time, decided with buttons or keys.
// Item text is always set with textContent, never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { item: null, spans: null, meta: null, name: "", done: [], keys: {},
                fullSchema: null, seen: [], remaining: 0, armed: null, hot: {} };
const FILTERS = ["q", "db", "label", "category", "generator", "spot", "status"];

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
  return Object.fromEntries(FILTERS.map((name) => [name, $("filter-" + name).value.trim()]));
}

function annotator() { return state.name; }

function say(text, kind = "") { $("message").textContent = text; $("message").className = kind; }

async function start() {
  const meta = state.meta = await api("/api/meta");
  $("dataset").textContent = meta.dataset;
  $("policy").textContent = "policy: " + meta.policy;
  fillSelect($("filter-db"), meta.databases);
  fillSelect($("filter-label"), meta.labels);
  fillSelect($("filter-category"), meta.categories);
  fillSelect($("filter-generator"), meta.generators);
  fillSelect($("filter-status"), meta.statuses);
  setHotkeys(meta.hotkeys);
  fillCategories(meta.guidelines);
  fillGuidelines(meta.guidelines);
  $("who-form").addEventListener("submit", (event) => { event.preventDefault(); setName(); });
  $("who-change").addEventListener("click", changeName);
  for (const name of FILTERS.filter((n) => n !== "q")) {
    $("filter-" + name).addEventListener("change", () => { $("filter-" + name).blur(); filtered(); });
  }
  let typing = null;
  $("filter-q").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(filtered, 200); });
  $("filter-q").addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === "Escape") { event.preventDefault(); $("filter-q").blur(); filtered(); }
  });
  $("previous").addEventListener("click", previous);
  $("bulk-accept").addEventListener("click", () => bulk("accept"));
  $("bulk-reject").addEventListener("click", () => bulk("reject"));
  $("accept").addEventListener("click", () => decide("accept"));
  $("reject").addEventListener("click", () => decide("reject"));
  $("relabel").addEventListener("click", () => decide("relabel"));
  $("skip").addEventListener("click", () => load(state.item && state.item.id));
  $("undo").addEventListener("click", undo);
  $("guidelines-toggle").addEventListener("click", toggleGuidelines);
  $("schema-toggle").addEventListener("click", toggleSchema);
  $("schema-search").addEventListener("input", showFullSchema);
  $("run-sql").addEventListener("click", runSql);
  $("save-fix").addEventListener("click", saveCorrection);
  $("from-parent").addEventListener("click", () => {
    $("fix-sql").value = state.item.parent.sql; $("fix-sql").focus();
  });
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
  const always = { undo, guidelines: toggleGuidelines, previous,
                   search: () => $("filter-q").focus() };
  const withItem = {
    accept: () => decide("accept"), reject: () => decide("reject"),
    relabel: () => decide("relabel"), skip: () => load(state.item.id),
    comment: () => $("comment").focus(), correct: () => $("fix-sql").focus(),
    schema: toggleSchema,
  };
  const action = state.hot[key];
  const run = always[action] || (state.item && withItem[action]);
  if (state.item && state.keys[key]) {
    event.preventDefault();
    $("category").value = state.keys[key];
    say(`Category ${state.keys[key]} chosen: press L to relabel.`, "ok");
    return;
  }
  if (run) { event.preventDefault(); run(); }
}

// The keys come from the recipe (review.hotkeys), with the page's defaults.
function setHotkeys(hotkeys) {
  state.hot = Object.fromEntries(Object.entries(hotkeys).map(([action, key]) => [key.toLowerCase(), action]));
  const shown = Object.entries(hotkeys).map(([action, key]) => `${key.toUpperCase()} ${action}`);
  $("keys").textContent = "Keys (outside text boxes): " + shown.join(", ") +
    ", 1-9 choose a category, Ctrl+Z undo.";
  for (const [action, id] of [["accept", "accept"], ["reject", "reject"], ["relabel", "relabel"],
                              ["skip", "skip"], ["previous", "previous"]]) {
    const kbd = $(id).querySelector("kbd");
    if (kbd && hotkeys[action]) kbd.textContent = hotkeys[action].toUpperCase();
  }
}

// A change of filters starts over from the first matching item.
function filtered() { state.armed = null; load(); }

// Previous: the item shown before this one (decided or not), as often as there are.
async function previous() {
  const id = state.seen.pop();
  $("previous").disabled = !state.seen.length;
  if (!id) { say("No earlier item in this session.", "error"); return; }
  const data = await api("/api/next?" + new URLSearchParams({ annotator: annotator(), ...filters(), item: id }));
  showItem(data, false);
}

// Accept or reject every item the filters show that this annotator has not decided:
// the first press says how many, the second records them (one decision each, undone
// together by Undo).
async function bulk(verdict) {
  if (!annotator()) return;
  const count = state.remaining;
  if (!count) { say("No item matches these filters.", "error"); return; }
  if (state.armed !== verdict) {
    state.armed = verdict;
    say(`Press "${verdict === "accept" ? "Accept" : "Reject"} all shown" again to ${verdict} all ${count} items that match the filters.`, "error");
    return;
  }
  state.armed = null;
  let data;
  try {
    data = await api("/api/bulk", { annotator: annotator(), verdict, filters: filters() });
  } catch (error) { say(error.message, "error"); return; }
  state.done.push({ bulk: data.item_ids, verdict });
  $("undo").disabled = false;
  await load();
  say(`Saved: bulk ${verdict} of ${data.item_ids.length} items; Undo takes them all back.`, "ok");
}

async function load(after) {
  if (!annotator()) { changeName(); return; }
  const query = new URLSearchParams({ annotator: annotator(), ...filters() });
  if (after) query.set("after", after);
  const data = await api("/api/next?" + query);
  showItem(data);
}

function showItem(data, remember = true) {
  showProgress(data.progress, data.remaining);
  state.remaining = data.remaining;
  if (remember && state.item && (!data.item || data.item.id !== state.item.id)) {
    state.seen.push(state.item.id);
    $("previous").disabled = false;
  }
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
  const w = progress.awaiting;
  $("awaiting-text").textContent = `${w.items} await review: ${w.build} as the build counts ` +
    `them (open or in conflict) + ${w.spot_checks} spot checks (released as accepted meanwhile)`;
}

function show(item) {
  $("item-label").textContent = item.label;
  $("item-category").textContent = item.category || "";
  $("item-db").textContent = "database " + item.db_id + (item.db_variant ? ` (${item.db_variant})` : "");
  $("item-generator").textContent = "by " + (item.generator || "unknown") +
                                    (item.spot_check ? " · spot check" : "");
  $("item-status").textContent = `${item.status}, ${item.decisions} decision(s) so far`;
  $("item-id").textContent = item.id;
  $("yours").hidden = !item.yours;
  $("yours").textContent = item.yours ? `You decided: ${item.yours}. Decide again to change it.` : "";
  state.spans = null;
  showQuestion();
  const trigger = item.trigger ? describeTrigger(item.trigger) : "";
  $("trigger").textContent = trigger;
  $("explanation").textContent = item.explanation || "";
  $("why").hidden = !trigger && !item.explanation;
  $("origin").hidden = !item.parent;
  $("parent-question").textContent = item.parent ? item.parent.question : "";
  $("parent-sql").textContent = item.parent ? item.parent.sql || "" : "";
  showSchema($("schema"), item.schema);
  showElsewhere(item);
  state.fullSchema = null;
  $("full-schema").hidden = true;
  $("schema-toggle").setAttribute("aria-expanded", "false");
  $("fix-sql").value = item.sql || "";
  $("from-parent").hidden = !(item.parent && item.parent.sql);
  $("run-result").replaceChildren();
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

function showSchema(box, tables) {
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

// Columns elsewhere in the schema that may hold what a missing-column item asks for: the
// same check the build runs on a corrected claim.
function showElsewhere(item) {
  const found = item.elsewhere || [];
  $("elsewhere").hidden = item.category !== "missing-column";
  $("elsewhere").textContent = found.length
    ? "Columns elsewhere that may hold it: " + found.join(", ")
    : "No column elsewhere in the schema has this name or a near-synonym of it.";
}

// The whole schema of the item's database, searched by table or column name.
async function toggleSchema() {
  if (!state.item) return;
  const box = $("full-schema");
  box.hidden = !box.hidden;
  $("schema-toggle").setAttribute("aria-expanded", String(!box.hidden));
  if (box.hidden) return;
  if (!state.fullSchema) {
    state.fullSchema = await api("/api/schema?" + new URLSearchParams({ item: state.item.id }));
  }
  showFullSchema();
  $("schema-search").focus();
}

function showFullSchema() {
  if (!state.fullSchema) return;
  const words = $("schema-search").value.trim().toLowerCase();
  const hit = (name) => !words || name.toLowerCase().includes(words);
  const tables = state.fullSchema.tables
    .map((t) => hit(t.name) ? t : { ...t, columns: t.columns.filter((c) => hit(c.name)) })
    .filter((t) => t.columns.length)
    .map((t) => ({ ...t, columns: t.columns.map((c) => ({ ...c, mark: words && hit(c.name) ? "used" : null })) }));
  showSchema($("full-schema-tables"), tables);
}

// A corrected query runs on the item's database before it is saved: its first rows, or
// the error in one line.
async function runSql() {
  if (!state.item) return;
  const box = $("run-result");
  box.replaceChildren(el("p", { className: "muted", textContent: "running…" }));
  let result;
  try {
    result = await api("/api/run", { item_id: state.item.id, sql: $("fix-sql").value });
  } catch (error) {
    result = { error: error.message };
  }
  box.replaceChildren();
  if (result.error) box.append(el("p", { className: "error", textContent: result.error }));
  else showResult(box, result);
}

// A correction: the corrected question and/or SQL, with the category chosen (or
// answerable, when SQL is written for an item that is not). It is verified before it is
// kept; the reason comes back in one line when it does not verify.
function saveCorrection() {
  if (!state.item) return;
  const sql = $("fix-sql").value.trim();
  const newSql = sql && sql !== (state.item.sql || "") ? sql : null;
  if (!newSql && !$("corrected").value.trim()) {
    say("Change the question or the SQL first, then save the correction.", "error");
    return;
  }
  let category = $("category").value;
  if (!category && newSql && state.item.label !== "answerable") category = "answerable";
  decide(category ? "relabel" : "accept", { sql: newSql, category });
}

async function decide(verdict, correction = {}) {
  if (!state.item || !annotator()) return;
  const decision = {
    item_id: state.item.id, annotator: annotator(), verdict,
    comment: $("comment").value.trim() || null,
    question: $("corrected").value.trim() || null,
    sql: correction.sql || null,
    spans: state.spans === null ? null : state.spans.map(({ start, end, tag }) => ({ start, end, tag })),
  };
  if (verdict === "relabel") {
    const category = correction.category || $("category").value;
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
  const fixed = decision.sql || decision.question ? " (a correction: a new, verified item)" : "";
  say(`Saved: ${verdict} on ${id}${fixed}.`, "ok");
}

// Undo takes the last decision of this session back: the server appends a retraction to
// the trail (nothing is deleted) and the item is shown again.
async function undo() {
  const last = state.done[state.done.length - 1];
  if (!last) { say("Nothing to undo in this session.", "error"); return; }
  if (last.bulk) { await undoBulk(last); return; }
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

async function undoBulk(last) {
  let data;
  try {
    data = await api("/api/bulk-undo", { annotator: annotator(), item_ids: last.bulk });
  } catch (error) { say(error.message, "error"); return; }
  state.done.pop();
  $("undo").disabled = !state.done.length;
  await load();
  say(`Undone: bulk ${last.verdict} of ${data.item_ids.length} items.`, "ok");
}

// A page that cannot start (no or a wrong session token) says why where it can be seen.
start().catch((error) => {
  $("card").hidden = $("decide").hidden = true;
  $("empty").hidden = false;
  $("empty").textContent = error.message;
});
