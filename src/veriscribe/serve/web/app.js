// The veriscribe page: asks the API on this server, and nothing else.
// Text that came from the server (answers, quotes, sections, abstracts) is always set as
// text, never as HTML.
"use strict";

const BADGES = {
  certified: "certified",
  recovered: "recovered",
  partial: "flagged",
  unsupported: "flagged",
  uncited: "flagged",
  unjudged: "not-checked",
};
const BADGE_TEXT = {
  certified: "certified",
  recovered: "recovered",
  flagged: "flagged",
  "not-checked": "not checked",
  pending: "checking",
};
const STAGE_TEXT = {
  retrieve: "Choosing the sections to read",
  answer: "Writing the answer",
  filter_claims: "Picking out the claims",
  verify: "Checking each quote against its section",
  judge: "Judging whether each quote supports its claim",
  recover: "Looking for support elsewhere",
  join: "Deciding each claim's badge",
  present: "Putting the answer together",
};

const $ = (id) => document.getElementById(id);

// --------------------------------------------------------------------------- API calls

function headers(extra) {
  const result = Object.assign({}, extra || {});
  const token = $("token").value.trim();
  if (token) result.Authorization = "Bearer " + token;
  return result;
}

async function problemOf(response) {
  try {
    const body = await response.json();
    if (body && body.detail) return body.detail;
  } catch (_) {
    // not JSON: the status line says enough
  }
  if (response.status === 401) return "this server needs its token (API token, above)";
  return response.status + " " + response.statusText;
}

async function api(path, options) {
  const opts = Object.assign({}, options || {});
  opts.headers = headers(opts.headers);
  const response = await fetch(path, opts);
  if (!response.ok) throw new Error(await problemOf(response));
  return response;
}

// Server-sent events read from a fetch response (EventSource cannot send a token).
async function* events(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      let name = "message";
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) yield { event: name, data: data.join("\n") };
    }
  }
}

function say(element, text, isError) {
  element.textContent = text;
  element.classList.toggle("error", Boolean(isError));
}

// -------------------------------------------------------------------------------- tabs

function showTab(name) {
  for (const tab of ["ask", "abstracts"]) {
    $(tab).hidden = tab !== name;
    $("tab-" + tab).setAttribute("aria-selected", String(tab === name));
  }
}

// ------------------------------------------------------------------------------ answers

const same = (text) => text.replace(/\{\{cite:[^}]*\}\}/g, "").replace(/\s+/g, " ").trim();

let asked = null; // { corpus, sentences: [{ text, item }], result }

function setBadge(item, badge, title) {
  const span = item.querySelector(".badge");
  span.dataset.badge = badge;
  span.textContent = BADGE_TEXT[badge];
  span.title = title || "";
  item.dataset.badge = badge;
}

function claimItem(text) {
  const item = document.createElement("li");
  item.className = "claim";
  const badge = document.createElement("span");
  badge.className = "badge";
  item.append(badge, document.createElement("span"));
  item.lastChild.className = "text";
  item.lastChild.textContent = text;
  setBadge(item, "pending");
  $("claims").append(item);
  return item;
}

// One stage event (the StageEvent schema of /openapi.json): a step of the answer done.
function onStage(event) {
  say($("ask-status"), (STAGE_TEXT[event.stage] || "Working") + "…");
  if (event.read_set && event.read_set.length) {
    $("reading").textContent = "Reading: " + event.read_set.join(", ");
  }
  if (event.stage === "answer" && !asked.sentences.length) {
    for (const text of event.sentences) {
      asked.sentences.push({ text, item: claimItem(text) });
    }
  }
  if (event.stage === "filter_claims") {
    event.is_claim.forEach((claim, i) => {
      const known = asked.sentences[i];
      if (known && !claim) setBadge(known.item, "not-checked", "not a claim");
    });
  }
  for (const claim of event.claims || []) {
    const known = asked.sentences[claim.sentence];
    // Before the judge has run, every claim is still unjudged: not yet a badge.
    if (!known || (claim.status === "unjudged" && event.stage === "verify")) continue;
    setBadge(known.item, BADGES[claim.status] || "flagged", claim.status);
  }
}

function itemFor(text) {
  const wanted = same(text);
  const found = asked.sentences.find((s) => !s.used && same(s.text) === wanted);
  if (found) {
    found.used = true;
    return found.item;
  }
  return claimItem(text);
}

