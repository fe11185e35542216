// noteseek's search page. Plain JS, no dependencies, works offline.
// Note text is untrusted: in the result list it only reaches the page as text nodes (textContent,
// createTextNode). The preview shows the HTML the server rendered and sanitised (web/preview.py:
// no script, no event handlers, no javascript: links), parsed inert with DOMParser and moved in as
// nodes; the page's Content-Security-Policy forbids inline scripts besides.
"use strict";

(() => {
  const DEBOUNCE_MS = 150;
  const LIMIT = 20;
  const SNIPPET_CHARS = 260;
  const $ = (id) => document.getElementById(id);
  const q = $("q"), mode = $("mode"), folder = $("folder"), tag = $("tag");
  const since = $("since"), until = $("until"), sort = $("sort");
  const list = $("results"), status = $("status"), weaker = $("weaker");
  const previewTitle = $("preview-title"), previewCrumb = $("preview-crumb");
  const previewText = $("preview-text"), obsidian = $("obsidian-link");
  const previewImage = $("preview-image");

  const PLACEHOLDER = "Choose a result to read its section here.";
  let hits = [];
  let lastPushed = 0; // when the URL last got a history entry of its own
  let showWeaker = false; // also the hits below the relevance threshold (all=true)
  let active = -1;
  let terms = [];
  let timer = 0;
  let inflight = null;
  let generation = 0;
  let vaultName = null;
  let token = sessionStorage.getItem("noteseek-token");

  async function api(path, signal) {
    const headers = token ? { Authorization: "Bearer " + token } : {};
    const response = await fetch(path, { headers, signal });
    if (response.status === 401) {
      askToken();
      throw new Error("this server needs its token");
    }
    const body = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) {
      const error = new Error(body.error || response.statusText);
      error.body = body;
      error.status = response.status;
      throw error;
    }
    return body;
  }

  function askToken() {
    const dialog = $("token-dialog");
    if (!dialog.open) dialog.showModal();
  }

  $("token-form").addEventListener("submit", () => {
    token = $("token").value.trim();
    sessionStorage.setItem("noteseek-token", token);
    loadFilters();
    schedule(0);
  });

  // Words search leaves out of the keyword query; marking them would only add noise.
  const STOPWORDS = new Set(("a an and are as at be but by can do does for from had has have how i " +
    "if in into is it its me my no not of on or our so than that the their then there these they " +
    "this to was we were what when where which who why will with you your der die das und ist " +
    "ein eine nicht mit wie").split(" "));

  // Words of the query, for highlighting: letters and digits, two characters or more.
  function queryTerms(text) {
    const words = (text.toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) || [])
      .filter((w) => !STOPWORDS.has(w));
    return [...new Set(words)].sort((a, b) => b.length - a.length);
  }

  function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }

  // Append `text` to `parent` with every query term wrapped in <mark>, as text nodes only.
  function appendHighlighted(parent, text) {
    if (!terms.length) {
      parent.appendChild(document.createTextNode(text));
      return;
    }
    // Whole words, plus the endings stemming folds together (rebase → rebases, rebased).
    const pattern = new RegExp("(?<![\\p{L}\\p{N}_])(?:" + terms.map(escapeRegExp).join("|") +
      ")(?:s|es|ed|d|ing|er|en)?(?![\\p{L}\\p{N}_])", "giu");
    let last = 0;
    for (const match of text.matchAll(pattern)) {
      if (match.index > last) parent.appendChild(document.createTextNode(text.slice(last, match.index)));
      const mark = document.createElement("mark");
      mark.textContent = match[0];
      parent.appendChild(mark);
      last = match.index + match[0].length;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  // A window of the section around the first query term.
  function snippet(text) {
    const flat = text.replace(/\s+/g, " ").trim();
    if (flat.length <= SNIPPET_CHARS) return flat;
    const lower = flat.toLowerCase();
    let at = -1;
    for (const term of terms) {
      const i = lower.indexOf(term);
      if (i >= 0 && (at < 0 || i < at)) at = i;
    }
    let start = Math.max(0, Math.min(at < 0 ? 0 : at - 60, flat.length - SNIPPET_CHARS));
    const space = flat.indexOf(" ", start);
    if (start > 0 && space >= 0 && space < (at < 0 ? start + 20 : at)) start = space + 1;
    return (start > 0 ? "…" : "") + flat.slice(start, start + SNIPPET_CHARS) + "…";
  }

  function title(hit) {
    return hit.title || hit.path;
  }

  // Where a document's section is: "p. 12", "slide 3", "sheet Data, rows 2–21"; "" for a note.
  function place(hit) {
    const rows = hit.rows ? `rows ${hit.rows[0]}–${hit.rows[1]}` : "";
    if (hit.page != null) return "p. " + (hit.page_label || hit.page);
    if (hit.slide != null) return "slide " + hit.slide;
    if (hit.sheet != null) return "sheet " + hit.sheet + (rows ? ", " + rows : "");
    return rows;
  }

  function crumb(hit) {
    const folders = hit.path.split("/").slice(0, -1);
    const sections = hit.section.split(" › ").filter((s) => s && s !== title(hit) && s !== hit.sheet);
    return [...folders, title(hit), place(hit), ...sections].filter((s) => s).join(" › ");
  }

  // A document's part is asked for by its place; a note's by its section.
  function partQuery(hit) {
    if (hit.page != null) return "?page=" + hit.page;
    if (hit.slide != null) return "?slide=" + hit.slide;
    if (hit.sheet != null) return "?sheet=" + encodeURIComponent(hit.sheet);
    return "?section=" + encodeURIComponent(hit.section);
  }

  function render() {
    list.replaceChildren();
    hits.forEach((hit, i) => {
      const item = document.createElement("li");
      item.id = "result-" + i;
      item.setAttribute("role", "option");
      item.setAttribute("aria-selected", i === active ? "true" : "false");
      // The path line: the path in its own element (what a reader copies), the date beside it.
      const head = document.createElement("div");
      head.className = "head";
      const path = document.createElement("span");
      path.className = "path";
      path.textContent = hit.path;
      head.append(path);
      if (hit.date) {
        const when = document.createElement("time");
        when.className = "date";
        when.dateTime = hit.date;
        when.title = "date from " + hit.date_source;
        when.textContent = hit.date.slice(0, 10);
        head.append(" ", when);
      }
      const where = document.createElement("div");
      where.className = "crumb";
      where.textContent = crumb(hit);
      const text = document.createElement("p");
      text.className = "snippet";
      appendHighlighted(text, snippet(hit.text));
      item.append(head, where, text);
      item.addEventListener("click", () => { select(i); openPreview(); });
      list.appendChild(item);
    });
    q.setAttribute("aria-expanded", hits.length ? "true" : "false");
    select(hits.length ? 0 : -1);
  }

  function select(i) {
    const previous = list.children[active];
    if (previous) previous.setAttribute("aria-selected", "false");
    active = i;
    const current = list.children[active];
    if (current) {
      current.setAttribute("aria-selected", "true");
      current.scrollIntoView({ block: "nearest" });
      q.setAttribute("aria-activedescendant", current.id);
    } else {
      q.removeAttribute("aria-activedescendant");
    }
  }

  function params() {
    const p = new URLSearchParams({ q: q.value, mode: mode.value, limit: String(LIMIT) });
    if (showWeaker) p.append("all", "true");
    if (folder.value) p.append("folder", folder.value);
    for (const t of tag.value.split(/[\s,]+/)) if (t) p.append("tag", t);
    if (since.value) p.append("since", since.value);
    // A date input's value is "" until a whole valid day is entered, so a half-typed day sends nothing.
    if (until.value) p.append("until", until.value);
    if (sort.value !== "relevance") p.append("sort", sort.value);
    return p;
  }

  async function search() {
    const text = q.value.trim();
    if (inflight) inflight.abort();
    const mine = ++generation;
    if (!text) {
      hits = [];
      terms = [];
      render();
      clearPreview();
      status.textContent = "";
      weaker.hidden = true;
      remember("");
      return;
    }
    inflight = new AbortController();
    const started = performance.now();
    try {
      const body = await api("/api/search?" + params().toString(), inflight.signal);
      if (mine !== generation) return; // a newer query is on its way
      terms = queryTerms(text);
      hits = body.hits;
      render();
      remember(text);
      // A preview of a note this list no longer holds would read as one of its results.
      if (!hits.some((hit) => hit.path === previewPath)) clearPreview();
      const ms = Math.round(performance.now() - started);
      const hidden = body.hidden || 0;
      // Honest about the limit: a full page is "the best 20", not "20 notes".
      const found = hits.length >= LIMIT
        ? `The best ${hits.length} notes`
        : hits.length
          ? `${hits.length} note${hits.length === 1 ? "" : "s"}`
          : hidden ? "No confident match" : "No notes match";
      const note = hidden ? ` — ${hidden} weaker match${hidden === 1 ? "" : "es"} hidden` : "";
      status.textContent =
        found + note + ` (${ms} ms)` + dates(body.time_range) +
        (body.degraded ? ` — keyword search only: ${body.degraded}` : "");
      // The toggle shows while there is something to show or to hide again.
      weaker.hidden = !(hidden || showWeaker);
      weaker.textContent = showWeaker ? "Hide weaker matches" : "Show weaker matches";
      weaker.setAttribute("aria-pressed", showWeaker ? "true" : "false");
    } catch (error) {
      if (error.name === "AbortError" || mine !== generation) return;
      status.textContent = "Search failed: " + error.message;
    }
  }

  // " — dated 2026-11-23 to 2026-11-29 ("last week")": the days kept, and the query's phrase.
  function dates(range) {
    if (!range) return "";
    const phrase = range.phrase ? ` ("${range.phrase}")` : "";
    return ` — dated ${range.since || "any time"} to ${range.until || "now"}${phrase}`;
  }

  function schedule(delay = DEBOUNCE_MS) {
    clearTimeout(timer);
    timer = setTimeout(search, delay);
  }

  let previewing = 0;
  let previewPath = null;

  function clearPreview() {
    ++previewing; // a preview still on its way must not land after this
    previewPath = null;
    previewTitle.textContent = "Preview";
    previewCrumb.textContent = "";
    obsidian.hidden = true;
    previewImage.hidden = true;
    previewImage.removeAttribute("src");
    const p = document.createElement("p");
    p.textContent = PLACEHOLDER;
    previewText.replaceChildren(p);
  }

  // The query in the address (?q=…): a reload keeps it, back and forward step through queries.
  // Typing replaces the current entry; a query kept for a moment gets an entry of its own.
  function remember(text) {
    const url = new URL(location.href);
    if ((url.searchParams.get("q") || "") === text) return;
    if (text) url.searchParams.set("q", text); else url.searchParams.delete("q");
    const now = Date.now();
    if (now - lastPushed > 1500) history.pushState({ q: text }, "", url);
    else history.replaceState({ q: text }, "", url);
    lastPushed = now;
  }

  // The sanitised HTML of the server, parsed inert (scripts in a DOMParser document never run)
  // and moved in node by node; query words marked in its text.
  function showRendered(html) {
    const doc = new DOMParser().parseFromString(html, "text/html");
    previewText.replaceChildren(...doc.body.childNodes);
    if (!terms.length) return;
    const walker = document.createTreeWalker(previewText, NodeFilter.SHOW_TEXT);
    const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    for (const node of nodes) {
      if (node.parentElement.closest("code, pre")) continue;
      const holder = document.createElement("span");
      appendHighlighted(holder, node.textContent);
      node.replaceWith(...holder.childNodes);
    }
  }

  function noteUrl(path) {
    return "/api/notes/" + path.split("/").map(encodeURIComponent).join("/");
  }

  function setObsidian(path) {
    if (!vaultName) return;
    obsidian.href = "obsidian://open?vault=" + encodeURIComponent(vaultName) +
      "&file=" + encodeURIComponent(path.replace(/\.md$/i, ""));
    obsidian.hidden = false;
  }

  // A wiki-link in the preview opens its note there (the whole note).
  async function openLinked(path) {
    const mine = ++previewing;
    try {
      const body = await api(noteUrl(path) + "?html=true");
      if (mine !== previewing) return;
      previewPath = path;
      previewTitle.textContent = body.title || path;
      previewCrumb.textContent = path;
      previewImage.hidden = true;
      setObsidian(path);
      showRendered(body.html || "");
      $("preview").scrollTop = 0;
    } catch (error) {
      if (mine !== previewing) return;
      previewCrumb.textContent = path + " — " + error.message;
    }
  }

  previewText.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='#note=']");
    if (!link) return;
    event.preventDefault();
    openLinked(decodeURIComponent(link.getAttribute("href").slice("#note=".length)));
  });

  async function openPreview() {
    const hit = hits[active];
    if (!hit) return;
    const mine = ++previewing; // a later Enter wins even if its note arrives first
    previewPath = hit.path;
    previewTitle.textContent = title(hit);
    previewCrumb.textContent = [hit.path, place(hit), hit.section].filter((s) => s).join(" › ");
    setObsidian(hit.path);
    const url = noteUrl(hit.path);
    // An image beside the text OCR read in it, through the same path-checked route.
    previewImage.hidden = hit.kind !== "image";
    if (hit.kind === "image") {
      previewImage.src = url + "?image=true";
      previewImage.alt = "the image " + hit.path;
    } else {
      previewImage.removeAttribute("src");
    }
    let html = null, text = hit.text;
    try {
      html = (await api(url + partQuery(hit) + "&html=true")).html;
    } catch (error) {
      // A section split for length has no heading of its own: show the hit's text then.
      if (error.status !== 404) text = hit.text + "\n\n(" + error.message + ")";
    }
    if (mine !== previewing) return;
    if (html != null) {
      showRendered(html);
    } else {
      const pre = document.createElement("pre");
      appendHighlighted(pre, text);
      previewText.replaceChildren(pre);
    }
    // Focus stays in the search box, so ↑/↓ keep choosing; Tab reaches the preview to scroll it.
    $("preview").scrollTop = 0;
  }

  async function loadFilters() {
    try {
      const body = await api("/api/folders");
      vaultName = body.vault_name;
      folder.replaceChildren(new Option("All folders", ""));
      for (const f of body.folders) folder.appendChild(new Option(`${f.path} (${f.notes})`, f.path));
    } catch (error) {
      status.textContent = "Could not read the folders: " + error.message;
    }
    try {
      const body = await api("/api/tags");
      const options = $("tag-list");
      options.replaceChildren();
      for (const t of body.tags) options.appendChild(new Option(`${t.tag} (${t.notes})`, t.tag));
    } catch (error) {
      // Suggestions only: typing a tag works without them.
    }
  }

  function onKey(event) {
    if (event.key === "ArrowDown" && hits.length) {
      event.preventDefault();
      select(Math.min(active + 1, hits.length - 1));
    } else if (event.key === "ArrowUp" && hits.length) {
      event.preventDefault();
      select(Math.max(active - 1, 0));
    } else if (event.key === "Enter") {
      event.preventDefault();
      openPreview();
    } else if (event.key === "Escape") {
      clearPreview();
    }
  }

  $("search-form").addEventListener("submit", (event) => event.preventDefault());
  weaker.addEventListener("click", () => { showWeaker = !showWeaker; search(); });
  q.addEventListener("input", () => schedule());
  q.addEventListener("keydown", onKey);
  list.addEventListener("keydown", onKey);
  tag.addEventListener("input", () => schedule());
  mode.addEventListener("change", () => schedule(0));
  folder.addEventListener("change", () => schedule(0));
  since.addEventListener("change", () => schedule(0));
  until.addEventListener("change", () => schedule(0));
  sort.addEventListener("change", () => schedule(0));
  window.addEventListener("popstate", () => {
    q.value = new URL(location.href).searchParams.get("q") || "";
    lastPushed = Date.now(); // the search this starts must not push the entry back
    schedule(0);
  });
  q.value = new URL(location.href).searchParams.get("q") || q.value;
  loadFilters();
  if (q.value) schedule(0);
})();
