import { BadRequestError } from '@converge/runtime';
import type { JsonObject } from './api-resource.ts';

/**
 * Reads typed fields of a decoded review or request body as Go's JSON decoder would: a value of
 * the wrong type is kube-apiserver's 400 `<Kind> in version "<v>" cannot be handled as a <Kind>:
 * json: cannot unmarshal <type> into Go struct field <Struct>.<path> of type <goType>`; absent
 * and null are the zero value.
 */
export class BodyReader {
  readonly #kind: string;
  readonly #version: string;

  constructor(kind: string, version: string) {
    this.#kind = kind;
    this.#version = version;
  }

  #fail(value: unknown, struct: string, path: string, goType: string): never {
    const type =
      typeof value === 'number'
        ? `number ${value}`
        : Array.isArray(value)
          ? 'array'
          : typeof value === 'object'
            ? 'object'
            : typeof value;
    throw new BadRequestError(
      `${this.#kind} in version "${this.#version}" cannot be handled as a ${this.#kind}: json: cannot unmarshal ${type} into Go struct field ${struct}.${path} of type ${goType}`,
    );
  }

  /** A nested object (absent/null: undefined). */
  object(parent: JsonObject, key: string, struct: string, path: string): JsonObject | undefined {
    const value = parent[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'object' || Array.isArray(value)) this.#fail(value, struct, path, struct);
    return value as JsonObject;
  }

  string(parent: JsonObject | undefined, key: string, struct: string, path: string): string {
    const value = parent?.[key];
    if (value === undefined || value === null) return '';
    if (typeof value !== 'string') this.#fail(value, struct, path, 'string');
    return value;
  }

  strings(parent: JsonObject | undefined, key: string, struct: string, path: string): string[] {
    const value = parent?.[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) this.#fail(value, struct, path, '[]string');
    for (const item of value) if (typeof item !== 'string') this.#fail(item, struct, path, 'string');
    return value as string[];
  }

  /** An int64 (absent/null: undefined). */
  integer(parent: JsonObject | undefined, key: string, struct: string, path: string): number | undefined {
    const value = parent?.[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) this.#fail(value, struct, path, 'int64');
    return value;
  }
}
