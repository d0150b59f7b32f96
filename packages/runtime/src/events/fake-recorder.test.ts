import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { FakeRecorder } from './fake-recorder.ts';

const web: KubeObject = { kind: 'Website', metadata: { name: 'web', namespace: 'shop', uid: 'u1' } };
const api: KubeObject = { kind: 'Website', metadata: { name: 'api', namespace: 'shop' } };

describe('FakeRecorder', () => {
  it('keeps every event as recorded, repeats included, and formats lines like controller-runtime', () => {
    const recorder = new FakeRecorder();
    recorder.event(web, 'Normal', 'Created', 'Create', 'created web');
    recorder.event(web, 'Normal', 'Created', 'Create', 'created web');
    recorder.event(api, 'Warning', 'Failed', 'Deploy', 'no image', web);
    expect(recorder.lines()).toEqual([
      'Normal Created created web',
      'Normal Created created web',
      'Warning Failed no image',
    ]);
    expect(recorder.events[2]).toEqual({
      regarding: api,
      type: 'Warning',
      reason: 'Failed',
      action: 'Deploy',
      note: 'no image',
      related: web,
    });
  });

  it('selects events about one object by uid, or by kind, namespace and name', () => {
    const recorder = new FakeRecorder();
    recorder.event(web, 'Normal', 'A', 'Act', '');
    recorder.event(api, 'Normal', 'B', 'Act', '');
    expect(
      recorder.about({ ...web, metadata: { ...web.metadata, name: 'renamed' } }).map((e) => e.reason),
    ).toEqual(['A']);
    expect(
      recorder.about({ kind: 'Website', metadata: { name: 'api', namespace: 'shop' } }).map((e) => e.reason),
    ).toEqual(['B']);
  });

  it('stops keeping events at maxEvents and counts the rest; clear starts over', () => {
    const recorder = new FakeRecorder({ maxEvents: 2 });
    for (let i = 0; i < 5; i++) recorder.event(web, 'Normal', `R${i}`, 'Act', '');
    expect(recorder.events.map((e) => e.reason)).toEqual(['R0', 'R1']);
    expect(recorder.dropped).toBe(3);
    recorder.clear();
    expect(recorder.events).toEqual([]);
    expect(recorder.dropped).toBe(0);
  });

  it('rejects a maxEvents that is not a whole number', () => {
    expect(() => new FakeRecorder({ maxEvents: 1.5 })).toThrow(OptionsError);
  });
});
