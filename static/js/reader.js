// The capsule reader: saves the reading position as the reader scrolls (no page reload), offers to
// resume where they left off, and adds copy buttons to code blocks. Everything here is an
// enhancement: without JavaScript the capsule reads the same and "Mark as complete" still works.
(function () {
  "use strict";

  var article = document.querySelector("article.capsule");
  var body = document.getElementById("capsule-body");

  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // Fraction of the text the reader has scrolled past: 0 at the top, 1 when its end is in view.
  function readingPosition() {
    var rect = body.getBoundingClientRect();
    var total = rect.height - window.innerHeight;
    if (total <= 0) return rect.top < window.innerHeight ? 1 : 0;
    return Math.min(1, Math.max(0, -rect.top / total));
  }

  function headingInView() {
    var headings = body.querySelectorAll("h2[id], h3[id]");
    var current = "";
    for (var i = 0; i < headings.length; i++) {
      if (headings[i].getBoundingClientRect().top < window.innerHeight * 0.3) current = headings[i].id;
    }
    return current;
  }

  function setupProgress() {
    var url = article && article.dataset.progressUrl;
    if (!url || !body) return;
    var lastSent = -1;
    var timer = null;

    function payload() {
      var data = new FormData();
      data.append("position", readingPosition().toFixed(4));
      data.append("heading", headingInView());
      data.append("csrfmiddlewaretoken", csrfToken());
      return data;
    }

    function send(useBeacon) {
      var position = readingPosition();
      if (Math.abs(position - lastSent) < 0.01) return;
      lastSent = position;
      if (useBeacon && navigator.sendBeacon) {
        navigator.sendBeacon(url, payload());
        return;
      }
      fetch(url, { method: "POST", body: payload(), credentials: "same-origin", keepalive: true })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (result) {
          var badge = document.querySelector(".capsule__progress");
          if (result && badge && badge.textContent.indexOf("Completed") === -1) badge.textContent = result.percent + "% read";
        })
        .catch(function () { /* offline: the next scroll or the page hide tries again */ });
    }

    window.addEventListener("scroll", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { send(false); }, 600);
    }, { passive: true });
    document.addEventListener("visibilitychange", function () { if (document.visibilityState === "hidden") send(true); });
    window.addEventListener("pagehide", function () { send(true); });

    // Resume: back where the reader left off, unless the link points at a section.
    var saved = parseFloat(article.dataset.resumePosition || "0");
    if (saved > 0.02 && saved < 0.99 && !window.location.hash) {
      var rect = body.getBoundingClientRect();
      var target = window.scrollY + rect.top + saved * (rect.height - window.innerHeight);
      window.scrollTo({ top: target, behavior: "instant" });
      lastSent = saved;
      var notice = document.createElement("p");
      notice.className = "resume-notice";
      notice.setAttribute("role", "status");
      notice.textContent = "Resumed where you left off (" + Math.round(saved * 100) + "%).";
      var top = document.createElement("button");
      top.type = "button";
      top.className = "btn btn--link";
      top.textContent = "Back to the top";
      top.addEventListener("click", function () { window.scrollTo({ top: 0 }); notice.remove(); });
      notice.appendChild(document.createTextNode(" "));
      notice.appendChild(top);
      document.body.appendChild(notice);
      setTimeout(function () { notice.classList.add("resume-notice--fade"); }, 6000);
    }
  }

  function setupCopyButtons() {
    if (!body || !navigator.clipboard) return;
    body.querySelectorAll("pre > code").forEach(function (code) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy-button";
      button.textContent = "Copy";
      button.setAttribute("aria-label", "Copy code to clipboard");
      button.addEventListener("click", function () {
        navigator.clipboard.writeText(code.innerText).then(function () {
          button.textContent = "Copied";
          setTimeout(function () { button.textContent = "Copy"; }, 1500);
        });
      });
      code.parentElement.classList.add("has-copy");
      code.parentElement.appendChild(button);
    });
  }

  setupCopyButtons();
  setupProgress();
})();
