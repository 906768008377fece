// mvserver console: confirmation dialogs, filters that apply at once,
// the run chart's tooltip, and reloading while something runs. The pages
// work without it, minus these conveniences.
(function () {
  "use strict";

  document.querySelectorAll("[data-dialog]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var d = document.getElementById(btn.getAttribute("data-dialog"));
      if (d && typeof d.showModal === "function") {
        d.showModal();
      }
    });
  });

  document.querySelectorAll("select[data-autosubmit]").forEach(function (sel) {
    sel.addEventListener("change", function () {
      sel.form.submit();
    });
  });

  // Filter the overview's rows as one types; the form still filters on
  // the server when submitted.
  document.querySelectorAll("input[data-live-filter]").forEach(function (input) {
    var table = document.getElementById(input.getAttribute("data-live-filter"));
    if (!table) {
      return;
    }
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      table.querySelectorAll("tbody tr").forEach(function (tr) {
        var name = (tr.getAttribute("data-name") || "").toLowerCase();
        tr.hidden = q !== "" && name.indexOf(q) < 0;
      });
    });
  });

  var tip = document.createElement("div");
  tip.className = "tip";
  document.body.appendChild(tip);
  document.querySelectorAll("svg.chart .bar").forEach(function (bar) {
    bar.addEventListener("mousemove", function (e) {
      tip.textContent = bar.getAttribute("data-tip");
      tip.style.display = "block";
      tip.style.left = Math.min(e.clientX + 12, window.innerWidth - 430) + "px";
      tip.style.top = e.clientY + 14 + "px";
    });
    bar.addEventListener("mouseleave", function () {
      tip.style.display = "none";
    });
  });

  // While a refresh or an action runs, reload now and then to show how it
  // ended, unless a dialog is open.
  if (document.body.getAttribute("data-poll") === "1") {
    window.setTimeout(function again() {
      if (document.querySelector("dialog[open]")) {
        window.setTimeout(again, 1500);
        return;
      }
      var u = new URL(window.location.href);
      window.location.replace(u.toString());
    }, 1500);
  }
})();
