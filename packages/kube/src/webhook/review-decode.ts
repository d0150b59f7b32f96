import { WebhookRequestError } from './errors.ts';

/** A JSON object (not an array, not null). */
export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A review envelope's `apiVersion`, `kind` and `request.uid`, checked. */
export interface ReviewEnvelope<V extends string> {
  readonly version: V;
  readonly request: JsonObject;
  readonly uid: string;
}

/**
 * Checks the envelope of a review (`apiVersion` one of `versions`, `kind`, an object `request` with
 * a non-empty string `uid`): without these the review cannot be answered, so each problem is a
 * {@link WebhookRequestError} answered 400. Unknown fields are ignored, as the API server's decoders
 * do, so a newer API server adding fields never breaks a webhook.
 */
export function decodeEnvelope<V extends string>(
  body: unknown,
  kind: string,
  versions: readonly V[],
): ReviewEnvelope<V> {
  const fail = (problem: string): never => {
    throw new WebhookRequestError(400, `cannot decode the ${kind}: ${problem}`);
  };
  if (!isJsonObject(body)) return fail('the body is not a JSON object');
  const version = body.apiVersion;
  if (typeof version !== 'string' || !(versions as readonly string[]).includes(version)) {
    return fail(`apiVersion ${JSON.stringify(version)} is not one of ${versions.join(', ')}`);
  }
  if (body.kind !== kind) return fail(`kind ${JSON.stringify(body.kind)} is not ${kind}`);
  const request = body.request;
  if (!isJsonObject(request)) return fail('request is missing or not an object');
  const uid = request.uid;
  if (typeof uid !== 'string' || uid === '') return fail('request.uid is missing or not a non-empty string');
  return { version: version as V, request, uid };
}

/**
 * Reads typed fields of one object, collecting a problem for each wrong one (the review is then
 * answered as a denial naming them, with the uid echoed).
 */
export class FieldReader {
  readonly problems: string[] = [];
  readonly #object: JsonObject;
  readonly #prefix: string;

  constructor(object: JsonObject, prefix: string, problems?: string[]) {
    this.#object = object;
    this.#prefix = prefix;
    if (problems !== undefined) this.problems = problems;
  }

  #wrong(name: string, expected: string): void {
    this.problems.push(`${this.#prefix}${name} must be ${expected}`);
  }

  /** A string field; absent or null gives `fallback`, or a problem when `fallback` is undefined. */
  string(name: string, fallback?: string): string {
    const value = this.#object[name];
    if (typeof value === 'string') return value;
    if ((value === undefined || value === null) && fallback !== undefined) return fallback;
    this.#wrong(name, 'a string');
    return fallback ?? '';
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.#object[name];
    if (typeof value === 'boolean') return value;
    if (value === undefined || value === null) return fallback;
    this.#wrong(name, 'a boolean');
    return fallback;
  }

  /** An object field, or null when absent or null. */
  object(name: string): JsonObject | null {
    const value = this.#object[name];
    if (value === undefined || value === null) return null;
    if (isJsonObject(value)) return value;
    this.#wrong(name, 'an object or null');
    return null;
  }

  /** A nested object read with its own reader; absent or null reads as `{}`. */
  nested(name: string): FieldReader {
    return new FieldReader(this.object(name) ?? {}, `${this.#prefix}${name}.`, this.problems);
  }

  stringList(name: string): string[] {
    const value = this.#object[name];
    if (value === undefined || value === null) return [];
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value as string[];
    this.#wrong(name, 'a list of strings');
    return [];
  }

  /** An object whose values are lists of strings (`userInfo.extra`). */
  stringListMap(name: string): Record<string, string[]> {
    const value = this.object(name);
    if (value === null) return {};
    const map: Record<string, string[]> = {};
    for (const [key, entry] of Object.entries(value)) {
      if (Array.isArray(entry) && entry.every((item) => typeof item === 'string')) map[key] = entry;
      else this.#wrong(`${name}.${key}`, 'a list of strings');
    }
    return map;
  }

  /** One of `allowed`, or a problem. */
  oneOf<V extends string>(name: string, allowed: readonly V[]): V {
    const value = this.#object[name];
    if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as V;
    this.#wrong(name, `one of ${allowed.join(', ')}`);
    return allowed[0] as V;
  }
}
