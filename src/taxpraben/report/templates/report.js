// The sample browser of report.html. Data comes from the JSON block and is only ever put on
// the page with textContent (never innerHTML), so model outputs render as text.
(function () {
  "use strict";
  var STATUS = { o: "ok", f: "format_failure", e: "error" };
  var byId = function (id) { return document.getElementById(id); };

  // Large reports carry the data gzip-compressed (base64) and are inflated here, off the
  // critical path; small ones carry plain JSON.
  function load() {
    var payload = JSON.parse(byId("sample-data").textContent);
    if (!payload.gzip_base64) { start(payload); return; }
    var list = byId("sample-list");
    list.textContent = "Loading samples…";
    if (typeof DecompressionStream === "undefined") {
      list.textContent = "This browser cannot inflate the embedded samples (no DecompressionStream); " +
        "use a current Chrome, Edge, Firefox or Safari, or read samples.jsonl.";
      document.body.setAttribute("data-ready", "1");
      return;
    }
    var binary = atob(payload.gzip_base64);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    new Response(stream).text().then(function (text) { start(JSON.parse(text)); }, function (err) {
      list.textContent = "Could not inflate the embedded samples: " + err;
      document.body.setAttribute("data-ready", "1");
    });
  }

  function start(data) {
  var items = data.items;
  var reviewedOtherwise = {};  // (task, id) a person read otherwise (taxpraben review)
  var reviewBlock = byId("review-data");
  (reviewBlock ? JSON.parse(reviewBlock.textContent) : []).forEach(function (key) {
    reviewedOtherwise[key[0] + "\u0000" + key[1]] = true;
  });

  items.forEach(function (item) {
    var scores = [];
    item.r.forEach(function (run) { if (typeof run.s === "number") scores.push(run.s); });
    item.mean = scores.length ? scores.reduce(function (a, b) { return a + b; }, 0) / scores.length : null;
    item.spread = scores.length ? Math.max.apply(null, scores) - Math.min.apply(null, scores) : 0;
    item.statuses = item.r.map(function (run) { return STATUS[run.st] || "ok"; });
    item.truncated = item.r.some(function (run) { return run.tr === 1; });
    item.judgeDisagrees = item.r.some(function (run) { return run.ja === 0; });  // --judge-audit
    item.reviewWrong = reviewedOtherwise[data.tasks[item.t] + "\u0000" + item.i] === true;
  });

  function prediction(item, k) {
    var p = item.r[k].p;
    return typeof p === "number" ? (item.r[p] ? item.r[p].p : "") : p;
  }
  function cutOf(item, k) {
    var p = item.r[k].p;
    return typeof p === "number" ? (item.r[p] ? item.r[p].pc : 0) : item.r[k].pc;
  }
  function haystack(item) {
    if (item.hay === undefined) {
      var parts = [data.tasks[item.t], item.i, item.g || "", item.q || ""];
      item.r.forEach(function (run, k) {
        parts.push(prediction(item, k) || "", run.x || "", run.e || "", run.w || "");
        (run.f || []).forEach(function (f) { parts.push(f[0], f[1] == null ? "" : String(f[1])); });
      });
      item.hay = parts.join("\n").toLowerCase();
    }
    return item.hay;
  }

  var state = { task: "", status: "", min: null, max: null, q: "", sort: "id", page: 0, size: 25 };
  var current = items;

  function number(value) {
    var v = parseFloat(value);
    return isNaN(v) ? null : v;
  }
  function matches(item) {
    if (state.task && data.tasks[item.t] !== state.task) return false;
    if (state.status === "ok" && item.statuses.some(function (s) { return s !== "ok"; })) return false;
    if ((state.status === "format_failure" || state.status === "error") && item.statuses.indexOf(state.status) < 0) return false;
    if (state.status === "disagree" && !(item.spread > 1e-9)) return false;
    if (state.status === "truncated" && !item.truncated) return false;
    if (state.status === "judge_disagree" && !item.judgeDisagrees) return false;
    if (state.status === "review_wrong" && !item.reviewWrong) return false;
    if (state.min !== null && (item.mean === null || item.mean < state.min - 1e-12)) return false;
    if (state.max !== null && (item.mean === null || item.mean > state.max + 1e-12)) return false;
    if (state.q && haystack(item).indexOf(state.q) < 0) return false;
    return true;
  }
  function sortKey(a, b) {
    var ma = a.mean === null ? -1 : a.mean, mb = b.mean === null ? -1 : b.mean;
    if (state.sort === "low") return ma - mb;
    if (state.sort === "high") return mb - ma;
    if (state.sort === "spread") return b.spread - a.spread;
    return 0;
  }
  function refresh(keepPage) {
    current = items.filter(matches);
    if (state.sort !== "id") current = current.slice().sort(sortKey);
    if (!keepPage) state.page = 0;
    render();
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function fmt(v) { return typeof v === "number" ? v.toFixed(3) : "n/c"; }
  function textBlock(label, text, cut, note) {
    var block = el("div", "block");
    block.appendChild(el("div", "lbl", label));
    block.appendChild(el("div", "text", text === null || text === undefined ? "(none)" : text));
    if (cut) block.appendChild(el("div", "cut", "… " + cut + " more characters cut here; " + (note || "the full text is in samples.jsonl")));
    return block;
  }
  // The prediction with the span the reading came from marked (text nodes only: an output
  // holding markup stays text).
  function predictionBlock(p, ev, fe) {
    if (p === null || p === undefined) return el("div", "text prediction", "(no prediction)");
    var block = el("div", "text prediction");
    // a fields task: each field's own span (fe: [start, end, field]); else the reading's (ev)
    var spans = fe ? fe : (ev ? [[ev[0], ev[1], null]] : []);
    var at = 0;
    spans.forEach(function (s) {
      if (s[0] < at || s[0] >= p.length) return;
      var end = Math.min(s[1], p.length);
      block.appendChild(document.createTextNode(p.slice(at, s[0])));
      var mark = el("mark", "evidence", p.slice(s[0], end));
      mark.title = (s[2] ? "field " + s[2] + " read here" : "the reading's evidence") + ": characters " + s[0] + "–" + end;
      block.appendChild(mark);
      at = end;
    });
    block.appendChild(document.createTextNode(p.slice(at)));
    return block;
  }
  function runColumn(item, k) {
    var run = item.r[k];
    var box = el("div", "run");
    box.setAttribute("data-status", STATUS[run.st] || "ok");
    var head = el("div", "rh");
    head.appendChild(el("strong", null, "Run " + run.n));
    if (run.cp === 1) head.appendChild(el("span", "badge f", "copy of the prompt (scored as text)"));
    else head.appendChild(el("span", "badge " + run.st, STATUS[run.st] || "ok"));
    if (run.tr === 1) head.appendChild(el("span", "badge cut", "cut at max tokens"));
    if (run.w) head.appendChild(el("span", "why", run.w));  // why a format failure was not read
    if (run.by === "judge") head.appendChild(el("span", "badge", "read by the judge"));
    if (run.rb) head.appendChild(el("span", "badge rule" + (run.cf === "low" ? " low" : ""),
      run.rb.replace(/^rule:/, "rule ") + (run.cf ? " (" + run.cf + ")" : "")));
    if (run.vt) head.appendChild(el("span", "badge rule veto", run.vt));
    if (run.ja === 0) head.appendChild(el("span", "badge cut", "rule and judge disagree"));
    head.appendChild(el("span", null, "score " + fmt(run.s)));
    box.appendChild(head);
    if (run.sc) {
      var parts = [];
      Object.keys(run.sc).forEach(function (m) { parts.push(m + " " + fmt(run.sc[m])); });
      box.appendChild(el("div", "kv", parts.join(" · ")));
    }
    if (run.e) box.appendChild(el("div", "kv", "error: " + run.e));
    if (run.x !== undefined || item.r.some(function (r) { return r.x !== undefined; })) {
      box.appendChild(el("div", "lbl", "extracted"));
      box.appendChild(el("div", "text extracted", run.x === undefined ? "(nothing)" : run.x));
      if (run.xc) box.appendChild(el("div", "cut", "… " + run.xc + " more characters cut"));
    }
    if (run.jr !== undefined) {  // the judge's raw reply and, audited, its reading
      box.appendChild(el("div", "lbl", "judge"));
      box.appendChild(el("div", "text extracted", run.jr + (run.ja !== undefined ? "  →  " + (run.jx === undefined ? "(nothing)" : run.jx) : "")));
      if (run.jn) box.appendChild(el("span", "why", "not grounded: " + run.jn));  // its quote was no evidence
    }
    if (run.f) {
      var table = el("table", "fields");
      var hr = el("tr");
      ["field", "pred", "gold", "score", "status"].forEach(function (h) { hr.appendChild(el("th", null, h)); });
      table.appendChild(hr);
      run.f.forEach(function (f) {
        var tr = el("tr");
        tr.appendChild(el("td", null, f[0]));
        tr.appendChild(el("td", null, f[1] == null ? "(missing)" : f[1]));
        tr.appendChild(el("td", null, f[2] == null ? "" : f[2]));
        tr.appendChild(el("td", null, fmt(f[3])));
        tr.appendChild(el("td", null, f[4] || ""));
        table.appendChild(tr);
      });
      box.appendChild(table);
    }
    box.appendChild(el("div", "lbl", typeof run.p === "number" ? "prediction (same as run " + item.r[run.p].n + ")" : "prediction"));
    var p = prediction(item, k);
    box.appendChild(predictionBlock(p, run.ev, run.fe));
    var cut = cutOf(item, k);
    if (cut) box.appendChild(el("div", "cut", "… " + cut + " more characters cut here; the full text is in samples.jsonl"));
    return box;
  }
  function card(item) {
    var box = el("div", "card");
    box.setAttribute("data-task", data.tasks[item.t]);
    box.setAttribute("data-id", item.i);
    var head = el("div", "head");
    head.appendChild(el("span", "title", data.tasks[item.t] + " #" + item.i));
    head.appendChild(el("span", null, "mean item score " + fmt(item.mean)));
    if (item.spread > 1e-9) head.appendChild(el("span", "kv", "spread over runs " + item.spread.toFixed(3)));
    var counts = {};
    item.statuses.forEach(function (s) { counts[s] = (counts[s] || 0) + 1; });
    head.appendChild(el("span", "kv", Object.keys(counts).map(function (s) { return s + " ×" + counts[s]; }).join(", ")));
    box.appendChild(head);
    if (item.q !== undefined) box.appendChild(textBlock("query", item.q, item.qc));
    box.appendChild(textBlock("gold", item.g, item.gc));
    var runs = el("div", "runs");
    runs.style.setProperty("--n", String(item.r.length));
    item.r.forEach(function (_, k) { runs.appendChild(runColumn(item, k)); });
    box.appendChild(runs);
    return box;
  }
  function render() {
    var list = byId("sample-list");
    while (list.firstChild) list.removeChild(list.firstChild);
    var pages = Math.max(1, Math.ceil(current.length / state.size));
    state.page = Math.min(state.page, pages - 1);
    var start = state.page * state.size;
    current.slice(start, start + state.size).forEach(function (item) { list.appendChild(card(item)); });
    if (!current.length) list.appendChild(el("div", "empty", "No sample matches these filters."));
    byId("p-info").textContent = "page " + (state.page + 1) + " of " + pages;
    byId("p-count").textContent = current.length + " of " + items.length + " items (" +
      current.reduce(function (n, item) { return n + item.r.length; }, 0) + " samples)";
    ["p-prev", "p-prev2"].forEach(function (id) { byId(id).disabled = state.page === 0; });
    ["p-next", "p-next2"].forEach(function (id) { byId(id).disabled = state.page >= pages - 1; });
  }

  var timer = null;
  function readControls() {
    clearTimeout(timer);  // a pending search keystroke must not reset the page later
    state.task = byId("f-task").value;
    state.status = byId("f-status").value;
    state.min = number(byId("f-min").value);
    state.max = number(byId("f-max").value);
    state.q = byId("f-search").value.trim().toLowerCase();
    state.sort = byId("f-sort").value;
    state.size = parseInt(byId("f-size").value, 10) || 25;
    refresh(false);
  }
  ["f-task", "f-status", "f-sort", "f-size", "f-min", "f-max"].forEach(function (id) {
    byId(id).addEventListener("change", readControls);
  });
  byId("f-search").addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(readControls, 200);
  });
  byId("f-search").addEventListener("search", readControls);
  byId("f-reset").addEventListener("click", function () {
    ["f-task", "f-status", "f-min", "f-max", "f-search"].forEach(function (id) { byId(id).value = ""; });
    byId("f-sort").value = "id";
    readControls();
  });
  function turn(delta) {
    return function () { state.page += delta; render(); byId("samples").scrollIntoView(); };
  }
  byId("p-prev").addEventListener("click", turn(-1));
  byId("p-prev2").addEventListener("click", turn(-1));
  byId("p-next").addEventListener("click", turn(1));
  byId("p-next2").addEventListener("click", turn(1));
  Array.prototype.forEach.call(document.querySelectorAll("a.task-link[data-task]"), function (link) {
    link.addEventListener("click", function () {
      var task = link.getAttribute("data-task");
      if (data.tasks.indexOf(task) < 0) return;
      byId("f-task").value = task;
      readControls();
      byId("samples").scrollIntoView();
    });
  });
  refresh(false);
  document.body.setAttribute("data-ready", "1");
  }

  load();
})();
