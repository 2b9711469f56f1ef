// The script of `toolscore view`'s own pages (the list of runs, and the bar above one run's
// report). Everything from a run reaches the document through textContent only.
(function () {
  "use strict";
  var POLL_LIST = 3000; // ms between two reads of the list
  var POLL_RUN = 2000; // ms between two reads of a run's state

  function el(tag, cls, content) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (content !== undefined && content !== null) { e.textContent = String(content); }
    return e;
  }
  function getJSON(url) {
    return fetch(url, { cache: "no-store" }).then(function (r) {
      if (!r.ok) { throw new Error(url + ": HTTP " + r.status); }
      return r.json();
    });
  }
  function figure(h) {
    if (!h || h.value === null || h.value === undefined) { return ""; }
    var v = typeof h.value === "number"
      ? (h.kind === "rate" ? (100 * h.value).toFixed(1) + "%" : h.value.toPrecision(4))
      : String(h.value);
    return h.label + " " + v;
  }
  function samples(r) {
    var s = r.done + " / " + (r.total === null ? "?" : r.total);
    return r.errors ? s + " (" + r.errors + " errors)" : s;
  }
  function runUrl(id) { return "/run?id=" + encodeURIComponent(id); }

  // -- the list of runs ------------------------------------------------------------------
  function listPage() {
    var rows = [];
    var sortKey = "created";
    var sortDir = -1;
    var sel = {
      benchmark: document.getElementById("f-benchmark"),
      model: document.getElementById("f-model"),
      status: document.getElementById("f-status")
    };
    var textBox = document.getElementById("f-text");
    var tbody = document.querySelector("#runs tbody");
    var count = document.getElementById("f-count");

    function fill(select, values) {
      var keep = select.value;
      while (select.options.length > 1) { select.remove(1); }
      values.forEach(function (v) {
        var o = document.createElement("option");
        o.value = v;
        o.textContent = v;
        select.appendChild(o);
      });
      select.value = values.indexOf(keep) >= 0 ? keep : "";
    }
    function distinct(key) {
      var seen = {};
      rows.forEach(function (r) { if (r[key]) { seen[r[key]] = true; } });
      return Object.keys(seen).sort();
    }
    function sortValue(r) {
      if (sortKey === "value") { return r.headline ? r.headline.value : null; }
      return r[sortKey];
    }
    function compare(a, b) {
      var x = sortValue(a);
      var y = sortValue(b);
      if (x === y) { return 0; }
      if (x === null || x === undefined) { return 1; }
      if (y === null || y === undefined) { return -1; }
      return (x < y ? -1 : 1) * sortDir;
    }
    function row(r) {
      var tr = el("tr");
      tr.dataset.id = r.id;
      tr.appendChild(el("td", "l", r.benchmark || "?"));
      tr.appendChild(el("td", "l", r.model || "?"));
      tr.appendChild(el("td", "l", r.mode || ""));
      var st = el("td", "l");
      st.appendChild(el("span", "status " + r.status, r.status));
      tr.appendChild(st);
      tr.appendChild(el("td", null, samples(r)));
      tr.appendChild(el("td", "headline", r.error ? "" : figure(r.headline)));
      tr.appendChild(el("td", "l", r.created || ""));
      var link = el("td", "l path");
      var a = el("a", null, r.id);
      a.href = runUrl(r.id);
      link.appendChild(a);
      if (r.error) { link.appendChild(el("div", "bad", r.error)); }
      tr.appendChild(link);
      return tr;
    }
    function show() {
      var q = textBox.value.trim().toLowerCase();
      var kept = rows.filter(function (r) {
        return Object.keys(sel).every(function (k) {
          return !sel[k].value || r[k] === sel[k].value;
        }) && (!q || [r.id, r.benchmark, r.model, r.mode, r.status].join(" ").toLowerCase()
          .indexOf(q) >= 0);
      }).sort(compare);
      tbody.replaceChildren.apply(tbody, kept.map(row));
      count.textContent = "showing " + kept.length + " of " + rows.length + " runs";
      document.querySelectorAll("#runs th").forEach(function (th) {
        th.dataset.sorted = th.dataset.key === sortKey ? (sortDir > 0 ? "up" : "down") : "";
      });
    }
    function load() {
      return getJSON("/api/runs").then(function (doc) {
        rows = doc.runs;
        document.getElementById("root").textContent = "runs under " + doc.root;
        fill(sel.benchmark, distinct("benchmark"));
        fill(sel.model, distinct("model"));
        show();
        document.body.dataset.ready = "1";
      }).catch(function (e) { count.textContent = String(e); });
    }
    Object.keys(sel).forEach(function (k) { sel[k].addEventListener("change", show); });
    textBox.addEventListener("input", show);
    document.querySelectorAll("#runs th").forEach(function (th) {
      th.addEventListener("click", function () {
        sortDir = sortKey === th.dataset.key ? -sortDir : 1;
        sortKey = th.dataset.key;
        show();
      });
    });
    load();
    setInterval(load, POLL_LIST);
  }

  // -- one run: its live state above its report ------------------------------------------
  // The report is loaded again when the run changed: at once while the reader has not
  // touched it, otherwise on the reader's click (a reload would close what they opened);
  // never sooner than three times its last load took after it (a page of 10,000 records
  // takes seconds to build, and the run being followed needs the machine too).
  function runPage() {
    var id = new URLSearchParams(location.search).get("id") || "";
    var frame = document.getElementById("report");
    var stateBox = document.getElementById("state");
    var live = document.getElementById("live");
    var newer = document.getElementById("newer");
    var busy = document.getElementById("busy");
    var shown = null; // the run's signature when its page was last loaded
    var latest = null; // its signature now
    var loading = false;
    var started = 0;
    var ready = 0; // when the page may be loaded again
    document.getElementById("title").textContent = id;
    document.title = "toolscore · " + id;

    function reload() {
      shown = latest;
      loading = true;
      started = Date.now();
      newer.hidden = true;
      busy.hidden = false;
      frame.src = "/report?id=" + encodeURIComponent(id) + "&v=" + started;
    }
    frame.addEventListener("load", function () {
      loading = false;
      busy.hidden = true;
      ready = Date.now() + Math.max(POLL_RUN, 3 * (Date.now() - started));
      document.body.dataset.ready = "1";
    });
    function touched() {
      var doc = frame.contentDocument;
      if (!doc || !doc.body) { return false; }
      var page = doc.getElementById("f-prev");
      return doc.querySelector("details[open]") !== null ||
        (page !== null && !page.disabled) ||
        Array.prototype.some.call(doc.querySelectorAll("#filters select, #filters input"),
          function (e) { return e.type === "checkbox" ? e.checked : e.value !== ""; });
    }
    newer.addEventListener("click", reload);
    function poll() {
      getJSON("/api/state?id=" + encodeURIComponent(id)).then(function (s) {
        latest = JSON.stringify(s.changed);
        stateBox.textContent = s.status + " · samples " + samples(s) + " · " + s.records +
          " records" + (figure(s.headline) ? " · " + figure(s.headline) : "");
        document.body.dataset.status = s.status;
        document.body.dataset.records = String(s.records);
        if (shown === null) { reload(); return; }
        var changed = latest !== shown;
        newer.hidden = !changed || loading;
        if (changed && live.checked && !loading && Date.now() >= ready && !touched()) {
          reload();
        }
      }).catch(function (e) { stateBox.textContent = String(e); });
    }
    poll();
    setInterval(poll, POLL_RUN);
  }

  if (document.body.dataset.page === "list") { listPage(); } else { runPage(); }
})();
