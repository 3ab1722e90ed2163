/*
 * The submission editor: django-ace turns the source textarea into Ace on window load (its
 * widget.js); this adds what the book needs on top. Without JavaScript the plain textarea submits.
 *  - CUDA keywords highlighted on top of Ace's C/C++ mode;
 *  - keyboard accessibility: Tab indents inside the editor, Escape then Tab leaves it (no trap);
 *  - the editor's input named after the field's label; light or dark theme with the site's;
 *  - the form posted over htmx: a refused submission's form (400) swapped in like a success, and the
 *    editor of a form that htmx swaps in started as django-ace starts the page's own;
 *  - the language (issue 46): choosing CUDA C++ or Triton switches the editor's mode (C/C++ with CUDA's
 *    words, or Python) and its text: each language keeps what the reader had in it (the server's start for
 *    a language not yet shown: the reader's latest source in it, else its starter), across htmx swaps too.
 */
(function () {
  "use strict";

  var CUDA_WORDS = [
    "__global__", "__device__", "__host__", "__shared__", "__constant__", "__restrict__", "__forceinline__",
    "__noinline__", "__launch_bounds__", "__syncthreads", "__syncwarp", "__shfl_sync", "__shfl_down_sync",
    "__shfl_xor_sync", "__ldg", "__fmaf_rn", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
    "half", "__half", "__half2", "__nv_bfloat16", "float2", "float4", "int4", "dim3",
  ];

  function cudaMode() {
    if (!window.ace) return null;
    var oop = ace.require("ace/lib/oop");
    var CppMode = ace.require("ace/mode/c_cpp").Mode;
    var CppRules = ace.require("ace/mode/c_cpp_highlight_rules").c_cppHighlightRules;
    if (!oop || !CppMode || !CppRules) return null;
    function CudaRules() {
      CppRules.call(this);
      // Ahead of the identifier rule, so these read as keywords rather than names.
      this.$rules.start.unshift({ token: "keyword.other.cuda", regex: "\\b(?:" + CUDA_WORDS.join("|") + ")\\b" });
      this.normalizeRules();
    }
    oop.inherits(CudaRules, CppRules);
    function CudaMode() {
      CppMode.call(this);
      this.HighlightRules = CudaRules;
      this.$id = "ace/mode/cuda";
    }
    oop.inherits(CudaMode, CppMode);
    return new CudaMode();
  }

  var MODES = { cuda: "c_cpp", triton: "python" };
  var ACCEPT = { cuda: ".cu,text/plain", triton: ".py,text/x-python,text/plain" };
  var TRITON_PLAN = '[[launch]]\nkernel = "my_kernel"\ngrid = ["cdiv(N, 1024)"]\nnum_warps = 4\nconstexprs = { BLOCK_SIZE = 1024 }';
  // Each form's text per language (keyed by the form's address: one exercise per page), kept while htmx
  // replaces the form, so that a refused submission's form brings back what the other language held.
  var kept = {};

  function chosenLanguage(form) {
    var checked = form && form.querySelector('input[name="language"]:checked');
    var only = form && form.querySelector('input[name="language"]');
    return (checked || only || { value: "cuda" }).value;
  }

  function setMode(editor, language) {
    var mode = language === "cuda" ? cudaMode() : null;
    editor.session.setMode(mode || "ace/mode/" + (MODES[language] || "c_cpp"));
  }

  function fitFields(form, language) {
    var upload = form.querySelector('input[type="file"][name="upload"]');
    if (upload) upload.setAttribute("accept", ACCEPT[language] || ACCEPT.cuda);
    var plan = form.querySelector('textarea[name="plan"]');
    if (plan) {
      if (plan.dataset.cudaPlaceholder === undefined) plan.dataset.cudaPlaceholder = plan.getAttribute("placeholder") || "";
      plan.setAttribute("placeholder", language === "triton" ? TRITON_PLAN : plan.dataset.cudaPlaceholder);
    }
  }

  function languageSwitch(form, editor) {
    var radios = form ? form.querySelectorAll('input[type="radio"][name="language"]') : [];
    if (!radios.length) return;
    var texts = form.dataset.starts ? JSON.parse(form.dataset.starts) : {};
    var current = chosenLanguage(form);
    var earlier = kept[form.action] || {};
    Object.keys(earlier).forEach(function (language) { if (language !== current) texts[language] = earlier[language]; });
    texts[current] = editor.getValue();
    kept[form.action] = texts;
    fitFields(form, current);
    editor.session.on("change", function () { texts[current] = editor.getValue(); });
    radios.forEach(function (radio) {
      radio.addEventListener("change", function () {
        if (!radio.checked || radio.value === current) return;
        texts[current] = editor.getValue();
        current = radio.value;
        editor.session.setValue(texts[current] || "");  // django-ace copies it into the textarea that posts
        setMode(editor, current);
        fitFields(form, current);
      });
    });
  }

  function enhance(widget) {
    var editor = widget.editor;
    if (!editor) return;
    // The page's own colour scheme: the reader's choice (Display settings, site.js) or the system's.
    var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)");
    var isDark = function () {
      var chosen = document.documentElement.getAttribute("data-theme");
      return chosen ? chosen === "dark" : Boolean(dark && dark.matches);
    };
    var setTheme = function () { editor.setTheme(isDark() ? "ace/theme/tomorrow_night" : "ace/theme/chrome"); };
    setTheme();
    if (dark && dark.addEventListener) dark.addEventListener("change", setTheme);
    document.addEventListener("ke:themechange", setTheme);
    var form = widget.closest("form");
    setMode(editor, chosenLanguage(form));
    languageSwitch(form, editor);
    editor.setOptions({ enableKeyboardAccessibility: true, fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" });

    var textarea = widget.parentNode.querySelector("textarea[name]");
    var label = textarea && textarea.id ? document.querySelector('label[for="' + textarea.id + '"]') : null;
    var input = widget.querySelector("textarea.ace_text-input");
    if (input && label) {
      input.setAttribute("aria-label", label.textContent.trim() + " (code editor)");
      if (textarea.getAttribute("aria-describedby")) input.setAttribute("aria-describedby", textarea.getAttribute("aria-describedby"));
      // The label points at the hidden textarea: send its clicks to the editor.
      label.addEventListener("click", function (event) { event.preventDefault(); editor.focus(); });
    }
    // A form error names a line ("Line 12: ..."): nothing to do; the reader's text is already in place.
  }

  // django-ace starts the editors that are on the page when it loads; one that htmx swaps in later
  // starts here, from the settings its widget carries (the widget: an empty div, then the textarea).
  function start(widget) {
    var textarea = widget.nextElementSibling;
    var editor = (widget.editor = ace.edit(widget.firstElementChild));
    editor.session.setValue(textarea.value);
    textarea.style.display = "none";
    if (widget.dataset.mode) editor.session.setMode("ace/mode/" + widget.dataset.mode);
    editor.setOptions({
      tabSize: Number(widget.dataset.tabsize) || 4,
      useSoftTabs: widget.dataset.usesofttabs !== "false",
      showPrintMargin: widget.dataset.showprintmargin !== "false",
      useWorker: widget.dataset.useworker !== "false",
    });
    editor.session.on("change", function () { textarea.value = editor.session.getValue(); });
    widget.classList.remove("loading");
  }

  window.addEventListener("load", function () {
    // django-ace's own load handler ran first (its script comes before this one).
    document.querySelectorAll(".submission-form .django-ace-widget").forEach(enhance);
  });

  document.addEventListener("htmx:load", function (event) {
    if (event.detail.elt === document.body || !window.ace) return; // the page itself: django-ace's
    event.detail.elt.querySelectorAll(".submission-form .django-ace-widget.loading").forEach(function (widget) {
      start(widget);
      enhance(widget);
    });
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    var form = event.detail.elt;
    if (!form.matches || !form.matches(".submission-form") || event.detail.xhr.status !== 400) return;
    if (event.detail.serverResponse.indexOf("submission-form") !== -1) {
      // Refused: the form again, with its errors and the reader's text.
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    } else {
      // The site's own 400 page (a form too large to send): shown as the plain form would show it.
      form.submit();
    }
  });
})();
