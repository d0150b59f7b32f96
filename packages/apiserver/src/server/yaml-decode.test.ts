import { describe, expect, it } from 'vitest';
import { decodeYaml, INLINE_YAML_CHARS } from './yaml-decode.ts';

/** A flat YAML mapping of `keys` entries, past the inline limit: decoded in the worker. */
const flat = (keys: number, tag: string): { text: string; object: Record<string, string> } => {
  const object = Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, `${tag}-${i}`]));
  const text = Object.entries(object)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
  return { text, object };
};

describe('YAML bodies decoded in the worker thread', () => {
  it('answers every job, those sent before the worker was ready included, each with its own document', async () => {
    const docs = ['a', 'b', 'c', 'd'].map((tag) => flat(2_000, tag));
    for (const d of docs) expect(d.text.length).toBeGreaterThan(INLINE_YAML_CHARS);
    // All at once: on a fresh worker they are queued before it has loaded.
    const decoded = await Promise.all(docs.map((d) => decodeYaml(d.text)));
    expect(decoded).toEqual(docs.map((d) => d.object));
    // And once it runs.
    expect(await decodeYaml(docs[0]?.text as string)).toEqual(docs[0]?.object);
  });

  it('answers a malformed document with a 400, and the worker keeps serving', async () => {
    const bad = `${flat(2_000, 'x').text}\n  - not: [closed`;
    await expect(decodeYaml(bad)).rejects.toMatchObject({ code: expect.any(String) });
    const good = flat(2_000, 'y');
    expect(await decodeYaml(good.text)).toEqual(good.object);
  });
});
