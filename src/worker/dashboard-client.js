/* global document, window, location, history, sessionStorage, fetch, setTimeout, clearTimeout, URLSearchParams, echarts, DashboardCharts */
// The dashboard page's script (inlined by dashboard-page.ts after dashboard-charts.js; the hooks it
// keeps are listed there). Plain browser JavaScript: it polls the state endpoint and renders
// DashboardState, its charts with echarts.
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("dashboard-config").textContent);
  var root = document.getElementById("dashboard");
  var params = new URLSearchParams(location.search);
  var refreshMs = Math.max(500, Number(params.get("refreshMs")) || 2000);
  var TOKEN_KEY = "greenference.dashboard.token";
  if (params.get("token")) {
    sessionStorage.setItem(TOKEN_KEY, params.get("token"));
    params.delete("token");
    history.replaceState(null, "", location.pathname + (params.toString() ? "?" + params : ""));
  }
  var charts = {};
  var layoutKey = null;
  var last = null;
  var timer = null;

  // ---- formatting ----
  function num(x, digits) {
    return x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
  }
  function watts(w) {
    if (w === null || w === undefined) return null;
    if (Math.abs(w) >= 1e6) return num(w / 1e6, 2) + " MW";
    if (Math.abs(w) >= 1e3) return num(w / 1e3, 1) + " kW";
    return num(w, 0) + " W";
  }
  function grams(g) {
    if (g === null || g === undefined) return null;
    if (Math.abs(g) >= 1e6) return num(g / 1e6, 2) + " t";
    if (Math.abs(g) >= 1e3) return num(g / 1e3, 2) + " kg";
    if (Math.abs(g) >= 1 || g === 0) return num(g, 1) + " g";
    return num(g * 1e3, 1) + " mg";
  }
  function kwh(j) {
    if (j === null || j === undefined) return null;
    var k = j / 3.6e6;
    return k >= 1 ? num(k, 2) + " kWh" : num(k * 1000, 1) + " Wh";
  }
  function pct(x) {
    return x === null || x === undefined ? null : num(x * 100, 1) + " %";
  }
  function minutes(ms) {
    return num(ms / 60000, 1) + " min";
  }
  /** An SLO window figure: the attainment, or why there is none. */
  function sloText(w) {
    return w.attainment !== null ? pct(w.attainment) : w.judged === 0 ? "no requests" : "too few requests";
  }
  function sloNote(w, min) {
    return w.attainment !== null ? num(w.met, 0) + " of " + num(w.judged, 0) + " met" : w.judged === 0 ? "none judged yet" : num(w.judged, 0) + " judged; needs " + min;
  }
  function age(ms) {
    if (ms === null || ms === undefined) return null;
    var s = Math.round(ms / 1000);
    if (s < 60) return s + " s ago";
    if (s < 3600) return Math.round(s / 60) + " min ago";
    return num(s / 3600, 1) + " h ago";
  }
  function clock(ms) {
    return new Date(ms).toLocaleTimeString("en-GB", { hour12: false });
  }
  function clockSetting(c) {
    return c.mode === "locked" ? c.mhz + " MHz" : c.policy + " " + c.minMhz + "–" + c.maxMhz;
  }

  // ---- DOM helpers ----
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }
  function field(scope, name) {
    return scope.querySelector('[data-field="' + name + '"]');
  }
  /** Sets a hook's text (or "—"/the given placeholder when unknown) and its raw data-value. */
  function put(scope, name, text, value, unknown) {
    var node = field(scope, name);
    if (!node) return;
    node.textContent = text === null || text === undefined ? unknown || "—" : text;
    node.setAttribute("data-value", value === null || value === undefined ? "" : String(value));
    node.classList.toggle("unknown", text === null || text === undefined);
  }
  function metric(name, label, extra) {
    return el("div", { class: "metric" + (extra ? " " + extra : "") }, [el("div", { class: "k", text: label }), el("div", { class: "v", "data-field": name, "data-value": "" }), el("div", { class: "sub", "data-field": name + "-note" })]);
  }
  function tile(name, label, subName) {
    return el("div", { class: "tile" }, [el("div", { class: "k", text: label }), el("div", { class: "v", "data-field": name, "data-value": "" }), el("div", { class: "sub", "data-field": subName || "" })]);
  }
  function chartIn(holder, key) {
    if (!charts[key] && typeof echarts !== "undefined") charts[key] = echarts.init(holder.querySelector(".plot"), null, { renderer: "svg" });
    return charts[key] || null;
  }
  function emptyState(holder, message) {
    var e = holder.querySelector(".empty");
    e.textContent = message || "";
    e.style.display = message ? "flex" : "none";
  }
  function chartBox(id, extra) {
    return el("div", { class: "chart", id: id || "", style: extra || "" }, [el("div", { class: "plot", style: "position:absolute;inset:0" }), el("div", { class: "empty", text: "no data yet" })]);
  }

  // ---- layout (rebuilt only when the fleet's sites or classes change) ----
  function build(state) {
    Object.keys(charts).forEach(function (k) { charts[k].dispose(); });
    charts = {};
    var content = field(root, "content");
    content.textContent = "";
    if (!state.fleet) {
      content.appendChild(el("div", { class: "panel nofleet", text: "No fleet configured yet. Put one with PUT /admin/v1/fleet; sites appear here once it exists." }));
      return;
    }
    content.appendChild(
      el("div", { class: "tiles" }, [
        tile("fleet-health", "Sites healthy", "fleet-health-sub"),
        tile("fleet-draw-w", "Draw / usable power", "fleet-envelope-w"),
        el("div", { class: "tile" }, [el("div", { class: "k", "data-field": "fleet-slo-label", text: "SLO attainment" }), el("div", { class: "v", "data-field": "fleet-slo-attainment", "data-value": "" }), el("div", { class: "sub", "data-field": "fleet-slo-note" })]),
        tile("carbon-g", "Carbon so far", "baseline-carbon-g"),
        tile("energy-j", "Energy so far", "baseline-energy-j"),
      ]),
    );
    var sites = el("div", { class: "sites" });
    var windowLabel = "last " + minutes(state.slo.windowMs);
    state.sites.forEach(function (s, i) {
      sites.appendChild(
        el("section", { class: "card", "data-site": s.id, "data-healthy": "false" }, [
          el("h2", {}, [el("i", { class: "swatch", style: "background:" + DashboardCharts.siteColor(i) }), el("span", { text: s.id }), el("span", { class: "badge", "data-field": "health", text: "—" })]),
          el("div", { class: "where", "data-field": "where" }),
          el("div", { class: "metrics" }, [
            metric("power-envelope-w", "Envelope"),
            el("div", { class: "metric" }, [el("div", { class: "k", text: "Draw" }), el("div", { class: "v", "data-field": "power-draw-w", "data-value": "" }), el("div", { class: "bar", "data-field": "draw-bar" }, [el("i")]), el("div", { class: "sub", "data-field": "power-draw-w-note" })]),
            metric("power-capacity-w", "Capacity"),
            metric("plan-cap-w", "Plan cap"),
            metric("applied-plan-version", "Plan applied"),
            metric("slo-attainment", "SLO (" + windowLabel + ")"),
            metric("carbon-g-per-kwh", "Carbon gCO₂/kWh"),
            metric("site-energy", "Carbon here"),
            metric("gpus", "GPUs · SM clocks now", "wide"),
          ]),
          chartBox(),
          el("div", { class: "small", "data-field": "served-rps" }),
          el("table", {}, [el("thead", {}, [el("tr", {}, ["Instance", "TP×n", "Role", "Clock", "State", "Queue", "p99 TTFT"].map(function (h) { return el("th", { text: h }); }))]), el("tbody", { "data-field": "instances" })]),
        ]),
      );
    });
    content.appendChild(sites);
    var classRows = state.classes.map(function (c) {
      return el("tr", { "data-class": c.id }, [
        el("td", { text: c.id }),
        el("td", { text: c.tier }),
        el("td", { text: c.slo.ttftMs + " / " + c.slo.tbtMs + " ms" }),
        el("td", { "data-field": "class-served-rps" }),
        el("td", { "data-field": "class-routed" }),
        el("td", { "data-field": "class-slo-attainment" }),
      ]);
    });
    content.appendChild(
      el("div", { class: "lower" }, [
        el("div", { class: "panel" }, [
          el("h3", { text: "Routing shares per class: plan weights and measured now" }),
          chartBox("shares-chart", "height:280px"),
          el("table", {}, [el("thead", {}, [el("tr", {}, ["Class", "Tier", "SLO TTFT / TBT (p99)", "Served", "Routed so far", "SLO (" + windowLabel + ")"].map(function (h) { return el("th", { text: h }); }))]), el("tbody", {}, classRows)]),
          el("div", { class: "method", "data-field": "slo-method" }),
        ]),
        el("div", { class: "panel" }, [
          el("h3", { text: "Energy and carbon against the baseline" }),
          chartBox("carbon-chart", "height:120px"),
          el("div", { "data-field": "saving" }),
          el("div", { class: "method", "data-field": "baseline-method" }),
          el("h3", { text: "Plan", style: "margin-top:14px" }),
          el("div", { class: "small", "data-field": "plan-detail" }),
          el("ul", { class: "small", "data-field": "plan-notes" }),
        ]),
      ]),
    );
    content.appendChild(
      el("div", { class: "panel" }, [
        el("h3", { text: "What the policy decides" }),
        el("div", { class: "small", "data-field": "policy-levers" }),
        el("table", {}, [el("thead", {}, [el("tr", {}, ["Site", "Variants", "MIG slices", "Roles", "Clocks", "Queue / decode / balance", "Jain fairness", "Prefill handoffs", "Emergency ladder"].map(function (h) { return el("th", { text: h }); }))]), el("tbody", { "data-field": "policy-decisions" })]),
        el("h3", { text: "Planner-S corrections", style: "margin-top:14px" }),
        el("ul", { class: "small", "data-field": "corrections" }),
      ]),
    );
  }

  function renderDecisions(state) {
    var d = state.decisions;
    if (!d) return;
    var levers = [d.policy + ": " + d.summary, "fleet planner " + d.fleetPlanner + " every " + d.cadenceMinutes + " min", "corrector " + (d.corrector || "none"), "clock " + d.clockPolicy];
    if (d.carbonTrigger !== null) levers.push("carbon trigger at " + pct(d.carbonTrigger));
    levers.push("plan revision " + d.revision);
    field(root, "policy-levers").textContent = levers.join(" · ");
    var body = field(root, "policy-decisions");
    body.textContent = "";
    var list = function (xs) { return xs.length ? xs.join(", ") : "—"; };
    d.sites.forEach(function (s) {
      body.appendChild(
        el("tr", { "data-decision-site": s.site }, [
          el("td", { text: s.site }),
          el("td", { text: list(s.variants) }),
          el("td", { text: list(s.migSlices) }),
          el("td", { text: list(s.roles) }),
          el("td", { text: list(s.clocks) }),
          el("td", { text: s.queue + " / " + s.decodeRouting + " / " + s.balance }),
          el("td", { "data-field": "fairness", "data-value": s.fairness === null ? "" : String(s.fairness), text: s.fairness === null ? "—" : num(s.fairness, 3) }),
          el("td", { "data-field": "prefill-handoffs", text: s.prefillHandoffs === null ? "—" : s.prefillHandoffs.handedOff + " handed off, " + s.prefillHandoffs.whole + " whole, " + s.prefillHandoffs.failed + " failed" }),
          el("td", { "data-field": "emergencies", text: s.emergencies === null ? "—" : s.emergencies.length === 0 ? "none" : s.emergencies.map(function (e) { return e.instance + ": " + e.step + ", " + e.held + " held"; }).join("; ") }),
        ]),
      );
    });
    var corrections = field(root, "corrections");
    corrections.textContent = "";
    if (!d.corrections.length) corrections.appendChild(el("li", { text: d.corrector ? "none yet" : "this policy has no corrector" }));
    d.corrections.forEach(function (c) {
      corrections.appendChild(el("li", { text: clock(c.atMs) + " v" + c.planVersion + "." + c.revision + ": " + c.clocks + " clocks, " + c.classes + " classes re-weighted (" + c.reason + ")" }));
    });
  }

  // ---- rendering ----
  function render(state) {
    var key = state.fleet ? state.sites.map(function (s) { return s.id; }).join(",") + "|" + state.classes.map(function (c) { return c.id; }).join(",") : "none";
    if (key !== layoutKey) {
      build(state);
      layoutKey = key;
    }
    root.setAttribute("data-state", state.fleet ? "ok" : "no-fleet");
    root.setAttribute("data-updated-at", String(state.generatedAtMs));
    var p = state.plan;
    put(root, "plan-version", p ? "v" + p.version : null, p ? p.version : null, "none yet");
    put(root, "plan-policy", p ? p.policy : state.fleet ? state.fleet.policy.kind : null, null);
    put(root, "plan-made-at", p ? clock(p.madeAtMs) + " (" + age(state.generatedAtMs - p.madeAtMs) + ")" : null, p ? p.madeAtMs : null);
    field(root, "status").textContent = "updated " + clock(state.generatedAtMs) + " · every " + refreshMs / 1000 + " s";
    field(root, "banner").textContent = "";
    if (!state.fleet) return;
    renderTiles(state);
    // Heartbeats further apart than this break the lines (the site was silent).
    var gapMs = Math.max(15000, 2 * state.heartbeatTimeoutMs);
    state.sites.forEach(function (s) { renderSite(s, gapMs, state.slo.minRequests); });
    renderClasses(state);
    renderEnergy(state);
    renderDecisions(state);
  }

  /** What a site can use now: its envelope up to its full power (all of it where no envelope is known). */
  function usableW(s) {
    return s.power.envelopeW === null ? s.power.capacityW : Math.min(s.power.envelopeW, s.power.capacityW);
  }

  function renderTiles(state) {
    var healthy = state.sites.filter(function (s) { return s.health.healthy; }).length;
    put(root, "fleet-health", healthy + " / " + state.sites.length, healthy);
    put(root, "fleet-health-sub", state.sites.filter(function (s) { return s.health.lastSeenMs === null; }).length + " never heard from", null);
    var draws = state.sites.map(function (s) { return s.power.drawW; }).filter(function (w) { return w !== null; });
    var draw = draws.length ? draws.reduce(function (a, b) { return a + b; }, 0) : null;
    var usable = state.sites.reduce(function (a, s) { return a + usableW(s); }, 0);
    var envs = state.sites.map(function (s) { return s.power.envelopeW; });
    var envelope = envs.length && envs.every(function (w) { return w !== null; }) ? envs.reduce(function (a, b) { return a + b; }, 0) : null;
    put(root, "fleet-draw-w", watts(draw), draw);
    put(root, "fleet-envelope-w", "of " + watts(usable) + " usable" + (envelope === null ? "" : " · envelopes " + watts(envelope)), usable);
    var slo = state.slo;
    field(root, "fleet-slo-label").textContent = "SLO attainment (last " + minutes(slo.windowMs) + ", " + num(slo.judged, 0) + " request" + (slo.judged === 1 ? "" : "s") + ")";
    put(root, "fleet-slo-attainment", sloText(slo), slo.attainment);
    var served = state.classes.reduce(function (a, c) { return a + (c.servedRps || 0); }, 0);
    put(root, "fleet-slo-note", sloNote(slo, slo.minRequests) + " · " + num(served, 2) + " req/s served now", slo.judged);
    var e = state.energy;
    put(root, "carbon-g", grams(e.carbonG), e.carbonG);
    put(root, "baseline-carbon-g", e.baseline.carbonG === null ? "baseline not known" : "baseline " + grams(e.baseline.carbonG), e.baseline.carbonG);
    put(root, "energy-j", kwh(e.energyJ), e.energyJ);
    put(root, "baseline-energy-j", e.baseline.energyJ === null ? "baseline energy not known" : "baseline " + kwh(e.baseline.energyJ), e.baseline.energyJ);
  }

  function renderSite(s, gapMs, minRequests) {
    var card = root.querySelector('[data-site="' + s.id + '"]');
    if (!card) return;
    card.setAttribute("data-healthy", String(s.health.healthy));
    var badge = field(card, "health");
    badge.textContent = s.health.lastSeenMs === null ? "no heartbeat yet" : (s.health.healthy ? "healthy" : "stale") + " · " + age(s.health.heartbeatAgeMs);
    badge.className = "badge " + (s.health.lastSeenMs === null ? "" : s.health.healthy ? "ok" : "bad");
    field(card, "where").textContent = s.region + " · " + s.power.source + " power · carbon from " + s.carbon.source + " (" + s.carbon.signal + ")";
    var pw = s.power;
    put(card, "power-envelope-w", watts(pw.envelopeW), pw.envelopeW, pw.source === "grid" ? "no cap" : "unknown");
    field(card, "power-envelope-w-note").textContent =
      (pw.envelopeFrom === "forecast" ? "power forecast" : pw.envelopeFrom === "fleet" ? "fleet cap" : pw.source === "wind" ? "no power forecast" : "") +
      (pw.envelopeW !== null && pw.envelopeW > pw.capacityW ? " · above site capacity" : "");
    put(card, "power-draw-w", watts(pw.drawW), pw.drawW, "no data yet");
    var usable = usableW(s);
    var ratio = pw.drawW !== null && usable > 0 ? pw.drawW / usable : null;
    var bar = field(card, "draw-bar");
    bar.firstChild.style.width = ratio === null ? "0" : Math.min(100, ratio * 100) + "%";
    bar.className = "bar" + (ratio === null ? "" : ratio > 1 ? " hot" : ratio > 0.9 ? " warm" : "");
    field(card, "power-draw-w-note").textContent = ratio === null ? "" : num(ratio * 100, 0) + " % of " + watts(usable) + " usable";
    put(card, "power-capacity-w", watts(pw.capacityW), pw.capacityW);
    field(card, "power-capacity-w-note").textContent = "GPUs at TDP with server overhead";
    put(card, "plan-cap-w", watts(pw.planCapW), pw.planCapW, "no plan here");
    field(card, "plan-cap-w-note").textContent = pw.planCapW !== null && pw.planCapW > pw.capacityW ? "above site capacity" : "";
    put(card, "carbon-g-per-kwh", num(s.carbon.gPerKwh, 0), s.carbon.gPerKwh);
    field(card, "carbon-g-per-kwh-note").textContent = s.carbon.origin === "default" ? "default: nothing reported yet" : s.carbon.origin === "reported" ? "reported" : "from the fleet";
    put(card, "site-energy", grams(s.carbonG), s.carbonG);
    field(card, "site-energy-note").textContent = kwh(s.energyJ) + " served";
    var clocks = s.gpus.reported.map(function (g) { return g.smClockMhz; });
    var distinct = clocks.filter(function (c, i) { return clocks.indexOf(c) === i; }).sort(function (a, b) { return b - a; });
    var clockText = distinct.length ? " · " + distinct.slice(0, 4).join(" / ") + (distinct.length > 4 ? " …" : "") + " MHz" : "";
    put(card, "gpus", s.gpus.configured.map(function (g) { return g.count + "× " + g.type; }).join(", ") + clockText, s.gpus.total);
    field(card, "gpus-note").textContent = s.gpus.reported.length ? s.gpus.reported.filter(function (g) { return g.lockedClockMhz !== null; }).length + " of " + s.gpus.reported.length + " locked · GPUs draw " + watts(pw.gpuDrawW) : "no GPU readings yet";
    put(card, "slo-attainment", sloText(s.sloWindow), s.sloWindow.attainment);
    field(card, "slo-attainment-note").textContent = sloNote(s.sloWindow, minRequests);
    put(card, "applied-plan-version", s.appliedPlanVersion === null ? null : "v" + s.appliedPlanVersion, s.appliedPlanVersion, "none");
    var served = s.servedRps ? Object.keys(s.servedRps).filter(function (c) { return s.servedRps[c] > 0; }) : [];
    put(card, "served-rps", s.servedRps === null ? null : served.length ? "Served now: " + served.map(function (c) { return c + " " + num(s.servedRps[c], 2); }).join(" · ") + " req/s" : "Served now: nothing", null, "Served now: no heartbeat yet");
    var body = field(card, "instances");
    body.textContent = "";
    s.instances.forEach(function (i) {
      var pl = i.planned;
      var r = i.reported;
      body.appendChild(el("tr", {}, [
        el("td", { text: i.id }),
        el("td", { text: pl ? pl.tp + "×" + pl.replicas : "—" }),
        el("td", { text: pl ? pl.role : "—" }),
        el("td", i.controllerFault ? { text: (pl ? clockSetting(pl.clock) : "—") + " · no " + i.controllerFault.policy + " controller", title: i.controllerFault.reason, class: "warn" } : { text: pl ? clockSetting(pl.clock) : "—" }),
        el("td", { text: r ? r.state : "not reported" }),
        el("td", { text: r ? r.waiting + " / " + r.running : "—" }),
        el("td", { text: r && r.ttftP99Ms !== null ? num(r.ttftP99Ms, 0) + " ms" : "—" }),
      ]));
    });
    if (!s.instances.length) body.appendChild(el("tr", {}, [el("td", { colspan: "7", class: "small", text: "no instances planned or reported" })]));
    var holder = card.querySelector(".chart");
    emptyState(holder, s.history.length ? "" : "no heartbeat yet");
    holder.setAttribute("data-power-scale-w", String(DashboardCharts.powerScaleW(s)));
    var chart = chartIn(holder, "site:" + s.id);
    if (chart) chart.setOption(DashboardCharts.siteOption(s, gapMs, { watts: watts }));
  }

  function renderClasses(state) {
    state.classes.forEach(function (c) {
      var row = root.querySelector('[data-class="' + c.id + '"]');
      if (!row) return;
      put(row, "class-served-rps", c.servedRps === null ? null : num(c.servedRps, 2) + " req/s", c.servedRps, "no healthy site");
      put(row, "class-routed", num(c.routedRequests, 0), c.routedRequests);
      var w = c.sloWindow;
      put(row, "class-slo-attainment", sloText(w) + (w.judged > 0 ? " (" + num(w.met, 0) + "/" + num(w.judged, 0) + ")" : ""), w.attainment);
    });
    field(root, "slo-method").textContent = "SLO attainment: " + state.slo.method;
    var holder = document.getElementById("shares-chart");
    var anyPlan = state.classes.some(function (c) { return Object.keys(c.planShares).length > 0; });
    var anyMeasured = state.classes.some(function (c) { return c.measuredShares !== null; });
    emptyState(holder, anyPlan || anyMeasured ? "" : state.plan ? "the plan routes no class yet" : "no plan yet");
    var chart = chartIn(holder, "shares");
    if (chart) chart.setOption(DashboardCharts.sharesOption(state), { replaceMerge: ["series"] });
  }

  function renderEnergy(state) {
    var e = state.energy;
    field(root, "baseline-method").textContent = "Baseline: " + e.baseline.name + ". " + e.baseline.method;
    var saving = field(root, "saving");
    saving.textContent =
      e.savedCarbonG === null ? "Carbon saved: not known yet." :
      "Carbon saved against the baseline: " + grams(e.savedCarbonG) + (e.savedCarbonFraction === null ? "" : " (" + pct(e.savedCarbonFraction) + ")") + " over " + kwh(e.energyJ) + " served.";
    saving.setAttribute("data-value", e.savedCarbonG === null ? "" : String(e.savedCarbonG));
    var p = state.plan;
    field(root, "plan-detail").textContent = p
      ? "Version " + p.version + " by " + p.policy + ", made " + new Date(p.madeAtMs).toLocaleString("en-GB") + (p.storedAtMs === null ? "" : ", published " + clock(p.storedAtMs)) + ", valid until " + new Date(p.validUntilMs).toLocaleString("en-GB") + "." +
        (Object.keys(p.shortfall).length ? " Shortfall: " + Object.keys(p.shortfall).map(function (c) { return c + " " + num(p.shortfall[c], 2) + " req/s"; }).join(", ") + "." : "")
      : "No plan yet: sites run nothing the control plane asked for.";
    var notes = field(root, "plan-notes");
    notes.textContent = "";
    (p ? p.notes : []).forEach(function (n) { notes.appendChild(el("li", { text: n })); });
    var holder = document.getElementById("carbon-chart");
    emptyState(holder, e.energyJ > 0 ? "" : "no requests served yet");
    var chart = chartIn(holder, "carbon");
    if (chart) chart.setOption(DashboardCharts.carbonOption(e, { grams: grams }));
  }

  // ---- polling and access ----
  function askForToken(message) {
    root.setAttribute("data-state", "auth");
    layoutKey = null;
    Object.keys(charts).forEach(function (k) { charts[k].dispose(); });
    charts = {};
    var content = field(root, "content");
    content.textContent = "";
    var input = el("input", { type: "password", placeholder: "admin token", autocomplete: "off" });
    var form = el("form", { class: "token panel", style: "padding:14px" }, [el("span", { text: message }), input, el("button", { type: "submit", text: "Open" })]);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      poll();
    });
    content.appendChild(form);
    field(root, "status").textContent = "needs the admin token";
  }

  function poll() {
    if (timer) clearTimeout(timer);
    var token = sessionStorage.getItem(TOKEN_KEY);
    fetch(config.stateUrl, { headers: token ? { authorization: "Bearer " + token } : {}, cache: "no-store" })
      .then(function (r) {
        if (r.status === 401) {
          sessionStorage.removeItem(TOKEN_KEY);
          return r.json().then(function (b) { askForToken((token ? "The token was refused (" + b.error.message + "). " : "") + "This dashboard needs the admin token:"); return null; });
        }
        if (!r.ok) return r.text().then(function (t) { throw new Error("HTTP " + r.status + ": " + t.slice(0, 200)); });
        return r.json().then(function (state) {
          last = state;
          render(state);
          timer = setTimeout(poll, refreshMs);
        });
      })
      .catch(function (err) {
        root.setAttribute("data-state", "error");
        field(root, "banner").textContent = "Could not refresh: " + err.message + ". Showing the last data; retrying.";
        field(root, "status").textContent = last ? "last update " + clock(last.generatedAtMs) : "no data yet";
        timer = setTimeout(poll, refreshMs);
      });
  }

  window.addEventListener("resize", function () {
    Object.keys(charts).forEach(function (k) { charts[k].resize(); });
  });
  if (typeof echarts === "undefined") field(root, "banner").textContent = "The charting library did not load; figures are shown without charts.";
  poll();
})();
