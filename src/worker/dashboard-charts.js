/* global window */
// The dashboard's chart options and colours (inlined by dashboard-page.ts before dashboard-client.js,
// which uses the one global it defines, window.DashboardCharts). Plain browser JavaScript; echarts draws with its SVG
// renderer, so every label is a DOM <text> element a browser test can read.
window.DashboardCharts = (function () {
  "use strict";
  /** One colour per kind of series, the same in every chart. */
  var SERIES = { draw: "#2563eb", envelope: "#16a34a", planCap: "#9333ea", carbon: "#78716c", baseline: "#d6d3d1" };
  /** One colour per site (by its place in the fleet), none of them a series colour above. */
  var SITES = ["#0891b2", "#d97706", "#db2777", "#dc2626", "#92400e", "#0f766e", "#ca8a04", "#4f46e5"];
  var FONT = 10;

  function siteColor(index) {
    return SITES[index % SITES.length];
  }

  function kw(w) {
    return w === null || w === undefined ? null : w / 1e3;
  }

  function round(x, digits) {
    return x.toLocaleString("en-US", { maximumFractionDigits: digits });
  }

  /**
   * The power scale of a site's chart: up to what its GPUs can draw at full power (server overhead
   * included), or its highest draw if that is more. An envelope above it cannot be used, so it is
   * drawn clipped at the top and labelled instead of squeezing the draw flat.
   */
  function powerScaleW(site) {
    var top = site.power.capacityW;
    site.history.forEach(function (h) { if (h.drawW > top) top = h.drawW; });
    if (site.power.drawW !== null && site.power.drawW > top) top = site.power.drawW;
    return top > 0 ? top : 1;
  }

  /** [t, value] pairs of one history field in kW (or as is), capped at `cap`, with a null where heartbeats stopped for longer than gapMs. */
  function line(history, key, scale, gapMs, cap) {
    var out = [];
    history.forEach(function (h, i) {
      if (i > 0 && h.tMs - history[i - 1].tMs > gapMs) out.push([history[i - 1].tMs + 1, null]);
      var v = h[key] === null ? null : h[key] * scale;
      out.push([h.tMs, v === null || cap === undefined ? v : Math.min(v, cap)]);
    });
    return out;
  }

  /**
   * A site's chart: draw, envelope (clipped at the power scale, with a label saying how far above
   * it was last), the plan's power cap now, and the carbon intensity on its own axis. The legend
   * sits under the plot, away from the axis names above it.
   */
  function siteOption(site, gapMs, format) {
    var scaleW = powerScaleW(site);
    var topKw = scaleW / 1e3;
    var h = site.history;
    var envelopeNow = site.power.envelopeW;
    var above = envelopeNow !== null && envelopeNow > scaleW;
    var capKw = kw(site.power.planCapW);
    var span = h.length ? [h[0].tMs, h[h.length - 1].tMs] : [];
    return {
      animation: false,
      grid: { left: 46, right: 50, top: 32, bottom: 48 },
      // Above the plot, between the axis names: what the envelope clipped at its top is now (empty when within capacity).
      graphic: { elements: [{ id: "envelope-above", type: "text", silent: true, left: "center", top: 2, style: { text: above ? "envelope " + format.watts(envelopeNow) + " (above site capacity)" : "", fill: SERIES.envelope, fontSize: FONT + 1 } }] },
      legend: { bottom: 0, left: "center", itemWidth: 14, itemHeight: 8, itemGap: 12, textStyle: { fontSize: FONT + 1 } },
      tooltip: { trigger: "axis", valueFormatter: function (v) { return v === null || v === undefined ? "—" : round(v, 2); } },
      // Time labels sit low enough to clear the "0" of the power and carbon axes at either end.
      xAxis: { type: "time", axisLabel: { fontSize: FONT, hideOverlap: true, margin: 12 } },
      yAxis: [
        { type: "value", name: "kW", nameGap: 12, nameTextStyle: { fontSize: FONT }, min: 0, max: topKw, axisLabel: { fontSize: FONT, showMaxLabel: false, formatter: function (v) { return round(v, 1); } } },
        { type: "value", name: "gCO₂/kWh", nameGap: 12, nameTextStyle: { fontSize: FONT }, min: 0, splitLine: { show: false }, axisLabel: { fontSize: FONT } },
      ],
      series: [
        { name: "draw", type: "line", itemStyle: { color: SERIES.draw }, showSymbol: false, areaStyle: { opacity: 0.15 }, data: line(h, "drawW", 1e-3, gapMs) },
        {
          name: "envelope",
          type: "line",
          itemStyle: { color: SERIES.envelope },
          step: "end",
          showSymbol: false,
          lineStyle: { type: "dashed", width: 2 },
          data: line(h, "envelopeW", 1e-3, gapMs, topKw),
        },
        { name: "plan cap now", type: "line", itemStyle: { color: SERIES.planCap }, showSymbol: false, lineStyle: { type: "dotted", width: 2 }, data: capKw === null || !span.length ? [] : span.map(function (t) { return [t, Math.min(capKw, topKw)]; }) },
        { name: "carbon", type: "line", itemStyle: { color: SERIES.carbon }, step: "end", showSymbol: false, yAxisIndex: 1, lineStyle: { width: 1 }, data: line(h, "carbonGPerKwh", 1, gapMs) },
      ],
    };
  }

  /** Routing shares per class, plan and measured side by side, stacked by site in the sites' colours. */
  function sharesOption(state) {
    var cats = [];
    state.classes.forEach(function (c) { cats.push(c.id + "\nplan", c.id + "\nnow"); });
    return {
      animation: false,
      grid: { left: 48, right: 12, top: 34, bottom: 44 },
      legend: { top: 0, textStyle: { fontSize: FONT + 1 } },
      tooltip: { trigger: "axis", axisPointer: { type: "shadow" }, valueFormatter: function (v) { return v === null || v === undefined ? "—" : round(v, 1) + " %"; } },
      xAxis: { type: "category", data: cats, axisLabel: { fontSize: FONT + 1, interval: 0, lineHeight: 14 } },
      yAxis: { type: "value", max: 100, axisLabel: { formatter: "{value} %", fontSize: FONT } },
      series: state.sites.map(function (s, i) {
        var data = [];
        state.classes.forEach(function (c) {
          data.push(c.planShares[s.id] === undefined ? 0 : c.planShares[s.id] * 100);
          data.push(c.measuredShares === null ? null : (c.measuredShares[s.id] || 0) * 100);
        });
        return { name: s.id, type: "bar", stack: "share", itemStyle: { color: siteColor(i) }, barMaxWidth: 26, data: data };
      }),
    };
  }

  /** Carbon of the requests served against the baseline's, in grams. */
  function carbonOption(energy, format) {
    return {
      animation: false,
      grid: { left: 70, right: 60, top: 6, bottom: 22 },
      xAxis: { type: "value", axisLabel: { fontSize: FONT, formatter: function (v) { return format.grams(v); } } },
      yAxis: { type: "category", data: ["baseline", "actual"], axisLabel: { fontSize: FONT + 1 } },
      series: [{ type: "bar", barMaxWidth: 22, label: { show: true, position: "right", fontSize: FONT + 1, formatter: function (x) { return format.grams(x.value); } },
        data: [{ value: energy.baseline.carbonG, itemStyle: { color: SERIES.baseline } }, { value: energy.carbonG, itemStyle: { color: SERIES.carbon } }] }],
    };
  }

  return { SERIES: SERIES, siteColor: siteColor, powerScaleW: powerScaleW, siteOption: siteOption, sharesOption: sharesOption, carbonOption: carbonOption };
})();
