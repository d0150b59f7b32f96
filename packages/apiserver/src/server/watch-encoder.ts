import { type KubeObject, PARTIAL_OBJECT_METADATA } from '@converge/runtime';
import type { ApiResource } from './api-resource.ts';

const PARTIAL_HEAD = `{"kind":"${PARTIAL_OBJECT_METADATA.kind}","apiVersion":"${PARTIAL_OBJECT_METADATA.apiVersion}","metadata":`;

/**
 * Serializes stored objects for watch events once per change, whatever the number of watchers:
 * the store hands every watcher the same frozen object for one change, so its JSON is kept in a
 * WeakMap keyed by that object (and by the served group/version when a converter reshapes it),
 * and dropped with the object.
 */
export class WatchEncoder {
  readonly #plain = new WeakMap<object, string>();
  readonly #partial = new WeakMap<object, string>();
  readonly #converted = new WeakMap<object, Map<string, string | Promise<string>>>();
  #hits = 0;
  #misses = 0;

  /** How often an encoding was reused / computed (for tests and benchmarks). */
  get stats(): { readonly hits: number; readonly misses: number } {
    return { hits: this.#hits, misses: this.#misses };
  }

  /**
   * The JSON of `object` as `resource` serves it; a promise when a conversion webhook converts it
   * (one call per change and version, shared by the watchers; a failed conversion is not kept).
   */
  encode(resource: ApiResource, object: KubeObject): string | Promise<string> {
    const converter = resource.converter;
    if (converter === undefined) {
      const cached = this.#plain.get(object);
      if (cached !== undefined) {
        this.#hits++;
        return cached;
      }
      this.#misses++;
      const text = JSON.stringify(object);
      this.#plain.set(object, text);
      return text;
    }
    const key = `${resource.group}/${resource.version}`;
    let byVersion = this.#converted.get(object);
    const cached = byVersion?.get(key);
    if (cached !== undefined) {
      this.#hits++;
      return cached;
    }
    this.#misses++;
    if (byVersion === undefined) {
      byVersion = new Map();
      this.#converted.set(object, byVersion);
    }
    const served = converter.fromStorage(object);
    if (!(served instanceof Promise)) {
      const text = JSON.stringify(served);
      byVersion.set(key, text);
      return text;
    }
    const versions = byVersion;
    const pending = served.then(
      (converted) => {
        const text = JSON.stringify(converted);
        versions.set(key, text);
        return text;
      },
      (error: unknown) => {
        versions.delete(key);
        throw error;
      },
    );
    versions.set(key, pending);
    return pending;
  }

  /**
   * The JSON of `object` as a `meta.k8s.io/v1` PartialObjectMetadata (what kube-apiserver sends
   * for a watch with `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`):
   * `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{…}}`, computed once
   * per change like {@link encode}, the body never serialized.
   */
  encodePartial(object: KubeObject): string {
    const cached = this.#partial.get(object);
    if (cached !== undefined) {
      this.#hits++;
      return cached;
    }
    this.#misses++;
    const text = `${PARTIAL_HEAD}${JSON.stringify(object.metadata)}}`;
    this.#partial.set(object, text);
    return text;
  }

  /** One newline-terminated watch event line. */
  line(type: string, objectJson: string): string {
    return `{"type":"${type}","object":${objectJson}}\n`;
  }
}
