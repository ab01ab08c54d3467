/* The course site's own script: the sidebar buttons, copy buttons on code.
 *
 * 1. The menu and contents buttons. pydata-sphinx-theme binds its click handler to the
 *    first element of class primary-toggle (secondary-toggle), which in sphinx-book-theme
 *    is a hidden duplicate in the top bar, so the visible buttons did nothing
 *    (pydata-sphinx-theme issue #2451). Here the visible buttons open the sidebar as a
 *    dialog when it is hidden (a phone) and collapse or restore it when it is shown (a
 *    projector); the choice to collapse is remembered from page to page.
 * 2. A copy button on every code cell and code block, which copies the code without its
 *    prompts or outputs.
 */
(function () {
  "use strict";

  var KEYS = {primary: "mb-hide-primary", secondary: "mb-hide-secondary"};
  var SIDEBARS = {primary: "pst-primary-sidebar", secondary: "pst-secondary-sidebar"};
  var DIALOGS = {primary: "pst-primary-sidebar-modal", secondary: "pst-secondary-sidebar-modal"};

  function stored(key) {
    try { return window.localStorage.getItem(key) === "1"; } catch (e) { return false; }
  }
  function store(key, on) {
    try { window.localStorage.setItem(key, on ? "1" : "0"); } catch (e) { /* private mode */ }
  }

  // On the page, not hidden and not parked off-screen (a narrow window's sidebar).
  function shown(element) {
    if (!element || window.getComputedStyle(element).display === "none") { return false; }
    var box = element.getBoundingClientRect();
    return box.width > 0 && box.right > 0 && box.left < window.innerWidth;
  }

  function setCollapsed(side, collapsed) {
    document.documentElement.classList.toggle(KEYS[side], collapsed);
    document.querySelectorAll("." + side + "-toggle").forEach(function (button) {
      button.setAttribute("aria-expanded", collapsed ? "false" : "true");
    });
  }

  function openDialog(side) {
    // pydata-sphinx-theme's handler sits on the first button of the class: use it, so its
    // dialog logic (moving the sidebar in, restoring it on close) stays the theme's own.
    var first = document.querySelector("." + side + "-toggle");
    var dialog = document.getElementById(DIALOGS[side]);
    if (first && dialog && !dialog.open) {
      first.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true}));
    }
  }

  function toggle(side, event) {
    event.preventDefault();
    event.stopImmediatePropagation();
    var sidebar = document.getElementById(SIDEBARS[side]);
    var collapsed = document.documentElement.classList.contains(KEYS[side]);
    if (collapsed) {
      setCollapsed(side, false);
      store(KEYS[side], false);
      if (shown(sidebar)) { return; }
    }
    if (shown(sidebar)) {
      setCollapsed(side, true);
      store(KEYS[side], true);
    } else {
      openDialog(side);
    }
  }

  function setupToggles() {
    ["primary", "secondary"].forEach(function (side) {
      var buttons = Array.from(document.querySelectorAll("." + side + "-toggle"));
      // the theme's bound button is the first; every other one gets this handler
      buttons.slice(1).forEach(function (button) {
        button.addEventListener("click", function (event) { toggle(side, event); }, true);
      });
      if (stored(KEYS[side])) { setCollapsed(side, true); }
    });
  }

  // -- copy buttons ---------------------------------------------------------------------

  var PROMPT = /^(>>> |\.\.\. |\$ )/;

  function codeText(pre) {
    var lines = pre.innerText.replace(/\n$/, "").split("\n");
    var prompted = lines.some(function (line) { return PROMPT.test(line); });
    if (!prompted) { return lines.join("\n"); }
    return lines.filter(function (line) { return PROMPT.test(line); })
      .map(function (line) { return line.replace(PROMPT, ""); }).join("\n");
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    // a page opened from disk: the old way, through a hidden text area
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function setupCopyButtons() {
    var blocks = document.querySelectorAll(
      "div.cell_input div.highlight pre, div.highlight-python div.highlight pre, " +
      "div.highlight-default div.highlight pre, div.highlight-bash div.highlight pre, " +
      "div.highlight-console div.highlight pre, div.highlight-text div.highlight pre, " +
      "div.highlight-none div.highlight pre, div.highlight-shell div.highlight pre, " +
      "div.highlight-ipython3 div.highlight pre");
    blocks.forEach(function (pre) {
      var box = pre.parentElement;
      if (box.querySelector("button.mb-copy")) { return; }
      var button = document.createElement("button");
      button.type = "button";
      button.className = "mb-copy";
      button.textContent = "copy";
      button.setAttribute("aria-label", "Copy this code");
      button.addEventListener("click", function () {
        copy(codeText(pre)).then(function () {
          button.textContent = "copied";
        }, function () {
          button.textContent = "select and Ctrl+C";
        });
        window.setTimeout(function () { button.textContent = "copy"; }, 2000);
      });
      box.classList.add("mb-has-copy");
      box.insertBefore(button, pre);
    });
  }

  function ready(callback) {
    if (document.readyState !== "loading") { callback(); } else {
      document.addEventListener("DOMContentLoaded", callback);
    }
  }

  ready(function () {
    setupToggles();
    setupCopyButtons();
  });
}());
