// The capsule reader: saves the reading position as the reader scrolls (no page reload), offers to
// resume where they left off, and dresses the text: copy buttons on code, scrollable tables,
// heading anchors, the book contents as a sidebar on wide screens. Everything here is an
// enhancement: without JavaScript the capsule reads the same and "Mark as complete" still works.
(function () {
  "use strict";

  var article = document.querySelector("article.capsule");
  var body = document.getElementById("capsule-body");
  var WIDE = window.matchMedia("(min-width: 64em)");  // keep in step with reader.css

  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // --- Book contents: a sticky sidebar on wide screens, a closed disclosure on phones -----------
  function setupContents() {
    var details = document.querySelector(".reader-nav__details");
    if (!details) return;
    var scroller = details.querySelector(".reader-nav__scroll");
    var current = details.querySelector("[aria-current=page]");
    function centreCurrent() {
      // Scroll only the sidebar (scrollIntoView would scroll the page too and undo a resume).
      if (!scroller || !current || !details.open) return;
      scroller.scrollTop = current.offsetTop - scroller.offsetTop - scroller.clientHeight / 2 + current.offsetHeight / 2;
    }
    function fit() {
      if (WIDE.matches) details.open = true;
      centreCurrent();
    }
    fit();
    if (WIDE.addEventListener) WIDE.addEventListener("change", fit);
    details.addEventListener("toggle", centreCurrent);
  }

  // --- The text --------------------------------------------------------------------------------
  // A region that scrolls sideways must be reachable with the keyboard (WCAG 2.1.1).
  function focusableWhenScrolling(element, label) {
    function update() {
      if (element.scrollWidth > element.clientWidth + 1) {
        element.setAttribute("tabindex", "0");
        if (label) {
          element.setAttribute("role", "region");
          element.setAttribute("aria-label", label);
        }
      } else {
        element.removeAttribute("tabindex");
        if (label) {
          element.removeAttribute("role");
          element.removeAttribute("aria-label");
        }
      }
    }
    update();
    return update;
  }

  // A box that scrolls sideways shows it: its edge fades where more lies beyond (reader.css, .scroll-cue).
  function scrollCue(element) {
    function update() {
      var overflow = element.scrollWidth - element.clientWidth;
      element.classList.toggle("scroll-cue", overflow > 1);
      element.classList.toggle("scroll-cue--start", overflow > 1 && element.scrollLeft > 1);
      element.classList.toggle("scroll-cue--end", overflow > 1 && element.scrollLeft < overflow - 1);
    }
    element.addEventListener("scroll", update, { passive: true });
    update();
    return update;
  }

  function setupText() {
    if (!body) return [];
    var updaters = [];

    body.querySelectorAll("table").forEach(function (table, index) {
      if (table.parentElement.classList.contains("table-wrap")) return;
      var wrap = document.createElement("div");
      wrap.className = "table-wrap";
      table.parentNode.insertBefore(wrap, table);
      wrap.appendChild(table);
      updaters.push(focusableWhenScrolling(wrap, "Table " + (index + 1) + " (scrolls sideways)"));
    });

    body.querySelectorAll('math:not([display="block"])').forEach(function (formula) {
      if (formula.getBoundingClientRect().width <= body.clientWidth) return;
      formula.classList.add("math--wide");
      updaters.push(focusableWhenScrolling(formula));  // keyboard readers scroll it too
    });

    body.querySelectorAll("pre > code").forEach(function (code) {
      var pre = code.parentElement;
      var match = /(?:^|\s)language-([\w+-]+)/.exec(code.className);
      var lang = match && match[1] !== "text" ? match[1] : "";
      var block = document.createElement("div");
      block.className = "code-block";
      var bar = document.createElement("div");
      bar.className = "code-block__bar";
      var label = document.createElement("span");
      label.className = "code-block__lang";
      label.textContent = lang ? lang : "code";
      bar.appendChild(label);
      if (navigator.clipboard && window.isSecureContext) {
        var button = document.createElement("button");
        button.type = "button";
        button.className = "copy-button";
        button.textContent = "Copy";
        button.setAttribute("aria-label", "Copy " + (lang ? lang + " " : "") + "code to the clipboard");
        var status = document.createElement("span");
        status.className = "visually-hidden";
        status.setAttribute("role", "status");
        button.addEventListener("click", function () {
          navigator.clipboard.writeText(code.innerText).then(function () {
            button.textContent = "Copied";
            button.classList.add("is-copied");
            status.textContent = "Code copied";
            setTimeout(function () {
              button.textContent = "Copy";
              button.classList.remove("is-copied");
              status.textContent = "";
            }, 1500);
          });
        });
        bar.appendChild(button);
        bar.appendChild(status);
      }
      pre.parentNode.insertBefore(block, pre);
      block.appendChild(bar);
      block.appendChild(pre);
      updaters.push(focusableWhenScrolling(pre));
    });

    // A tap on a drawing opens it at full size, to zoom (on a phone it is kept at the width where its text reads).
    body.querySelectorAll("figure > img").forEach(function (img) {
      var link = document.createElement("a");
      link.className = "figure-link";
      link.href = img.getAttribute("src");
      link.title = "Open the figure at full size";
      img.parentNode.insertBefore(link, img);
      link.appendChild(img);
      updaters.push(scrollCue(link));  // a drawing kept legible on a phone scrolls sideways
    });

    // Display maths sits in a .math-block box that scrolls (text rendered before issue 44: the <math> itself).
    body.querySelectorAll('.math-block, math[display="block"]').forEach(function (box) {
      if (box.tagName.toLowerCase() === "math" && box.parentElement.classList.contains("math-block")) return;
      updaters.push(focusableWhenScrolling(box));
      updaters.push(scrollCue(box));
    });

    body.querySelectorAll("h2[id], h3[id], h4[id]").forEach(function (heading) {
      var link = document.createElement("a");
      link.className = "heading-anchor";
      link.href = "#" + heading.id;
      link.setAttribute("aria-label", "Link to the section “" + heading.textContent.trim() + "”");
      link.textContent = "#";
      heading.appendChild(link);
    });

    var pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(function () { updaters.forEach(function (update) { update(); }); }, 150);
    });
    return updaters;
  }

  // --- Reading position ------------------------------------------------------------------------
  // Fraction of the text the reader has scrolled past: 0 at the top, 1 when its end is in view.
  function readingPosition() {
    var rect = body.getBoundingClientRect();
    var total = rect.height - window.innerHeight;
    if (total <= 0) return rect.top < window.innerHeight ? 1 : 0;
    return Math.min(1, Math.max(0, -rect.top / total));
  }

  function scrollTopFor(position) {
    var rect = body.getBoundingClientRect();
    return window.scrollY + rect.top + position * Math.max(0, rect.height - window.innerHeight);
  }

  function headingInView() {
    var headings = body.querySelectorAll("h2[id], h3[id]");
    var current = "";
    for (var i = 0; i < headings.length; i++) {
      if (headings[i].getBoundingClientRect().top < window.innerHeight * 0.3) current = headings[i].id;
    }
    return current;
  }

  function showProgress(percent) {
    var badge = document.querySelector(".capsule__progress");
    if (!badge) {
      var meta = document.querySelector(".capsule__meta");
      if (!meta) return;
      badge = document.createElement("span");
      badge.className = "capsule__progress";
      var link = meta.querySelector("a");
      meta.insertBefore(badge, link);
    }
    if (badge.textContent.indexOf("Completed") === -1) badge.textContent = percent + "% read";
  }

  function setupProgress() {
    var url = article && article.dataset.progressUrl;
    if (!url || !body) return;
    var lastSent = -1;
    var timer = null;

    function payload(position) {
      var data = new FormData();
      data.append("position", position.toFixed(4));
      data.append("heading", headingInView());
      data.append("csrfmiddlewaretoken", csrfToken());
      return data;
    }

    function send(useBeacon) {
      var position = readingPosition();
      if (Math.abs(position - lastSent) < 0.01) return;
      lastSent = position;
      if (useBeacon && navigator.sendBeacon) {
        navigator.sendBeacon(url, payload(position));
        return;
      }
      fetch(url, {
        method: "POST",
        body: payload(position),
        credentials: "same-origin",
        keepalive: true,
        headers: { "X-CSRFToken": csrfToken() },
      })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (result) { if (result) showProgress(result.percent); })
        .catch(function () { lastSent = -1; /* offline: the next scroll or the page hide tries again */ });
    }

    // Resume: back where the reader left off, unless the link points at a section.
    var saved = parseFloat(article.dataset.resumePosition || "0");
    if (saved > 0.02 && saved < 0.99 && !window.location.hash) resume(saved);

    window.addEventListener("scroll", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { send(false); }, 600);
    }, { passive: true });
    document.addEventListener("visibilitychange", function () { if (document.visibilityState === "hidden") send(true); });
    window.addEventListener("pagehide", function () { send(true); });

    function resume(position) {
      lastSent = position;
      // Figures load lazily and have no size until they do: load them now, and keep the place
      // while they arrive, until the reader scrolls on their own.
      var settled = false;
      function settle() { settled = true; }
      ["wheel", "touchstart", "keydown", "mousedown"].forEach(function (name) {
        window.addEventListener(name, settle, { once: true, passive: true });
      });
      setTimeout(settle, 4000);
      function place() {
        if (!settled) window.scrollTo({ top: scrollTopFor(position), behavior: "instant" });
      }
      body.querySelectorAll("img").forEach(function (img) {
        if (!img.complete) {
          img.loading = "eager";
          img.addEventListener("load", place);
        }
      });
      place();

      var notice = document.createElement("p");
      notice.className = "resume-notice";
      notice.setAttribute("role", "status");
      notice.appendChild(document.createTextNode("Resumed where you left off (" + Math.round(position * 100) + "%)."));
      var top = document.createElement("button");
      top.type = "button";
      top.className = "btn btn--link";
      top.textContent = "Back to the top";
      top.addEventListener("click", function () {
        settle();
        window.scrollTo({ top: 0 });
        notice.remove();
        var heading = document.getElementById("capsule-title");
        if (heading) { heading.setAttribute("tabindex", "-1"); heading.focus({ preventScroll: true }); }
      });
      notice.appendChild(document.createTextNode(" "));
      notice.appendChild(top);
      document.body.appendChild(notice);

      // Fade after a while, but not while the pointer or the keyboard is on it.
      var fadeTimer = null;
      function fadeLater(delay) {
        clearTimeout(fadeTimer);
        fadeTimer = setTimeout(function () {
          notice.classList.add("resume-notice--fade");
          setTimeout(function () { if (notice.classList.contains("resume-notice--fade")) notice.remove(); }, 700);
        }, delay);
      }
      notice.addEventListener("mouseenter", function () { clearTimeout(fadeTimer); });
      notice.addEventListener("focusin", function () { clearTimeout(fadeTimer); });
      notice.addEventListener("mouseleave", function () { fadeLater(2500); });
      notice.addEventListener("focusout", function () { fadeLater(2500); });
      fadeLater(6000);
    }
  }

  setupContents();
  setupText();
  setupProgress();
})();
