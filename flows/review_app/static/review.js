// The review station's page behaviour: pick a field, take a word or an alternative, accept,
// correct or reject through the JSON API (CSRF token in a header). No inline script: the CSP
// allows only this file.
(function () {
  "use strict";
  var csrf = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
  var dataEl = document.getElementById("review-data");
  if (!dataEl) {
    document.addEventListener("keydown", function (e) {
      var start = document.getElementById("start");
      if (e.key === "Enter" && start && document.activeElement.tagName !== "SELECT") { location.href = start.href; }
    });
    return;
  }
  var data = JSON.parse(dataEl.textContent);
  var items = Array.prototype.slice.call(document.querySelectorAll("li.field"));
  var active = -1;
  var result = document.getElementById("result");
  var saveBtn = document.getElementById("save");
  var acceptBtn = document.getElementById("accept");

  function fieldEl(i) { return items[i]; }
  function inputOf(i) { return items[i] ? items[i].querySelector("input.value") : null; }
  function changed() {
    var out = [];
    items.forEach(function (li, i) {
      var inp = inputOf(i);
      if (inp && inp.value !== inp.getAttribute("data-original")) { out.push(i); }
    });
    return out;
  }
  function refresh() {
    var c = changed();
    items.forEach(function (li, i) { li.classList.toggle("changed", c.indexOf(i) >= 0); });
    saveBtn.disabled = c.length === 0;
    acceptBtn.disabled = c.length > 0;
    acceptBtn.title = c.length ? "save or undo your corrections first" : "";
  }
  function select(i) {
    if (i < 0 || i >= items.length) { return; }
    active = i;
    var name = items[i].getAttribute("data-field");
    items.forEach(function (li, j) { li.classList.toggle("active", j === i); });
    document.querySelectorAll("svg .fbox").forEach(function (g) { g.classList.toggle("active", g.getAttribute("data-field") === name); });
    document.querySelectorAll("svg .alt").forEach(function (r) { r.classList.toggle("shown", r.getAttribute("data-field") === name); });
    document.body.classList.add("picking");
    items[i].scrollIntoView({block: "nearest"});
    var box = document.querySelector('svg .fbox[data-field="' + CSS.escape(name) + '"]');
    if (box && box.scrollIntoView) { box.scrollIntoView({block: "center"}); }
  }
  function setValue(i, text, append) {
    var inp = inputOf(i);
    if (!inp) { return; }
    inp.value = append && inp.value ? inp.value + " " + text : text;
    refresh();
  }
  function takeAlternative(i, j) {
    var f = data.fields[i];
    if (!f || !f.alternatives[j]) { return; }
    var v = f.alternatives[j].value;
    setValue(i, typeof v === "string" ? v : JSON.stringify(v), false);
  }
  function show(msg, isError) {
    result.textContent = msg;
    result.classList.toggle("error", !!isError);
  }
  function post(action, body) {
    body.note = document.getElementById("note").value || null;
    show("working…", false);
    return fetch("/api/doc/" + encodeURIComponent(data.sha256) + "/" + action, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (j) { return {ok: r.ok, body: j}; });
    }).then(function (r) {
      if (!r.ok) {
        show((r.body.error || "failed") + (r.body.errors ? ": " + r.body.errors.join("; ") : ""), true);
        return;
      }
      show(r.body.summary, false);
      var sep = data.next.indexOf("?") >= 0 ? "&" : "?";
      location.href = data.next + sep + "flash=" + encodeURIComponent(r.body.summary);
    }).catch(function (e) { show("request failed: " + e, true); });
  }
  function accept() { if (!acceptBtn.disabled) { post("accept", {}); } }
  function reject() { post("reject", {}); }
  function save() {
    var set = {}, unset = [];
    changed().forEach(function (i) {
      var inp = inputOf(i), name = items[i].getAttribute("data-field");
      if (inp.value.trim() === "") { unset.push(name); } else { set[name] = inp.value; }
    });
    if (!Object.keys(set).length && !unset.length) { return; }
    post("correct", {set: set, unset: unset});
  }

  items.forEach(function (li, i) {
    li.addEventListener("click", function (e) { if (!e.target.classList.contains("altbtn")) { select(i); } });
    var inp = inputOf(i);
    if (inp) {
      inp.addEventListener("input", refresh);
      inp.addEventListener("focus", function () { select(i); });
    }
    li.querySelectorAll(".altbtn").forEach(function (b) {
      b.addEventListener("click", function () { select(i); takeAlternative(i, parseInt(b.getAttribute("data-alt"), 10)); });
    });
  });
  document.querySelectorAll("svg .fbox").forEach(function (g) {
    g.addEventListener("click", function () {
      var name = g.getAttribute("data-field");
      var i = items.findIndex(function (li) { return li.getAttribute("data-field") === name; });
      select(i);
    });
  });
  document.querySelectorAll("svg .w").forEach(function (w) {
    w.addEventListener("click", function (e) {
      if (active < 0) { show("pick a field first (click it, or j/k), then click its words", true); return; }
      var page = data.pages.find(function (p) { return String(p.number) === w.getAttribute("data-page"); });
      var text = page ? page.words[parseInt(w.getAttribute("data-i"), 10)] : "";
      setValue(active, text, e.shiftKey);
    });
  });
  document.querySelectorAll("svg .alt").forEach(function (r) {
    r.addEventListener("click", function () {
      var name = r.getAttribute("data-field");
      var i = items.findIndex(function (li) { return li.getAttribute("data-field") === name; });
      takeAlternative(i, parseInt(r.getAttribute("data-alt"), 10));
    });
  });
  acceptBtn.addEventListener("click", accept);
  saveBtn.addEventListener("click", save);
  document.getElementById("reject").addEventListener("click", reject);

  document.addEventListener("keydown", function (e) {
    var typing = document.activeElement && document.activeElement.tagName === "INPUT";
    if (e.key === "Escape") { document.activeElement.blur(); return; }
    if (typing) {
      if (e.key === "Enter") { e.preventDefault(); save(); }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (e.key === "a") { e.preventDefault(); accept(); }
    else if (e.key === "s") { e.preventDefault(); save(); }
    else if (e.key === "r") { e.preventDefault(); reject(); }
    else if (e.key === "j") { e.preventDefault(); select(Math.min(items.length - 1, active + 1)); }
    else if (e.key === "k") { e.preventDefault(); select(Math.max(0, active - 1)); }
    else if (e.key === "e" && active >= 0 && inputOf(active)) { e.preventDefault(); inputOf(active).focus(); }
    else if (e.key === "n") { e.preventDefault(); location.href = document.getElementById("skip").href; }
    else if (/^[1-6]$/.test(e.key) && active >= 0) { e.preventDefault(); takeAlternative(active, parseInt(e.key, 10) - 1); }
    else if (e.key === "?") { show("a accept · s save corrections · r reject · j/k next/previous field · e edit the field · 1–6 take an alternative · click a word to take it, shift-click to add it · n next document", false); }
  });
  refresh();
  var first = items.findIndex(function (li) { return !li.classList.contains("tone-ok"); });
  if (first >= 0) { select(first); }
})();
