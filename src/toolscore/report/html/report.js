// The report page's own script (the only one the page's Content-Security-Policy lets run).
//
// The page carries an index of every record (#report-data: id, split, verdict, summary, tags,
// facets) and the records' bodies as gzip-compressed JSON blocks (script.chunk, CHUNK records
// each, base64). The list shows one page of the records the filters keep, built from the
// index alone; a record's block is decompressed (DecompressionStream) when the record is
// opened, and the record is built with createElement and textContent: run text (model output,
// dataset text, error messages) is never parsed as HTML, so it can only ever be shown.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var samples = data.samples;
  var blocks = document.querySelectorAll("script.chunk");
  var MAX_TEXT = 4000; // characters of one message or value shown; the rest is elided
  var TONES = ["ok", "bad", "tag", "strong"];
  // What export.printable shows as escapes: C0 controls but newline and tab, DEL, C1, and the
  // bidirectional overrides and isolates that would reorder what a reader sees.
  var ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  var cache = {};

  function printable(s) {
    return String(s).replace(ACTIVE, function (c) {
      var n = c.charCodeAt(0);
      return n < 0x100 ? "\\x" + n.toString(16).padStart(2, "0")
        : "\\u" + n.toString(16).padStart(4, "0");
    });
  }
  function str(v) { return v === null || v === undefined ? "" : String(v); }
  function list(v) { return Array.isArray(v) ? v : []; }
  function isObject(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function el(tag, cls, content) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (content !== undefined) { e.textContent = printable(content); }
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i += 1) {
      var c = arguments[i];
      parent.appendChild(typeof c === "string" ? document.createTextNode(printable(c)) : c);
    }
    return parent;
  }

  // -- values ----------------------------------------------------------------------------
  function text(value) {
    if (typeof value === "string") {
      var parsed = null;
      try { parsed = JSON.parse(value); } catch (e) { parsed = null; }
      if (parsed !== null && typeof parsed === "object") { value = parsed; }
    }
    if (typeof value !== "string") {
      value = JSON.stringify(value === undefined ? null : value, null, 1);
    }
    if (value.length > MAX_TEXT) {
      value = value.slice(0, MAX_TEXT) + " … [" + (value.length - MAX_TEXT) +
        " more characters]";
    }
    return value;
  }
  function pre(value) { return el("pre", null, text(value)); }
  function cell(value, into) {
    if (Array.isArray(value)) {
      value.forEach(function (v, i) {
        if (i) { add(into, " "); }
        cell(v, into);
      });
    } else if (isObject(value)) {
      if (Object.prototype.hasOwnProperty.call(value, "json")) {
        into.appendChild(pre(value.json));
      } else {
        var tone = TONES.indexOf(value.tone) >= 0 ? value.tone : null;
        add(into, tone ? el("span", tone, str(value.text)) : str(value.text));
      }
    } else if (value !== null && value !== undefined) {
      add(into, String(value));
    }
    return into;
  }

  // -- one record ------------------------------------------------------------------------
  function message(m) {
    var role = str(m.role) || "?";
    var box = el("div", "msg");
    if (/^[a-z]+$/.test(role)) { box.classList.add(role); }
    box.appendChild(el("span", "role", role));
    if (role === "tool" && m.name) { box.appendChild(el("span", "tag", str(m.name))); }
    if (typeof m.reasoning === "string" && m.reasoning !== "") {
      // what a reasoning model thought before answering: shown folded, never the answer
      box.appendChild(fold("reasoning", pre(m.reasoning), "reasoning"));
    }
    if (m.content !== null && m.content !== undefined && m.content !== "") {
      box.appendChild(pre(m.content));
    }
    list(m.tool_calls).forEach(function (call) {
      var fn = isObject(call) && isObject(call.function) ? call.function : {};
      box.appendChild(add(el("div"), "→ call ", el("b", null, str(fn.name)),
                          pre(fn.arguments)));
    });
    return box;
  }
  function messages(ms, into) {
    list(ms).forEach(function (m) { if (isObject(m)) { into.appendChild(message(m)); } });
    return into;
  }
  function fold(label, content, cls) {
    return add(el("details"), el("summary", cls, label), content);
  }
  function section(s) {
    var box = el("div", "turn");
    var h = add(el("h3"), str(s.title));
    list(s.tags).forEach(function (t) {
      add(h, " ");
      cell(isObject(t) ? t : { text: t, tone: "tag" }, h);
    });
    box.appendChild(h);
    var rows = list(s.rows).filter(Array.isArray);
    if (rows.length) {
      var table = el("table", "calls");
      var head = el("tr");
      list(s.columns).forEach(function (c) { head.appendChild(el("th", "l", str(c))); });
      table.appendChild(head);
      rows.forEach(function (r) {
        var tr = el("tr");
        r.forEach(function (c) { tr.appendChild(cell(c, el("td", "l"))); });
        table.appendChild(tr);
      });
      box.appendChild(table);
    } else if (s.empty) {
      box.appendChild(el("p", "muted", str(s.empty)));
    }
    if (list(s.messages).length) {
      box.appendChild(fold("transcript", messages(s.messages, el("div"))));
    }
    if (s.text) {
      box.appendChild(add(el("div", "msg assistant"), el("span", "role", str(s.text_label) ||
                                                         "text"), pre(s.text)));
    }
    return box;
  }
  function body(rec) {
    var out = document.createDocumentFragment();
    var scores = el("p", "muted");
    list(rec.scores).forEach(function (kv, i) {
      if (i) { add(scores, " · "); }
      add(scores, str(kv[0]) + " ", el("b", null, str(kv[1])));
    });
    out.appendChild(scores);
    if (rec.error) { out.appendChild(el("p", "bad", "error: " + str(rec.error))); }
    var view = isObject(rec.view) ? rec.view : {};
    if (view.view_error) {
      out.appendChild(el("p", "bad", "the benchmark could not show this record: " +
                         str(view.view_error)));
    }
    if (isObject(view.details)) {
      Object.keys(view.details).forEach(function (label) {
        out.appendChild(fold(label, pre(view.details[label]), "muted"));
      });
    }
    var sections = list(view.sections).filter(isObject);
    var inSections = sections.some(function (s) { return list(s.messages).length > 0; });
    if (list(view.messages).length && !inSections) {
      out.appendChild(messages(view.messages, add(el("div", "turn"), el("h3", null,
                                                                        "dialogue"))));
    }
    sections.forEach(function (s) { out.appendChild(section(s)); });
    if (Object.prototype.hasOwnProperty.call(rec, "output")) {
      out.appendChild(fold("stored output", pre(rec.output)));
    }
    return out;
  }

  // -- the compressed blocks -------------------------------------------------------------
  function bytes(b64) {
    if (typeof Uint8Array.fromBase64 === "function") { return Uint8Array.fromBase64(b64); }
    var bin = atob(b64);
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i += 1) { out[i] = bin.charCodeAt(i); }
    return out;
  }
  function block(n) {
    if (!cache[n]) {
      var stream = new Blob([bytes(blocks[n].textContent)]).stream()
        .pipeThrough(new DecompressionStream("gzip"));
      cache[n] = new Response(stream).text().then(JSON.parse);
    }
    return cache[n];
  }
  // A page served by `toolscore view` has no blocks: it asks its server for one record.
  function fetched(idx) {
    return fetch(data.record_url + idx).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.json();
    });
  }
  function record(idx) {
    if (data.record_url) { return fetched(idx); }
    return block(Math.floor(idx / data.chunk)).then(function (recs) {
      return recs[idx % data.chunk];
    });
  }
  function open(d, s) {
    if (d.dataset.loaded) { return; }
    d.dataset.loaded = "pending";
    record(s.idx).then(function (rec) {
      d.appendChild(body(rec));
      d.dataset.loaded = "1";
    }).catch(function (e) {
      d.appendChild(el("p", "bad", "this record could not be read from the page: " + e));
      d.dataset.loaded = "error";
      console.error("record " + s.idx + ": " + e);
    });
  }

  // -- the list and its filters ----------------------------------------------------------
  function entry(s) {
    var d = el("details", s.failed ? "sample failed" : "sample");
    d.id = "s-" + s.idx;
    var badge = s.error ? el("span", "badge err", "ERROR")
      : el("span", "badge " + (s.failed ? "fail" : "pass"), s.failed ? "FAIL" : "PASS");
    var head = add(el("summary"), badge, el("b", null, s.id),
                   el("span", "muted", "epoch " + s.epoch + " · split " + s.split));
    if (s.summary) { head.appendChild(el("span", "muted", str(s.summary))); }
    list(s.tags).forEach(function (t) { head.appendChild(cell(t, el("span", "tag"))); });
    d.appendChild(head);
    d.addEventListener("toggle", function () { if (d.open) { open(d, s); } });
    return d;
  }
  function fill(select, values) {
    values.forEach(function (v) {
      var o = document.createElement("option");
      o.value = v;
      o.textContent = printable(v);
      select.appendChild(o);
    });
  }
  var failedBox = document.getElementById("f-failed");
  var splitSel = document.getElementById("f-split");
  var textBox = document.getElementById("f-text");
  var count = document.getElementById("f-count");
  var pageLabel = document.getElementById("f-page");
  var prev = document.getElementById("f-prev");
  var next = document.getElementById("f-next");
  var listBox = document.getElementById("samples");
  var facetBox = document.getElementById("f-facets");
  var page = 0;
  var kept = samples;
  fill(splitSel, data.splits);
  var facetSels = data.facets.map(function (facet, i) {
    var label = add(el("label"), facet.name + " ");
    var select = document.createElement("select");
    select.id = "f-facet-" + i;
    select.dataset.facet = facet.name;
    fill(select, [""].concat(facet.values));
    select.options[0].textContent = "any";
    label.appendChild(select);
    facetBox.appendChild(label);
    return select;
  });
  function facetOk(s) {
    return facetSels.every(function (sel) {
      var name = sel.dataset.facet;
      var values = Object.prototype.hasOwnProperty.call(s.facets, name) ? s.facets[name] : [];
      return !sel.value || values.indexOf(sel.value) >= 0;
    });
  }
  function show() {
    var pages = Math.max(1, Math.ceil(kept.length / data.page));
    page = Math.min(Math.max(page, 0), pages - 1);
    var shown = kept.slice(page * data.page, (page + 1) * data.page);
    listBox.replaceChildren.apply(listBox, shown.map(entry));
    pageLabel.textContent = "page " + (page + 1) + " of " + pages + " (" + data.page +
      " records a page)";
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }
  function apply() {
    var q = textBox.value.trim().toLowerCase();
    kept = samples.filter(function (s) {
      return (!failedBox.checked || s.failed) && facetOk(s) &&
        (!splitSel.value || s.split === splitSel.value) &&
        (!q || s.id.toLowerCase().indexOf(q) >= 0);
    });
    count.textContent = "showing " + kept.length + " of " + samples.length;
    page = 0;
    show();
  }
  [failedBox, splitSel].concat(facetSels).forEach(function (e) {
    e.addEventListener("change", apply);
  });
  textBox.addEventListener("input", apply);
  prev.addEventListener("click", function () { page -= 1; show(); });
  next.addEventListener("click", function () { page += 1; show(); });
  document.getElementById("f-expand").addEventListener("click", function () {
    listBox.querySelectorAll("details.sample").forEach(function (d) { d.open = true; });
  });
  document.getElementById("f-collapse").addEventListener("click", function () {
    listBox.querySelectorAll("details.sample").forEach(function (d) { d.open = false; });
  });
  apply();
  performance.mark("report-ready"); // perf/report.py times the page's opening up to here
  document.body.dataset.ready = "1";
})();
