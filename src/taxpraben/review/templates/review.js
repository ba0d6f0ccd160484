"use strict";
(function () {
  // Every text from the run is put on the page with textContent: never parsed as markup.
  var state = null;   // {reviewer, n, graded, next, verdicts: [{verdict, answer} | null]}
  var index = 0;
  var shown = null;   // the reading on screen
  var busy = false;
  var queued = [];    // keys pressed while busy

  function $(id) { return document.getElementById(id); }
  function setText(id, text) { $(id).textContent = text == null ? "" : String(text); }
  function fail(message) { setText("error", message); }

  function api(path, body) {
    var init = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"},
                                          body: JSON.stringify(body)};
    return fetch(path, init).then(function (r) {
      return r.json().then(function (data) {
        if (!r.ok) throw new Error(data.error || ("HTTP " + r.status));
        return data;
      });
    });
  }

  function progress() {
    $("progress").max = Math.max(state.n, 1);
    $("progress").value = state.graded;
    setText("progress-text", state.graded + " of " + state.n + " graded");
    setText("reviewer", "reviewer: " + state.reviewer);
    setText("stale", state.stale ? state.stale + " reading(s) you judged before have changed since (a rescore, new " +
            "rules or another output): your old verdicts no longer count, and they are offered again." : "");
  }

  function verdictText(v) {
    if (!v) return "";
    if (v.verdict === "wrong") return "wrong: the output gives " + (v.answer == null ? "no answer" : v.answer);
    return v.verdict;
  }

  function render(r) {
    shown = r;
    $("done").hidden = true;
    $("card").hidden = false;
    setText("where", (r.index + 1) + " of " + state.n + " · " + r.task + " · id " + r.id + " · run " + r.run +
            (r.field ? " · field " + r.field : "") + " · read by " + r.stratum);
    setText("question-text", r.question || "(the prompt is not in samples.jsonl)");
    var options = $("options");
    options.textContent = "";
    $("options-box").hidden = !r.options;
    (r.options || []).forEach(function (pair) {
      var li = document.createElement("li");
      li.textContent = pair[0] + ". " + pair[1];
      options.appendChild(li);
    });
    setText("form", r.form);
    var out = $("output");
    out.textContent = "";
    var text = r.prediction || "";
    if (r.evidence) {
      out.appendChild(document.createTextNode(text.slice(0, r.evidence[0])));
      var mark = document.createElement("mark");
      mark.textContent = text.slice(r.evidence[0], r.evidence[1]);
      out.appendChild(mark);
      out.appendChild(document.createTextNode(text.slice(r.evidence[1])));
    } else {
      out.textContent = text || "(empty output)";
    }
    var read = r.read == null
      ? "taxpraben read no answer" + (r.failure ? " (" + r.failure + (r.veto ? ", " + r.veto : "") + ")" : "")
      : "taxpraben read: " + r.read + " · by " + (r.read_by || "?") + (r.confidence ? " (" + r.confidence + " confidence)" : "");
    setText("reading", read);
    setText("verdict", r.verdict ? "Your verdict: " + verdictText(r.verdict) : "");
    $("gold").hidden = r.gold === undefined;
    setText("gold", r.gold === undefined ? "" : "Gold: " + r.gold);
    closeEntry();
    var hint = r.options ? "an option key (" + r.options.map(function (p) { return p[0]; }).join(", ") + ") or its text"
      : r.kind === "letters" ? "the letters, e.g. ACD" : r.kind === "number" ? "a number" : "the answer as written";
    setText("entry-hint", hint);
    fail("");
  }

  // While a verdict is saved or a reading loads, keys wait in order (none is lost, none acts
  // on the reading that is leaving the screen).
  function settle() {
    busy = false;
    while (!busy && queued.length) handle(queued.shift());
  }

  function show(i) {
    if (!state.n) { finished(); return Promise.resolve(); }
    busy = true;
    index = Math.max(0, Math.min(state.n - 1, i));
    return api("/api/reading/" + index).then(render).catch(function (e) { fail(e.message); }).then(settle);
  }

  function finished() {
    $("card").hidden = true;
    $("done").hidden = false;
    setText("where", "");
    setText("done", state.n ? "All " + state.n + " readings are graded. Stop the server (Ctrl-C) to write the " +
            "reports with the human figure; press ← to look back." : "Nothing to review: no reading was drawn.");
  }

  function give(verdict, answer) {
    if (busy || !shown) return;
    busy = true;
    // The answer field gives the focus back now: a key pressed while the verdict is saved goes to
    // the queue, not into a field that is about to close.
    closeEntry();
    var was = shown;
    api("/api/verdict", {index: was.index, verdict: verdict, answer: answer === undefined ? null : answer})
      .then(function (res) {
        state.verdicts[was.index] = {verdict: res.verdict, answer: res.answer};
        state.graded = res.graded;
        progress();
        setText("previous", "Previous: " + was.task + " id " + was.id + (was.field ? " " + was.field : "") +
                ": you said " + verdictText(res) + "; gold: " + res.gold);
        if (res.next == null) { finished(); settle(); return null; }
        return show(res.next);
      })
      .catch(function (e) { fail("Not saved: " + e.message); settle(); });
  }

  function openEntry() {
    if (!shown) return;
    $("entry").hidden = false;
    $("answer").value = "";
    $("answer").focus();
  }
  function closeEntry() {
    $("entry").hidden = true;
    if (document.activeElement === $("answer")) $("answer").blur();
  }

  $("answer").addEventListener("keydown", function (e) {
    if (e.key === "Enter") {
      e.preventDefault();
      var value = $("answer").value.trim();
      if (value) give("wrong", value);
      else fail("Type the answer the output gives and press Enter; if it gives none, press Esc then n.");
    } else if (e.key === "Escape") {
      e.preventDefault();
      closeEntry();
    }
    e.stopPropagation();
  });

  var KEYS = ["y", "n", "u", "w", "ArrowLeft", "b", "ArrowRight", "s", "q"];

  function handle(key) {
    var onCard = !$("card").hidden;
    if (onCard && key === "y") give("right");
    else if (onCard && key === "n") give("wrong", null);
    else if (onCard && key === "u") give("unsure");
    else if (onCard && key === "w") openEntry();
    else if (key === "ArrowLeft" || key === "b") show(onCard ? index - 1 : state.n - 1);
    else if (onCard && (key === "ArrowRight" || key === "s")) show(index + 1 < state.n ? index + 1 : 0);
    else if (onCard && key === "q") $("question").open = !$("question").open;
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || !state || KEYS.indexOf(e.key) < 0) return;
    e.preventDefault();
    if (busy) queued.push(e.key);
    else handle(e.key);
  });

  api("/api/state").then(function (s) {
    state = s;
    progress();
    if (s.next == null) finished();
    else return show(s.next);
  }).then(function () { document.body.setAttribute("data-ready", ""); })
    .catch(function (e) { fail(e.message); });
})();
