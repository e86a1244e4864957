/* global document, sessionStorage, fetch, setTimeout */
// The dashboard's table of API keys' carbon (inlined by dashboard-page.ts after dashboard-client.js):
// it polls GET /dashboard/v1/keys with the token the page holds and renders one row per key into
// [data-field="key-budgets"]. Hooks: `[data-key="<id>"]` rows with `[data-field="key-budget-g"]`,
// `[data-field="key-spent-g"]`, `[data-field="key-pace"]`, `[data-field="key-state"]`
// ("no budget" | "on pace" | "over pace" | "exhausted") and `[data-field="key-today-g"]`, each number
// also in `data-value`.
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("dashboard-config").textContent);
  var holder = document.querySelector('[data-field="key-budgets"]');
  var TOKEN_KEY = "greenference.dashboard.token";

  function cell(text, name, value) {
    var td = document.createElement("td");
    td.textContent = text;
    if (name) {
      td.setAttribute("data-field", name);
      td.setAttribute("data-value", value === null || value === undefined ? "" : String(value));
    }
    return td;
  }
  function grams(g) {
    if (g >= 1000) return (g / 1000).toFixed(2) + " kg";
    if (g >= 10) return g.toFixed(0) + " g";
    return g >= 1 ? g.toFixed(2) + " g" : (g * 1000).toFixed(g >= 0.01 ? 0 : 2) + " mg";
  }
  function stateOf(k) {
    if (!k.period) return "no budget";
    if (k.period.exhausted) return "exhausted";
    return k.period.pace > 1 ? "over pace" : "on pace";
  }

  function render(view) {
    var body = holder.querySelector("tbody");
    body.textContent = "";
    view.keys.forEach(function (k) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-key", k.id);
      tr.appendChild(cell(k.name + " (" + k.id + ")"));
      tr.appendChild(cell(k.budget ? grams(k.budget.gco2e) + " / " + k.budget.period : "—", "key-budget-g", k.budget ? k.budget.gco2e : null));
      tr.appendChild(cell(k.period ? grams(k.period.spentG) : "—", "key-spent-g", k.period ? k.period.spentG : null));
      tr.appendChild(cell(k.period ? k.period.pace.toFixed(2) + "×" + (k.period.price > 0 ? " (price " + k.period.price.toFixed(2) + ")" : "") : "—", "key-pace", k.period ? k.period.pace : null));
      tr.appendChild(cell(stateOf(k), "key-state", stateOf(k)));
      tr.appendChild(cell(grams(k.todayG), "key-today-g", k.todayG));
      body.appendChild(tr);
    });
    holder.querySelector('[data-field="key-note"]').textContent = view.keys.length === 0 ? "No API keys yet." : view.notShown > 0 ? view.notShown + " more keys not shown." : "";
    holder.setAttribute("data-updated-at", String(view.generatedAtMs));
  }

  function poll() {
    var token = sessionStorage.getItem(TOKEN_KEY);
    fetch(config.keysUrl, { headers: token ? { authorization: "Bearer " + token } : {}, cache: "no-store" })
      .then(function (r) { return r.ok ? r.json().then(render) : null; })
      .catch(function () { /* the next poll tries again; the state poll reports errors */ })
      .then(function () { setTimeout(poll, config.keysRefreshMs); });
  }
  if (holder) poll();
})();
