/* dplit documentation site (issue 29, item 2).
   1. Figures in notebook outputs open full size on click: each is wrapped in a link to its own file
      (a middle or Ctrl-click opens it in a new tab); a plain click shows it at its natural size in an
      overlay, closed by a click or Escape.
   2. A printed output wider than the column wraps when it is prose; when it is a table, or a display
      equation, it is scaled down to fit if that costs little (tables to 80 %, equations to 75 % of their
      size at most), else it keeps its scrollbar.
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

  // A printed output wider than its box: prose (long messages, dicts, lists) wraps; a table (its wide
  // lines hold runs of 2+ spaces between columns) is scaled to fit if that costs at most 20 %, else scrolls.
  function layoutOutputs() {
    for (const pre of document.querySelectorAll("div.cell_output .output pre")) {
      if (pre.scrollWidth <= pre.clientWidth + 1 || pre.clientWidth === 0) continue;
      const lines = pre.textContent.split("\n");
      const longest = Math.max.apply(null, lines.map(function (l) { return l.length; }));
      const fits = Math.floor(longest * pre.clientWidth / pre.scrollWidth);
      const wide = lines.filter(function (l) { return l.length > fits; });
      const tabular = wide.filter(function (l) { return /\S {2,}\S/.test(l.trim()); });
      if (2 * tabular.length < wide.length) pre.classList.add("dplit-wrap");
      else fit(pre, pre, 0.8);
    }
  }

  function fitMath() {
    for (const box of document.querySelectorAll("div.math")) {
      const eq = box.querySelector("mjx-container");
      if (eq) fit(box.closest("div.math-wrapper") || box, eq, 0.75);
    }
  }

  const SCROLLERS = "div.cell_output .output pre, div.cell_output .output.text_html, div.math-wrapper, " +
                    "article div.math, article .table-wrapper";

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
    if (document.querySelector("div.math")) whenMathJaxDone(function () { fitMath(); scrollHints(); });
    window.addEventListener("resize", scrollHints);
  });
})();