function showAnswer(result) {
  asked.result = result;
  if (result.error) {
    say($("ask-status"), "No answer: " + result.error, true);
    return;
  }
  // The lead is read from the certified quote's own words, never written by a model.
  $("lead").hidden = !result.lead;
  $("lead").textContent = result.lead ? result.lead.text : "";
  const nearest = result.nearest || [];
  $("nearest").hidden = !nearest.length;
  $("nearest").textContent = nearest.length
    ? "Nearest sections, where to look: " +
      nearest.map((s) => (s.title ? `${s.title} (${s.key})` : s.key)).join("; ")
    : "";
  if (result.not_found) {
    say($("ask-status"), "The corpus does not answer this question.");
  } else {
    const n = result.claims.length;
    say($("ask-status"), `Answered: ${n} claim${n === 1 ? "" : "s"} checked.`);
  }
  for (const claim of result.claims) {
    const item = itemFor(claim.text);
    item.querySelector(".text").textContent =
      (claim.lead ? claim.lead.text + ": " : "") + claim.text + " ";
    setBadge(item, BADGES[claim.status] || "flagged", claim.status);
    for (const citation of claim.citations) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "cite";
      button.textContent = `[${citation.n}]`;
      button.title = `${citation.doc_id}:${citation.section_id}`;
      button.addEventListener("click", () => openCitation(citation));
      item.append(button);
    }
    if (claim.note) {
      const note = document.createElement("span");
      note.className = "note";
      note.textContent = claim.note;
      item.append(note);
    }
  }
  for (const text of result.not_checked) setBadge(itemFor(text), "not-checked", "not a claim");
  for (const left of asked.sentences) {
    if (!left.used && left.item.dataset.badge === "pending") {
      setBadge(left.item, "not-checked", "not checked");
    }
  }
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// Where a citation's passage is in its section: [start, end], or null.
function locate(text, citation) {
  for (const wanted of [citation.source, citation.quote]) {
    if (!wanted) continue;
    const at = text.indexOf(wanted);
    if (at >= 0) return [at, at + wanted.length];
    const words = wanted.split(/\s+/).filter(Boolean).map(escapeRegExp);
    if (!words.length) continue;
    const match = new RegExp(words.join("\\s+"), "i").exec(text);
    if (match) return [match.index, match.index + match[0].length];
  }
  return null;
}

async function openCitation(citation) {
  const key = `${citation.doc_id}:${citation.section_id}`;
  const path = `/v1/corpora/${encodeURIComponent(asked.corpus)}/sections/${key
    .split("/")
    .map(encodeURIComponent)
    .join("/")}`;
  const panel = $("section");
  const body = $("section-text");
  try {
    const section = await (await api(path)).json();
    $("section-title").textContent = [section.number, section.title].filter(Boolean).join(" ");
    $("section-key").textContent = `[${citation.n}] ${key} · quote ${citation.tier}`;
    body.replaceChildren();
    const where = locate(section.text, citation);
    if (where) {
      const mark = document.createElement("mark");
      mark.textContent = section.text.slice(where[0], where[1]);
      body.append(section.text.slice(0, where[0]), mark, section.text.slice(where[1]));
      panel.hidden = false;
      mark.scrollIntoView({ block: "center" });
    } else {
      body.append(section.text);
      $("section-key").textContent += " · the quote is not in this section";
      panel.hidden = false;
    }
  } catch (error) {
    say($("ask-status"), "Could not open the section: " + error.message, true);
  }
}

async function ask(event) {
  event.preventDefault();
  const corpus = $("corpus").value;
  const question = $("question").value.trim();
  if (!corpus || !question) return;
  asked = { corpus, sentences: [], result: null };
  $("claims").replaceChildren();
  $("reading").textContent = "";
  $("lead").hidden = true;
  $("nearest").hidden = true;
  $("section").hidden = true;
  $("ask-button").disabled = true;
  say($("ask-status"), "Waiting for a free slot…");
  try {
    const response = await api("/v1/answers", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ question, corpus }),
    });
    for await (const message of events(response)) {
      const data = JSON.parse(message.data);
      if (message.event === "stage") onStage(data);
      else if (message.event === "answer") showAnswer(data);
      else if (message.event === "error") say($("ask-status"), data.detail, true);
    }
    if (!asked.result && !$("ask-status").classList.contains("error")) {
      say($("ask-status"), "The answer stream ended early; ask again.", true);
    }
  } catch (error) {
    say($("ask-status"), error.message, true);
  } finally {
    $("ask-button").disabled = false;
  }
}

