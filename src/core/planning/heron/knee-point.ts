/**
 * The knee of an increasing, convex curve (latency against load), after Kneedle (Satopaa et al.,
 * 2011): with both axes scaled to [0, 1], the point farthest below the chord from the first point
 * to the last, i.e. the largest x - y. Up to the knee latency grows little with load; past it,
 * fast. A flat or single-point curve has its knee at the last point. Returns the index into
 * `points`, which must be sorted by x.
 *
 * @example
 * kneeIndex([{ x: 1, y: 10 }, { x: 2, y: 11 }, { x: 3, y: 13 }, { x: 4, y: 30 }]); // 2
 */
export function kneeIndex(points: readonly { x: number; y: number }[]): number {
  if (points.length <= 2) return points.length - 1;
  const first = points[0]!;
  const last = points[points.length - 1]!;
  const dx = last.x - first.x;
  const dy = last.y - first.y;
  if (dx <= 0 || dy <= 0) return points.length - 1;
  let best = points.length - 1;
  let bestGap = 0;
  points.forEach((p, i) => {
    const gap = (p.x - first.x) / dx - (p.y - first.y) / dy;
    if (gap > bestGap + 1e-12) [best, bestGap] = [i, gap];
  });
  return best;
}
