/**
 * Duplicate keys of a JSON body, which `JSON.parse` silently resolves to the last one. kube-apiserver's
 * strict decoder reports them (`duplicate field "spec.replicas"`) under `fieldValidation=Strict` and
 * warns under Warn; {@link noteDuplicateFields} records them for the parsed object and
 * {@link takeDuplicateFields} hands them to the field-validation step.
 */

const recorded = new WeakMap<object, readonly string[]>();

interface Frame {
  readonly object: boolean;
  readonly path: string;
  readonly keys: Set<string>;
  index: number;
  key: string | undefined;
}

function childPath(frame: Frame | undefined): string {
  if (frame === undefined) return '';
  if (!frame.object) return `${frame.path}[${frame.index}]`;
  const key = frame.key ?? '';
  return frame.path === '' ? key : `${frame.path}.${key}`;
}

/** Paths of the duplicate keys in valid JSON text (dotted, with `[i]` for list items), in document order. */
export function duplicateFields(text: string): string[] {
  if (!text.includes('"')) return [];
  const duplicates: string[] = [];
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      let escaped = false;
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) {
          escaped = true;
          i++;
        } else if (d === 0x22) break;
      }
      const top = stack.at(-1);
      if (expectKey && top?.object === true) {
        const raw = text.slice(start + 1, i);
        const key = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : raw;
        top.key = key;
        if (top.keys.has(key)) duplicates.push(childPath(top));
        else top.keys.add(key);
        expectKey = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const parent = stack.at(-1);
      stack.push({ object: c === 0x7b, path: childPath(parent), keys: new Set(), index: 0, key: undefined });
      expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack.at(-1);
      if (top?.object === true) expectKey = true;
      else if (top !== undefined) top.index++;
    }
  }
  return duplicates;
}

/** Records the duplicate keys of `text` for the object it parsed to (nothing when there are none). */
export function noteDuplicateFields(text: string, parsed: unknown): void {
  if (parsed === null || typeof parsed !== 'object') return;
  const duplicates = duplicateFields(text);
  if (duplicates.length > 0) recorded.set(parsed, duplicates);
}

/** The duplicate keys recorded for a parsed body (once), or none. */
export function takeDuplicateFields(object: object): readonly string[] {
  const duplicates = recorded.get(object) ?? [];
  recorded.delete(object);
  return duplicates;
}
