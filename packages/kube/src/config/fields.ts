import { KubeconfigError } from '../errors.ts';

/** A parsed YAML mapping. */
export type Mapping = Readonly<Record<string, unknown>>;

/**
 * Reads typed fields out of parsed YAML for one kubeconfig file, throwing a
 * {@link KubeconfigError} that names the file and the field path on the first wrong type.
 *
 * @example
 * const r = new FieldReader('/home/me/.kube/config');
 * const server = r.string(cluster, 'server', 'clusters[0].cluster'); // KubeconfigError on a non-string
 */
export class FieldReader {
  readonly file: string;

  constructor(file: string) {
    this.file = file;
  }

  /** An error about `field` in this file. */
  error(field: string, problem: string, cause?: unknown): KubeconfigError {
    return new KubeconfigError(this.file, field, problem, cause === undefined ? undefined : { cause });
  }

  /** A mapping, or undefined for a missing or null value. */
  mapping(value: unknown, field: string): Mapping | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw this.error(field, `must be a mapping, got ${kindOf(value)}`);
    }
    return value as Mapping;
  }

  /** A list, or an empty one for a missing or null value. */
  list(value: unknown, field: string): readonly unknown[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw this.error(field, `must be a list, got ${kindOf(value)}`);
    return value;
  }

  /** A string, or undefined for a missing, null or empty value. */
  string(object: Mapping, key: string, path: string): string | undefined {
    const value = object[key];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw this.error(at(path, key), `must be a string, got ${kindOf(value)}`);
    return value;
  }

  /** A boolean, or undefined for a missing or null value. */
  boolean(object: Mapping, key: string, path: string): boolean | undefined {
    const value = object[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') {
      throw this.error(at(path, key), `must be true or false, got ${kindOf(value)}`);
    }
    return value;
  }

  /** A list of strings, or undefined for a missing or null value. */
  strings(object: Mapping, key: string, path: string): readonly string[] | undefined {
    const value = object[key];
    if (value === undefined || value === null) return undefined;
    const items = this.list(value, at(path, key));
    return items.map((item, i) => {
      if (typeof item !== 'string') {
        throw this.error(`${at(path, key)}[${i}]`, `must be a string, got ${kindOf(item)}`);
      }
      return item;
    });
  }
}

/**
 * A short description of a value's YAML type, for messages.
 *
 * @example
 * kindOf(42); // 'number 42'
 */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return 'a string';
  return `${typeof value} ${String(value)}`;
}

/**
 * `path.key`, or `key` at the root (path '').
 *
 * @example
 * at('clusters[0].cluster', 'server'); // 'clusters[0].cluster.server'
 */
export function at(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
