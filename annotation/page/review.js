// The review page: one item at a time, decided with buttons or keys.
// Item text is always set with textContent, never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { item: null, spans: null, meta: null };

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
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

function annotator() { return $("annotator").value.trim(); }

function say(text, kind = "") { $("message").textContent = text; $("message").className = kind; }

async function start() {
  const meta = state.meta = await api("/api/meta");
  $("dataset").textContent = meta.dataset;
  $("policy").textContent = "policy: " + meta.policy;
  fillSelect($("filter-db"), meta.databases);
  fillSelect($("filter-category"), meta.categories);
  fillSelect($("filter-status"), meta.statuses);
  const category = $("category");
  category.append(el("option", { value: "", textContent: "choose…" }));
  category.append(el("option", { value: "answerable", textContent: "answerable (no category)" }));
  for (const [label, cats] of Object.entries(meta.taxonomy)) {
    if (!cats.length) continue;
    const group = el("optgroup", { label });
    for (const c of cats) group.append(el("option", { value: c, textContent: c }));
    category.append(group);
  }
  $("annotator").value = localStorage.getItem("answerable.annotator") || "";
  // After a change, leave the control so the decision keys work at once.
  $("annotator").addEventListener("change", () => {
    localStorage.setItem("answerable.annotator", annotator());
    $("annotator").blur();
    load();
  });
  for (const id of ["filter-db", "filter-category", "filter-status"]) {
    $(id).addEventListener("change", () => { $(id).blur(); load(); });
  }
  $("accept").addEventListener("click", () => decide("accept"));
  $("reject").addEventListener("click", () => decide("reject"));
  $("relabel").addEventListener("click", () => decide("relabel"));
  $("skip").addEventListener("click", () => load(state.item && state.item.id));
  $("clear-spans").addEventListener("click", () => { state.spans = []; showQuestion(); });
  for (const button of document.querySelectorAll(".spans-edit [data-tag]")) {
    button.addEventListener("click", () => markSelection(button.dataset.tag));
  }
  document.addEventListener("keydown", onKey);
  await load();
}

function onKey(event) {
  const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(event.target.tagName);
  if (typing || event.ctrlKey || event.metaKey || event.altKey || !state.item) return;
  const key = event.key.toLowerCase();
  const actions = {
    a: () => decide("accept"), r: () => decide("reject"), l: () => decide("relabel"),
    s: () => load(state.item.id), c: () => $("comment").focus(),
  };
  if (actions[key]) { event.preventDefault(); actions[key](); }
}

async function load(after) {
  if (!annotator()) {
    $("card").hidden = $("decide").hidden = true;
    $("empty").hidden = false;
    $("empty").textContent = "Type your name under Annotator to start reviewing.";
    $("annotator").focus();
    return;
  }
  const query = new URLSearchParams({ annotator: annotator(), ...filters() });
  if (after) query.set("after", after);
  const data = await api("/api/next?" + query);
  showProgress(data.progress, data.remaining);
  state.item = data.item;
  $("empty").hidden = Boolean(data.item);
  $("card").hidden = $("decide").hidden = !data.item;
  if (!data.item) {
    $("empty").textContent = `Nothing left for ${annotator()} with these filters.`;
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
  $("item-generator").textContent = "by " + (item.generator || "unknown");
  $("item-status").textContent = `${item.status}, ${item.decisions} decision(s) so far`;
  $("item-id").textContent = item.id;
  state.spans = null;
  showQuestion();
  $("trigger").textContent = "";
  const trigger = item.trigger ? describeTrigger(item.trigger) : "";
  $("trigger").textContent = trigger;
  $("explanation").textContent = item.explanation || "";
  $("why").hidden = !trigger && !item.explanation;
  showSchema(item.schema);
  $("gold").hidden = !item.sql;
  $("sql").textContent = item.sql || "";
  showResult(item.result);
  $("category").value = "";
  $("corrected").value = "";
  $("comment").value = "";
  say("");
}

function describeTrigger(trigger) {
  const { kind, ...rest } = trigger;
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
    const line = el("div", {}, [el("span", { className: "table-name", textContent: table.name })]);
    for (const column of table.columns) {
      const text = column.name + (column.type ? " " + column.type.toLowerCase() : "");
      line.append(el("span", { className: "col " + (column.mark || ""), textContent: text,
                               title: column.mark || "" }));
    }
    box.append(line);
  }
}

function showResult(result) {
  const box = $("result");
  box.replaceChildren();
  if (!result) return;
  const head = el("tr", {}, result.columns.map((c) => el("th", { textContent: c })));
  const rows = result.rows.map((row) => el("tr", {}, row.map((v) =>
    el("td", { textContent: v === null ? "NULL" : String(v) }))));
  box.append(el("table", {}, [head, ...rows]));
  const shown = result.rows.length;
  box.append(el("p", { className: "muted legend",
                       textContent: `${result.row_count} row(s)` + (shown < result.row_count ? `, first ${shown} shown` : "") }));
}

async function decide(verdict) {
  if (!state.item) return;
  const decision = {
    item_id: state.item.id, annotator: annotator(), verdict,
    comment: $("comment").value.trim() || null,
    question: $("corrected").value.trim() || null,
    spans: state.spans === null ? null : state.spans.map(({ start, end, tag }) => ({ start, end, tag })),
  };
  if (verdict === "relabel") {
    const category = $("category").value;
    if (!category) { say("Choose the new category first, then relabel.", "error"); $("category").focus(); return; }
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
  await load(id);
  say(`Saved: ${verdict} on ${id}.`, "ok");
}

start().catch((error) => say(String(error), "error"));
