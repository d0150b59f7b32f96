import { FieldSet } from './field-set.ts';
import { isJsonObject, ownKeys, setOwn } from './json.ts';
import { type FieldPath, parseElement, serializeElement } from './path-element.ts';

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
  return readLevel(fields, [], set) ? set : undefined;
}

function readLevel(level: Record<string, unknown>, prefix: FieldPath, set: FieldSet): boolean {
  for (const key of ownKeys(level)) {
    const value = level[key];
    if (!isJsonObject(value)) return false;
    if (key === '.') {
      if (prefix.length > 0) set.insert(prefix);
      continue;
    }
    const pe = parseElement(key);
    if (pe === undefined) return false;
    const path = [...prefix, pe];
    if (ownKeys(value).length === 0) set.insert(path);
    else if (!readLevel(value, path, set)) return false;
  }
  return true;
}
