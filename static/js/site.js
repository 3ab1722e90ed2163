// Every page: the phone header's menu, the display settings (theme, text size; prefs.js applies them
// before paint) and the keyboard shortcuts with their help dialog. Without JavaScript the navigation
// simply stays visible and the system's theme applies.
(function () {
  "use strict";

  var root = document.documentElement;
  var THEMES = ["system", "light", "dark"];
  var SIZES = ["small", "default", "large", "larger"];
  var NAMES = { system: "System", light: "Light", dark: "Dark", small: "Small", "default": "Default", large: "Large", larger: "Larger" };

  function stored(key, allowed, fallback) {
    try {
      var value = window.localStorage.getItem(key);
      return allowed.indexOf(value) === -1 ? fallback : value;
    } catch (error) {
      return fallback;
    }
  }

  function store(key, value, fallback) {
    try {
      if (value === fallback) window.localStorage.removeItem(key);
      else window.localStorage.setItem(key, value);
    } catch (error) { /* storage refused: the choice lasts for this page only */ }
  }

  function announce(text) {
    var status = document.getElementById("display-settings-status");
    if (status) status.textContent = text;
  }

  // --- Theme and text size ------------------------------------------------------------------------
  function applyTheme(theme) {
    if (theme === "light" || theme === "dark") root.setAttribute("data-theme", theme);
    else root.removeAttribute("data-theme");
    // The browser's own chrome (address bar on phones) follows the page.
    document.querySelectorAll('meta[name="theme-color"]').forEach(function (meta) {
      if (!meta.dataset.media) meta.dataset.media = meta.getAttribute("media") || "";
      var light = meta.dataset.media.indexOf("light") !== -1;
      if (theme === "system") meta.setAttribute("media", meta.dataset.media);
      else meta.setAttribute("media", (theme === "light") === light ? "all" : "not all");
    });
    syncControls();
    document.dispatchEvent(new CustomEvent("ke:themechange", { detail: { theme: theme } }));
  }

  function applySize(size) {
    if (size === "default") root.removeAttribute("data-font-size");
    else root.setAttribute("data-font-size", size);
    syncControls();
  }

  function setTheme(theme) {
    store("ke-theme", theme, "system");
    applyTheme(theme);
    announce("Theme: " + NAMES[theme]);
  }

  function setSize(size) {
    store("ke-font-size", size, "default");
    applySize(size);
    announce("Text size: " + NAMES[size]);
  }

  function syncControls() {
    var theme = stored("ke-theme", THEMES, "system");
    var size = root.getAttribute("data-font-size") || "default";
    document.querySelectorAll('input[name="ke-theme"]').forEach(function (input) { input.checked = input.value === theme; });
    document.querySelectorAll('input[name="ke-font-size"]').forEach(function (input) { input.checked = input.value === size; });
  }

  // Another tab changed a setting: follow it here too, without a reload.
  window.addEventListener("storage", function (event) {
    if (event.key === "ke-theme" || event.key === null) applyTheme(stored("ke-theme", THEMES, "system"));
    if (event.key === "ke-font-size" || event.key === null) applySize(stored("ke-font-size", SIZES, "default"));
  });

  // --- Disclosures: the phone menu and the display settings panel ---------------------------------
  function disclosure(button, panel, options) {
    if (!button || !panel) return null;
    button.hidden = false;
    function isOpen() { return button.getAttribute("aria-expanded") === "true"; }
    function set(open, returnFocus) {
      button.setAttribute("aria-expanded", open ? "true" : "false");
      if (options.usesHidden) panel.hidden = !open;
      else panel.classList.toggle("is-open", open);
      if (!open && returnFocus) button.focus();
    }
    button.addEventListener("click", function () { set(!isOpen()); });
    // Esc closes and gives the focus back to the button; so does leaving it with the keyboard or a click.
    panel.parentNode.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && isOpen()) {
        event.stopPropagation();
        set(false, true);
      }
    });
    document.addEventListener("click", function (event) {
      if (isOpen() && !button.contains(event.target) && !panel.contains(event.target)) set(false);
    });
    return { close: function () { set(false); }, isOpen: isOpen };
  }

  disclosure(document.querySelector(".site-header__menu-button"), document.getElementById("site-menu"), { usesHidden: false });
  var settings = disclosure(
    document.querySelector(".display-settings__button"),
    document.getElementById("display-settings-panel"),
    { usesHidden: true }
  );
  document.querySelectorAll('input[name="ke-theme"]').forEach(function (input) {
    input.addEventListener("change", function () { if (input.checked) setTheme(input.value); });
  });
  document.querySelectorAll('input[name="ke-font-size"]').forEach(function (input) {
    input.addEventListener("change", function () { if (input.checked) setSize(input.value); });
  });
  syncControls();

  // --- Keyboard shortcuts ---------------------------------------------------------------------------
  var dialog = document.getElementById("shortcuts-dialog");
  var returnTo = null;

  function openHelp() {
    if (!dialog || dialog.open || typeof dialog.showModal !== "function") return;
    returnTo = document.activeElement;
    if (settings) settings.close();
    dialog.showModal();
  }
  if (dialog) {
    dialog.addEventListener("close", function () {
      if (returnTo && document.contains(returnTo) && returnTo.focus) returnTo.focus();
      returnTo = null;
    });
    // A click on the backdrop (outside the dialog's box) closes it too.
    dialog.addEventListener("click", function (event) {
      if (event.target === dialog) {
        var box = dialog.getBoundingClientRect();
        var inside = event.clientX >= box.left && event.clientX <= box.right && event.clientY >= box.top && event.clientY <= box.bottom;
        if (!inside) dialog.close();
      }
    });
  }
  document.querySelectorAll("[data-shortcuts-open]").forEach(function (button) {
    button.addEventListener("click", openHelp);
  });

  // While the reader types, every key is theirs: form fields, the code editor (Ace types into a
  // textarea), anything editable.
  function typing(target) {
    if (!target || target === document.body) return false;
    if (target.isContentEditable) return true;
    var tag = target.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT") return true;
    if (tag === "INPUT") return ["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"].indexOf(target.type) === -1;
    return Boolean(target.closest && target.closest(".ace_editor, [contenteditable]"));
  }

  function follow(selector) {
    var link = document.querySelector(selector);
    if (link) window.location.assign(link.href);
  }

  function step(delta) {
    var index = SIZES.indexOf(root.getAttribute("data-font-size") || "default");
    var next = Math.min(SIZES.length - 1, Math.max(0, index + delta));
    if (next !== index) setSize(SIZES[next]);
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (typing(event.target) || (dialog && dialog.open)) return;
    var actions = {
      "?": openHelp,
      n: function () { follow('a[rel="next"]'); },
      p: function () { follow('a[rel="prev"]'); },
      "/": function () {
        var field = document.querySelector('main input[type="search"]');
        if (field) field.focus();
        else if (dialog && dialog.dataset.searchUrl) window.location.assign(dialog.dataset.searchUrl);
      },
      t: function () { setTheme(THEMES[(THEMES.indexOf(stored("ke-theme", THEMES, "system")) + 1) % THEMES.length]); },
      "+": function () { step(1); },
      "=": function () { step(1); },  // + without Shift on most layouts
      "-": function () { step(-1); },
    };
    var action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });
})();
