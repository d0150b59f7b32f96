import { InvalidError, type JsonPatchOperation } from '../../../backend/index.ts';
import { clone, deepEqual, isJsonObject, type JsonObject } from './json.ts';

/** RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return clone(patch);
  const result: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

function failed(message: string): InvalidError {
  return new InvalidError(`the JSON patch could not be applied: ${message}`);
}

/** Splits an RFC 6901 pointer into unescaped tokens. */
function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw failed(`path ${JSON.stringify(pointer)} does not start with /`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

type Container = JsonObject | unknown[];

/** The container holding the last token of `tokens`, and that token. */
function locate(document: unknown, tokens: readonly string[], path: string): [Container, string] {
  if (tokens.length === 0) throw failed(`path ${JSON.stringify(path)} addresses the whole document`);
  let node: unknown = document;
  for (const token of tokens.slice(0, -1)) {
    node = child(node, token, path);
  }
  if (typeof node !== 'object' || node === null) throw failed(`path ${JSON.stringify(path)} has no parent`);
  return [node as Container, tokens.at(-1) as string];
}

function arrayIndex(array: readonly unknown[], token: string, path: string, allowEnd: boolean): number {
  if (token === '-' && allowEnd) return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token))
    throw failed(`${JSON.stringify(token)} in ${path} is not an array index`);
  const index = Number(token);
  if (index > array.length || (!allowEnd && index === array.length))
    throw failed(`index ${index} out of range in ${path}`);
  return index;
}

function child(node: unknown, token: string, path: string): unknown {
  if (Array.isArray(node)) return node[arrayIndex(node, token, path, false)];
  if (isJsonObject(node) && Object.hasOwn(node, token)) return node[token];
  throw failed(`path ${JSON.stringify(path)} does not exist`);
}

function get(document: unknown, path: string): unknown {
  let node = document;
  for (const token of parsePointer(path)) node = child(node, token, path);
  return node;
}

function add(document: unknown, path: string, value: unknown): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return clone(value);
  const [parent, last] = locate(document, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, path, true), 0, clone(value));
  else parent[last] = clone(value);
  return document;
}

function remove(document: unknown, path: string): unknown {
  const [parent, last] = locate(document, parsePointer(path), path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, path, false), 1);
  else if (Object.hasOwn(parent, last)) delete parent[last];
  else throw failed(`path ${JSON.stringify(path)} does not exist`);
  return document;
}

/**
 * RFC 6902 JSON patch, applied to a copy of `target`. Any failing operation (a missing path, a
 * failed `test`) throws an InvalidError and leaves `target` untouched.
 */
export function applyJsonPatch(target: unknown, operations: readonly JsonPatchOperation[]): unknown {
  if (!Array.isArray(operations)) throw failed('a JSON patch is an array of operations');
  let document = clone(target);
  for (const operation of operations) {
    switch (operation.op) {
      case 'add':
        document = add(document, operation.path, operation.value);
        break;
      case 'remove':
        document = remove(document, operation.path);
        break;
      case 'replace':
        get(document, operation.path);
        document =
          operation.path === ''
            ? clone(operation.value)
            : add(remove(document, operation.path), operation.path, operation.value);
        break;
      case 'move': {
        if (operation.path.startsWith(`${operation.from}/`)) throw failed('cannot move a value into itself');
        const value = get(document, operation.from);
        document = add(remove(document, operation.from), operation.path, value);
        break;
      }
      case 'copy':
        document = add(document, operation.path, get(document, operation.from));
        break;
      case 'test':
        if (!deepEqual(get(document, operation.path), operation.value)) {
          throw failed(`test of ${JSON.stringify(operation.path)} failed`);
        }
        break;
      default:
        throw failed(`unknown operation ${JSON.stringify((operation as { op?: unknown }).op)}`);
    }
  }
  return document;
}
