import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withoutManagedFields } from './managed-fields.ts';

type Json = ReturnType<typeof JSON.parse>;

/** What JSON.parse makes of `line`, with the event object's metadata.managedFields deleted. */
function expected(line: string): Json {
  const parsed = JSON.parse(line) as Json;
  const metadata = parsed?.object?.metadata;
  if (
    typeof metadata === 'object' &&
    metadata !== null &&
    !Array.isArray(metadata) &&
    Object.hasOwn(metadata, 'managedFields')
  ) {
    delete metadata.managedFields;
  }
  return parsed;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const managedFields = fc.array(
  fc.record({
    manager: fc.string(),
    operation: fc.constantFrom('Update', 'Apply'),
    fieldsV1: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
  }),
  { maxLength: 4 },
);

/** Event lines whose metadata holds managedFields among other members, in any order and spacing. */
const eventLine = fc
  .tuple(
    fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
    fc.oneof(managedFields, fc.jsonValue()),
    fc.nat(5),
    fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
    fc.constantFrom(undefined, 1, 2, '\t'),
    fc.boolean(),
  )
  .map(([others, fields, position, top, indent, duplicate]) => {
    const entries = Object.entries(others).filter(([key]) => key !== 'managedFields');
    entries.splice(Math.min(position, entries.length), 0, ['managedFields', fields]);
    const metadata = Object.fromEntries(entries);
    const object = { ...top, metadata };
    let text = JSON.stringify({ type: 'ADDED', object }, null, indent);
    // A duplicated key: JSON.parse keeps the last one, and so must the cut.
    if (duplicate) text = text.replace('{', '{"object":{"metadata":{"managedFields":[1]}},');
    return text;
  });

describe('withoutManagedFields', () => {
  it('removes exactly the event object’s metadata.managedFields, whatever else the line holds and however it is spaced', () => {
    fc.assert(
      fc.property(eventLine, (line) => {
        const cut = withoutManagedFields(line);
        // Equal to the parse with managedFields deleted: so the cut happened, and took nothing else.
        expect(JSON.parse(cut)).toEqual(expected(line));
      }),
      { numRuns: 500 },
    );
  });

  it('cuts managedFields out of the text (not merely equal after parsing)', () => {
    const line =
      '{"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[{"manager":"k","fieldsV1":{"f:data":{"k:{\\"x\\"}":{}}}}],"uid":"u"},"data":{"managedFields":"kept"}}}';
    expect(withoutManagedFields(line)).toBe(
      '{"type":"ADDED","object":{"metadata":{"name":"a","uid":"u"},"data":{"managedFields":"kept"}}}',
    );
    expect(withoutManagedFields('{"object":{"metadata":{"managedFields":[]}}}')).toBe(
      '{"object":{"metadata":{}}}',
    );
    expect(withoutManagedFields('{"object":{"metadata":{"managedFields":null, "name":"a"}}}')).toBe(
      '{"object":{"metadata":{"name":"a"}}}',
    );
  });

  it('leaves a line alone where managedFields is elsewhere or missing', () => {
    for (const line of [
      '{"type":"ADDED","object":{"metadata":{"name":"a"}}}',
      '{"type":"ADDED","object":{"spec":{"metadata":{"managedFields":[]}},"metadata":{"name":"a"}}}',
      '{"type":"ADDED","object":{"metadata":{"annotations":{"note":"\\"managedFields\\": []"}}}}',
      '{"type":"ADDED","managedFields":[],"object":{"metadata":{"name":"a"}}}',
      '{"type":"ADDED","object":{"metadata":"managedFields"}}',
    ]) {
      expect(withoutManagedFields(line)).toBe(line);
    }
  });

  it('never turns a line JSON.parse rejects into one it accepts: damage to the structure anywhere is kept', () => {
    // Inserts and deletions of structural characters, letters and digits. Not of backslashes or
    // control characters: the strings of the managedFields cut out are not checked for escapes
    // (that would cost a pass over every character), so a line JSON.parse refuses only for a
    // bad escape inside its managedFields is accepted with them dropped, as documented.
    const damage = fc.string({ unit: fc.constantFrom(...'{}[]:,"x1-. etrufnl'.split('')), maxLength: 3 });
    const broken = fc.tuple(eventLine, fc.nat(), fc.nat(3), damage).map(([line, at, cut, insert]) => {
      const i = at % (line.length + 1);
      const end = Math.min(line.length, i + cut);
      // Nothing next to a backslash: a broken escape is the documented exception.
      if (line[i - 1] === '\\' || line.slice(i, end).includes('\\')) return line;
      return line.slice(0, i) + insert + line.slice(end);
    });
    fc.assert(
      fc.property(fc.oneof(broken, fc.string()), (text) => {
        const cut = withoutManagedFields(text);
        if (cut !== text && parses(cut)) {
          expect(parses(text)).toBe(true);
          expect(JSON.parse(cut)).toEqual(expected(text));
        }
      }),
      { numRuns: 3_000 },
    );
  });

  it('leaves a line nested too deep for the walk to JSON.parse', () => {
    const deep = `{"object":{"metadata":{"managedFields":${'['.repeat(200_000)}${']'.repeat(200_000)}}}}`;
    expect(withoutManagedFields(deep)).toBe(deep);
  });
});
