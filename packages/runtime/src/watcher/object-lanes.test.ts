import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../testing/index.ts';
import { type LaneTask, ObjectLanes } from './object-lanes.ts';

function task(log: string[], clock: VirtualClock, label: string, ms: number): LaneTask {
  return {
    run: async () => {
      log.push(`start ${label}@${clock.now()}`);
      await clock.sleep(ms);
    },
  };
}

describe('ObjectLanes', () => {
  it('serves lanes round-robin, one task per turn, so a lane with many tasks does not starve the others', async () => {
    const clock = new VirtualClock();
    const log: string[] = [];
    const lanes = new ObjectLanes<LaneTask>(1, () => undefined);
    for (let i = 0; i < 3; i++) lanes.push('a', task(log, clock, `a${i}`, 10));
    lanes.push('b', task(log, clock, 'b0', 10));
    lanes.push('b', task(log, clock, 'b1', 10));
    await clock.runAll();
    expect(log).toEqual(['start a0@0', 'start b0@10', 'start a1@20', 'start b1@30', 'start a2@40']);
    expect(lanes.stats()).toEqual({ running: 0, queued: 0, lanes: 0 });
  });

  it('removes a waiting task, clears waiting tasks, and survives a task that rejects', async () => {
    const clock = new VirtualClock();
    const log: string[] = [];
    const failures: unknown[] = [];
    const lanes = new ObjectLanes<LaneTask>(2, (error) => failures.push(error));
    const removed = task(log, clock, 'a1', 10);
    lanes.push('a', task(log, clock, 'a0', 10));
    lanes.push('a', removed);
    lanes.push('a', task(log, clock, 'a2', 10));
    lanes.push('b', { run: () => Promise.reject(new Error('broken')) });
    lanes.push('b', task(log, clock, 'b1', 10));
    expect(lanes.remove('a', removed)).toBe(true);
    expect(lanes.remove('a', removed)).toBe(false);
    await clock.advance(10);
    expect(log).toEqual(['start a0@0', 'start b1@0', 'start a2@10']);
    expect(failures).toHaveLength(1);
    lanes.push('c', task(log, clock, 'c0', 10));
    lanes.push('c', task(log, clock, 'c1', 10));
    expect(lanes.clear()).toBe(1);
    await clock.runAll();
    expect(log).toEqual(['start a0@0', 'start b1@0', 'start a2@10', 'start c0@10']);
    expect(lanes.stats()).toEqual({ running: 0, queued: 0, lanes: 0 });
  });
});
