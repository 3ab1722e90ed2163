// Capsule admin: the preview follows the Markdown as it is typed. The body (and slug, for figure links) is
// posted to the admin's preview view with the form's CSRF token; its answer, a whole page in the reader's
// styles, replaces the sandboxed iframe's document. Nothing is saved.
(function () {
  "use strict";

  function start() {
    var frame = document.querySelector("iframe.capsule-preview[data-preview-url]");
    var body = document.getElementById("id_body");
    if (!frame || !body) return;
    var form = body.form;
    var slug = document.getElementById("id_slug");
    var status = document.querySelector(".capsule-preview__status");
    var token = form && form.querySelector("input[name=csrfmiddlewaretoken]");
    var timer = null;
    var sent = 0;

    function render() {
      var data = new FormData();
      data.append("body", body.value);
      data.append("slug", slug ? slug.value : "");
      var request = ++sent;
      if (status) status.textContent = "Updating the preview…";
      fetch(frame.dataset.previewUrl, {
        method: "POST",
        body: data,
        credentials: "same-origin",
        headers: { "X-CSRFToken": token ? token.value : "" },
      })
        .then(function (response) {
          if (!response.ok) throw new Error(response.status + " " + response.statusText);
          return response.text();
        })
        .then(function (html) {
          if (request !== sent) return;  // an older answer arriving after a newer one
          // Keep the reader's place in the preview across updates.
          var scroll = frame.contentWindow ? frame.contentWindow.scrollY : 0;
          frame.addEventListener("load", function restore() {
            frame.removeEventListener("load", restore);
            if (frame.contentWindow) frame.contentWindow.scrollTo(0, scroll);
          });
          frame.srcdoc = html;
          if (status) status.textContent = "Preview updated (not saved).";
        })
        .catch(function (error) {
          if (status && request === sent) status.textContent = "The preview could not be updated: " + error.message;
        });
    }

    body.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(render, 400);
    });
    if (!frame.getAttribute("srcdoc")) render();  // a new capsule: nothing saved to show yet
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
