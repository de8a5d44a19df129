/* dplit documentation site (issue 29, item 2).
   1. Figures in notebook outputs open full size on click: each is wrapped in a link to its own file
      (a middle or Ctrl-click opens it in a new tab); a plain click shows it at its natural size in an
      overlay, closed by a click or Escape.
   2. Code and outputs wrap at the column (dplit.css); a printed or HTML table that would need to wrap is scaled
      down to fit if that costs little (to 70 % of its size at most), a display equation likewise (75 %), else
      the table wraps (zoomed out, to 60 % at most, when formulas in it do not break) and the equation keeps its
      scrollbar.
   3. A box that scrolls sideways with more to its right gets the class dplit-more-right (a fade at its
      right edge, dplit.css), updated as it scrolls. */
(function () {
  "use strict";

  function closeOverlay() {
    const open = document.querySelector("div.dplit-zoom-overlay");
    if (open) open.remove();
  }

  function showFull(href, alt) {
    closeOverlay();
    const overlay = document.createElement("div");
    overlay.className = "dplit-zoom-overlay";
    const img = document.createElement("img");
    img.src = href;
    img.alt = alt || "";
    overlay.appendChild(img);
    overlay.addEventListener("click", closeOverlay);
    document.body.appendChild(overlay);
  }

  function zoomableFigures() {
    for (const img of document.querySelectorAll("div.cell_output img")) {
      if (img.closest("a")) continue;
      const link = document.createElement("a");
      link.className = "dplit-zoom";
      link.href = img.getAttribute("src");
      link.title = "Click to see the figure at full size";
      img.replaceWith(link);
      link.appendChild(img);
      link.addEventListener("click", function (ev) {
        if (ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey) return;
        ev.preventDefault();
        showFull(link.href, img.alt);
      });
    }
    document.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape") closeOverlay();
    });
  }

  // Scale the content of a scrolling box down (font size) when that makes it fit, by at most `least`.
  function fit(box, content, least) {
    const style = getComputedStyle(box);
    const pad = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);  // padding does not scale
    const need = content.scrollWidth - (box === content ? pad : 0), have = box.clientWidth - pad;
    if (need <= have + 1 || have <= 0) return;
    const ratio = (have - 2) / need;
    if (ratio < least) return;
    const size = parseFloat(getComputedStyle(content).fontSize);
    content.style.fontSize = (size * ratio).toFixed(2) + "px";
  }

  // Content that would be wider than its box if it did not wrap (dplit.css wraps every code block, output and table
  // cell): a printed table (its wide lines hold runs of 2+ spaces between columns) and an HTML table are scaled down
  // to fit when that costs at most 30 %, so that their columns stay aligned; else they wrap.
  function layoutOutputs() {
    for (const pre of document.querySelectorAll("div.cell_output .output pre")) {
      if (pre.clientWidth === 0) continue;
      pre.style.whiteSpace = "pre";
      const wide = pre.scrollWidth > pre.clientWidth + 1;
      if (wide) {
        const lines = pre.textContent.split("\n");
        const longest = Math.max.apply(null, lines.map(function (l) { return l.length; }));
        const fits = Math.floor(longest * pre.clientWidth / pre.scrollWidth);
        const over = lines.filter(function (l) { return l.length > fits; });
        const tabular = over.filter(function (l) { return /\S {2,}\S/.test(l.trim()); });
        if (2 * tabular.length >= over.length) fit(pre, pre, 0.7);
      }
      pre.style.whiteSpace = "";
    }
    for (const table of document.querySelectorAll("div.cell_output table, article table.docutils")) {
      const box = table.parentElement;
      if (!box || box.clientWidth === 0) continue;
      const cells = table.querySelectorAll("td, th");
      cells.forEach(function (c) { c.style.whiteSpace = "nowrap"; });
      const pad = parseFloat(getComputedStyle(box).paddingLeft) + parseFloat(getComputedStyle(box).paddingRight);
      const need = table.scrollWidth, have = box.clientWidth - pad;
      cells.forEach(function (c) { c.style.whiteSpace = ""; });
      if (need > have + 1 && (have - 2) / need >= 0.7) {
        const size = parseFloat(getComputedStyle(table).fontSize);
        table.style.fontSize = (size * (have - 2) / need).toFixed(2) + "px";
      }
      // Wrapped and still wider (formulas and code do not break): zoom the whole table (code and formulas too).
      for (let i = 0, zoom = 1; i < 4; i++) {   // the table wraps again at each zoom: approach the width in steps
        const wrapped = table.getBoundingClientRect().width;
        if (wrapped <= have || zoom <= 0.6) break;
        zoom = Math.max(0.6, zoom * (have - 4) / wrapped);
        table.style.zoom = zoom.toFixed(3);
      }
    }
  }

  function fitMath() {
    for (const box of document.querySelectorAll("div.math")) {
      const eq = box.querySelector("mjx-container");
      if (eq) fit(box.closest("div.math-wrapper") || box, eq, 0.75);
    }
  }

  const SCROLLERS = "div.math-wrapper, article div.math, article .table-wrapper";

  function markMore(box) {
    box.classList.toggle("dplit-more-right", box.scrollLeft + box.clientWidth < box.scrollWidth - 2);
  }

  function scrollHints() {
    for (const box of document.querySelectorAll(SCROLLERS)) {
      markMore(box);
      if (!box.dataset.dplitHint) {
        box.dataset.dplitHint = "1";
        box.addEventListener("scroll", function () { markMore(box); }, {passive: true});
      }
    }
  }

  function whenMathJaxDone(callback, tries) {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(callback);
    } else if ((tries || 0) < 200) {
      setTimeout(function () { whenMathJaxDone(callback, (tries || 0) + 1); }, 50);
    }
  }

  document.addEventListener("DOMContentLoaded", zoomableFigures);
  // Widths are measured once fonts and images are in (the load event).
  window.addEventListener("load", function () {
    layoutOutputs();
    scrollHints();
    // Typeset formulas change the widths: lay the tables out again once MathJax is done.
    if (document.querySelector(".math")) whenMathJaxDone(function () { fitMath(); layoutOutputs(); scrollHints(); });
    window.addEventListener("resize", scrollHints);
  });
})();
