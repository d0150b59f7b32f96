import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ExpiredError,
  InvalidError,
  TimeoutError,
  UnavailableError,
  UnsupportedError,
} from '../../../backend/index.ts';
import type { KubeObject } from '../../../object/index.ts';
import { createReferenceBackend } from '../reference-backend.ts';
import { configMap, NS, suiteTypes } from '../types.ts';
import { applyJsonPatch } from './patch.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';

const { configMap: CM } = suiteTypes;
const labelled = (labels: Record<string, string>): KubeObject => ({ metadata: { name: 'x', labels } });

describe('reference backend: selectors', () => {
  it('label selectors support > and < on integer values', () => {
    expect(parseLabelSelector('replicas>2')(labelled({ replicas: '3' }))).toBe(true);
    expect(parseLabelSelector('replicas>2')(labelled({ replicas: '2' }))).toBe(false);
    expect(parseLabelSelector('replicas<2')(labelled({ replicas: 'x' }))).toBe(false);
    expect(parseLabelSelector('')(labelled({}))).toBe(true);
  });

  it('malformed label selectors are BadRequestErrors', () => {
    for (const bad of ['a in ()x', 'a,', ',a', 'a=b=c', 'a notin b', '!', 'a>b', 'Bad Key=1']) {
      expect(() => parseLabelSelector(bad), bad).toThrow(BadRequestError);
    }
  });

  it('field selectors accept metadata.name and metadata.namespace only', () => {
    const object = { metadata: { name: 'a', namespace: 'n' } };
    expect(parseFieldSelector('metadata.name=a,metadata.namespace!=m')(object)).toBe(true);
    expect(() => parseFieldSelector('status.phase=Running')).toThrow(BadRequestError);
    expect(() => parseFieldSelector('metadata.name')).toThrow(BadRequestError);
  });
});

describe('reference backend: JSON patch', () => {
  it('moves, copies and appends with -', () => {
    const result = applyJsonPatch({ a: [1, 2], b: { c: 1 } }, [
      { op: 'add', path: '/a/-', value: 3 },
      { op: 'move', from: '/b/c', path: '/d' },
      { op: 'copy', from: '/a/0', path: '/a/0' },
      { op: 'replace', path: '', value: { whole: true } },
      { op: 'add', path: '/list', value: [] },
    ]);
    expect(result).toEqual({ whole: true, list: [] });
  });

  it('rejects paths out of range and moves into a child', () => {
    expect(() => applyJsonPatch({ a: [1] }, [{ op: 'add', path: '/a/5', value: 1 }])).toThrow(InvalidError);
    expect(() => applyJsonPatch({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a/b' }])).toThrow(
      InvalidError,
    );
    expect(() => applyJsonPatch({}, [{ op: 'remove', path: 'no-slash' }])).toThrow(InvalidError);
  });
});

describe('reference backend: behaviour beyond the suite', () => {
  it('lists at an exact resourceVersion until it is compacted; a future one is a TimeoutError', async () => {
    const backend = createReferenceBackend({ types: [CM] });
    const first = await backend.create(CM, configMap('a', { v: '1' }));
    await backend.update(CM, { ...first, data: { v: '2' } });
    const old = first.metadata.resourceVersion ?? '';
    const exact = await backend.list(CM, { resourceVersion: old, resourceVersionMatch: 'Exact' });
    expect(exact.items).toEqual([first]);
    await expect(backend.list(CM, { resourceVersion: '999999' })).rejects.toThrow(TimeoutError);
    await backend.compact();
    await expect(backend.list(CM, { resourceVersion: old, resourceVersionMatch: 'Exact' })).rejects.toThrow(
      ExpiredError,
    );
    await backend.close();
  });

  it('dryRun writes validate and return the result without storing it', async () => {
    const backend = createReferenceBackend({ types: [CM] });
    const made = await backend.create(CM, configMap('a'), { dryRun: true });
    expect(made.metadata.uid).toEqual(expect.any(String));
    expect((await backend.list(CM)).items).toEqual([]);
    await expect(backend.create(CM, configMap('Bad!'), { dryRun: true })).rejects.toThrow(InvalidError);
    await backend.close();
  });

  it('rejects two controller owner references with an InvalidError', async () => {
    const backend = createReferenceBackend({ types: [CM] });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', controller: true };
    const refs = [
      { ...ref, name: 'a', uid: 'uid-a' },
      { ...ref, name: 'b', uid: 'uid-b' },
    ];
    await expect(backend.create(CM, configMap('x', {}, { ownerReferences: refs }))).rejects.toThrow(
      InvalidError,
    );
    await backend.close();
  });

  it('strategic merge and apply patches are UnsupportedErrors; keys outside the scope are BadRequestErrors', async () => {
    const backend = createReferenceBackend({ types: [CM] });
    await backend.create(CM, configMap('a'));
    const key = { namespace: NS, name: 'a' };
    await expect(backend.patch(CM, key, { type: 'strategic', patch: {} })).rejects.toThrow(UnsupportedError);
    await expect(backend.patch(CM, key, { type: 'apply', patch: {} })).rejects.toThrow(UnsupportedError);
    await expect(backend.get(CM, { namespace: '', name: 'a' })).rejects.toThrow(BadRequestError);
    await backend.close();
  });

  it('close ends open watches cleanly and later calls reject with UnavailableError', async () => {
    const backend = createReferenceBackend({ types: [CM] });
    const iterator = backend.watch(CM)[Symbol.asyncIterator]();
    const pending = iterator.next();
    await backend.close();
    expect(await pending).toEqual({ done: true, value: undefined });
    await expect(backend.list(CM)).rejects.toThrow(UnavailableError);
    await expect(backend.watch(CM)[Symbol.asyncIterator]().next()).rejects.toThrow(UnavailableError);
  });
});
