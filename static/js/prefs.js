// Display preferences, applied before the first paint: loaded without defer in <head>, so a reader who
// chose the dark theme or larger text never sees a flash of the defaults. The controls are in site.js.
(function () {
  "use strict";
  var root = document.documentElement;
  root.classList.add("js");  // CSS shows the controls that need JavaScript (menu, display settings)
  var theme = null;
  var size = null;
  try {
    theme = window.localStorage.getItem("ke-theme");
    size = window.localStorage.getItem("ke-font-size");
  } catch (error) {
    return;  // storage refused (privacy settings): the system's theme and the default size
  }
  if (theme === "light" || theme === "dark") root.setAttribute("data-theme", theme);
  if (size === "small" || size === "large" || size === "larger") root.setAttribute("data-font-size", size);
})();
