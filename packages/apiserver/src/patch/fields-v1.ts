import { FieldSet } from './field-set.ts';
import { isJsonObject, ownKeys, setOwn } from './json.ts';
import { parseElement, serializeElement } from './path-element.ts';

/**
 * The FieldsV1 encoding of a set: a JSON object whose keys are path elements (`f:data`,
 * `k:{"name":"app"}`, `v:"x"`, `i:0`); `{}` marks a member with nothing below, and a `.` key marks
 * a node that is a member and has members below it.
 *
 * @example
 * toFieldsV1(set) // { 'f:data': { '.': {}, 'f:a': {} } }
 */
export function toFieldsV1(set: FieldSet): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  writeLevel(set, out);
  return out;
}

function writeLevel(set: FieldSet, target: Record<string, unknown>): void {
  for (const { pe, member, below } of set.entries()) {
    const value: Record<string, unknown> = {};
    if (member && !below.empty) value['.'] = {};
    writeLevel(below, value);
    setOwn(target, serializeElement(pe), value);
  }
}

/** Decodes FieldsV1; undefined when the value is not a valid encoding. */
export function fromFieldsV1(fields: unknown): FieldSet | undefined {
  if (!isJsonObject(fields)) return undefined;
  const set = new FieldSet();
  return readLevel(fields, set) === 'invalid' ? undefined : set;
}

/**
 * Reads one level into `set` (the set below the level's node): `member` when the level holds a
 * `.` (its node is a member itself), `invalid` when it is not a valid encoding. Built level by
 * level, so no path is copied or serialized again for each field.
 */
function readLevel(level: Record<string, unknown>, set: FieldSet): 'member' | 'node' | 'invalid' {
  let member = false;
  for (const key of ownKeys(level)) {
    const value = level[key];
    if (!isJsonObject(value)) return 'invalid';
    if (key === '.') {
      member = true;
      continue;
    }
    const pe = parseElement(key);
    if (pe === undefined) return 'invalid';
    // A field name's key is its serialized element; other elements are normalized (key order, escapes).
    const id = pe.kind === 'field' ? key : serializeElement(pe);
    if (isEmptyObject(value)) {
      set.insertMember(pe, id);
      continue;
    }
    const below = readLevel(value, set.levelBelow(pe, id));
    if (below === 'invalid') return 'invalid';
    if (below === 'member') set.insertMember(pe, id);
  }
  return member ? 'member' : 'node';
}

/** True for an object without defined own members, without listing its keys. */
function isEmptyObject(object: Record<string, unknown>): boolean {
  for (const key in object) if (Object.hasOwn(object, key) && object[key] !== undefined) return false;
  return true;
}
