// catalog site: the index's search box and tag filter, and the citation's copy button.
// No network, no libraries; without JavaScript every dataset is simply listed.
// Every behaviour of the pages is set up here: their Content-Security-Policy allows no inline
// script or event handler.
"use strict";

(function () {
  function words(text) {
    return text.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; });
  }

  function setUpIndex() {
    var box = document.getElementById("search");
    var tag = document.getElementById("tag");
    var table = document.getElementById("datasets");
    if (!box || !tag || !table) { return; }
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var count = document.getElementById("count");
    var empty = document.getElementById("empty");
    // The filter applies as one types: Enter in the search box sends no form anywhere.
    // (Here, not in an onsubmit attribute: the pages' Content-Security-Policy runs no
    // inline script.)
    if (box.form) {
      box.form.addEventListener("submit", function (event) { event.preventDefault(); });
    }

    // A row is shown when it has the chosen tag and its text holds every word typed.
    function apply() {
      var want = words(box.value);
      var chosen = tag.value;
      var shown = 0;
      rows.forEach(function (row) {
        var text = row.getAttribute("data-search") || "";
        var tags = (row.getAttribute("data-tags") || "").split(" ");
        var ok = (!chosen || tags.indexOf(chosen) >= 0) &&
          want.every(function (w) { return text.indexOf(w) >= 0; });
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      count.textContent = shown === rows.length
        ? rows.length + (rows.length === 1 ? " dataset" : " datasets")
        : shown + " of " + rows.length + " datasets";
      empty.hidden = shown > 0;
    }

    // index.html#tag=image or #q=mnist: the tag links of every page land here.
    function fromFragment() {
      var params = new URLSearchParams(window.location.hash.slice(1));
      if (params.has("q")) { box.value = params.get("q"); }
      if (params.has("tag")) {
        var wanted = params.get("tag");
        var known = Array.prototype.some.call(tag.options, function (o) { return o.value === wanted; });
        tag.value = known ? wanted : "";
      }
    }

    box.addEventListener("input", apply);
    tag.addEventListener("change", apply);
    window.addEventListener("hashchange", function () { fromFragment(); apply(); });
    fromFragment();
    apply();
  }

  function setUpCopy() {
    Array.prototype.forEach.call(document.querySelectorAll("button[data-copy]"), function (button) {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source) { return; }
      function done(label) {
        button.textContent = label;
        window.setTimeout(function () { button.textContent = "Copy"; }, 2000);
      }
      // The fallback for pages without the clipboard API: select the text and copy it.
      function selectAndCopy() {
        var range = document.createRange();
        range.selectNodeContents(source);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        var copied = false;
        try { copied = document.execCommand("copy"); } catch (e) { copied = false; }
        done(copied ? "Copied" : "Selected: press Ctrl+C");
      }
      button.addEventListener("click", function () {
        var text = source.textContent;
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(text).then(function () { done("Copied"); }, selectAndCopy);
        } else {
          selectAndCopy();
        }
      });
    });
  }

  setUpIndex();
  setUpCopy();
}());
