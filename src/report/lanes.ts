/**
 * Timeline lanes: each interval goes to the lowest lane free at its start (interval
 * partitioning), so that lanes are the run's slots and no two bars of a lane overlap.
 * Returns the lane of each interval, in input order.
 */
export function assignLanes(intervals: readonly { start: number; end: number }[]): number[] {
  const order = intervals.map((_, i) => i).sort((a, b) => intervals[a]!.start - intervals[b]!.start || a - b);
  const laneEnds: number[] = [];
  const lanes = new Array<number>(intervals.length).fill(0);
  for (const i of order) {
    const { start, end } = intervals[i]!;
    let lane = laneEnds.findIndex((laneEnd) => laneEnd <= start);
    if (lane === -1) lane = laneEnds.push(end) - 1;
    else laneEnds[lane] = end;
    lanes[i] = lane;
  }
  return lanes;
}
