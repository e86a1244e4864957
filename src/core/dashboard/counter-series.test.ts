import { describe, expect, it } from "vitest";
import { parseSeries, sumBy } from "./counter-series.ts";

describe("parseSeries", () => {
  it("splits a series key and undoes label escapes", () => {
    expect(parseSeries('x_total{site="a\\"b",class="SS"}')).toEqual({ name: "x_total", labels: { site: 'a"b', class: "SS" } });
    expect(parseSeries("y_total")).toEqual({ name: "y_total", labels: {} });
  });

  it("sums a counter by one label, leaving out other counters and series without the label", () => {
    const totals = { 'e_total{site="a",x="1"}': 2, 'e_total{site="a",x="2"}': 3, 'e_total{site="b"}': 1, e_total: 9, 'e_total_other{site="a"}': 100 };
    expect(sumBy(totals, "e_total", "site")).toEqual({ a: 5, b: 1 });
  });
});