async function loadCorpora() {
  const select = $("corpus");
  try {
    const corpora = await (await api("/v1/corpora")).json();
    const chosen = select.value;
    select.replaceChildren();
    for (const corpus of corpora) {
      const option = document.createElement("option");
      option.value = corpus.name;
      option.textContent = `${corpus.name} (${corpus.documents} documents)`;
      select.append(option);
    }
    if (chosen) select.value = chosen;
    if (!corpora.length) say($("ask-status"), "No corpus yet: add one with `veriscribe corpus add`.");
    else if ($("ask-status").classList.contains("error")) say($("ask-status"), "");
  } catch (error) {
    say($("ask-status"), "Could not list the corpora: " + error.message, true);
  }
}

// ---------------------------------------------------------------------------- abstracts

let shown = new Set();

function showResults(lines) {
  for (const line of lines) {
    const id = line.source + "#" + line.id;
    if (shown.has(id)) continue;
    shown.add(id);
    const article = document.createElement("article");
    article.className = "article";
    const title = document.createElement("h3");
    title.textContent = line.title || line.id;
    article.append(title);
    const text = document.createElement("p");
    text.className = "abstract";
    if (line.error) {
      text.textContent = "Failed: " + line.error;
      text.classList.add("error");
    } else {
      text.textContent = line.abstract;
    }
    article.append(text);
    const facets = document.createElement("ul");
    facets.className = "facets";
    for (const facet of line.facets || []) {
      const item = document.createElement("li");
      item.textContent = `${facet.name}: ${facet.status}`;
      facets.append(item);
    }
    article.append(facets);
    $("results").append(article);
  }
}

async function fetchResults(runId) {
  showResults(await (await api(`/v1/runs/${encodeURIComponent(runId)}/results`)).json());
}

function showProgress(progress) {
  const bar = $("run-progress");
  bar.hidden = false;
  bar.max = Math.max(progress.total, 1);
  bar.value = progress.done + progress.failed;
  say(
    $("run-status"),
    `${progress.status}: ${progress.done} done, ${progress.failed} failed, ` +
      `${progress.running} in progress, ${progress.pending} waiting of ${progress.total}`,
  );
}

async function writeAbstracts(event) {
  event.preventDefault();
  const files = $("article").files;
  if (!files.length) return;
  const form = new FormData();
  for (const file of files) form.append("files", file, file.name);
  shown = new Set();
  $("results").replaceChildren();
  $("abstract-button").disabled = true;
  say($("run-status"), "Uploading…");
  try {
    const run = await (await api("/v1/abstracts", { method: "POST", body: form })).json();
    say($("run-status"), `Run ${run.run_id}: ${run.status}`);
    if (run.status === "finished") {
      await fetchResults(run.run_id);
      return;
    }
    const response = await api(run.location + "/events", {
      headers: { Accept: "text/event-stream" },
    });
    let finished = 0;
    for await (const message of events(response)) {
      const data = JSON.parse(message.data);
      showProgress(data);
      if (data.done + data.failed > finished || message.event === "run") {
        finished = data.done + data.failed;
        await fetchResults(run.run_id);
      }
    }
  } catch (error) {
    say($("run-status"), error.message, true);
  } finally {
    $("abstract-button").disabled = false;
  }
}

// -------------------------------------------------------------------------------- start

function start() {
  $("token").value = sessionStorage.getItem("veriscribe-token") || "";
  $("token").addEventListener("change", () => {
    sessionStorage.setItem("veriscribe-token", $("token").value.trim());
    loadCorpora();
  });
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    $("token").dispatchEvent(new Event("change"));
  });
  $("tab-ask").addEventListener("click", () => showTab("ask"));
  $("tab-abstracts").addEventListener("click", () => showTab("abstracts"));
  $("ask-form").addEventListener("submit", ask);
  $("abstract-form").addEventListener("submit", writeAbstracts);
  loadCorpora();
}

start();
