/**
 * Test doubles of the opinionated watcher's and reconciler's tests (not exported from the
 * package): a patch client over one in-memory object with the apiserver's finalizer rules, and
 * handlers that record their calls.
 *
 * @module
 */
import {
  ConflictError,
  InvalidError,
  type JsonPatchOperation,
  NotFoundError,
  type Patch,
  type ResourceType,
  resourceType,
} from '../backend/index.ts';
import { noopLogger } from '../log/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { applyJsonPatch } from '../patch/index.ts';
import type { FinalizerPatchClient } from './finalizer-patcher.ts';
import { OpinionatedWatcher } from './opinionated-watcher.ts';
import type { ResourceWatcher, WatcherContext } from './types.ts';

export const widgetType: ResourceType = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

export const FINAL = 'operator.v1.Widget.example.com';
export const WIP = 'wip.v1.Widget.example.com';

/** Metadata fields to set on a test object; an undefined value removes the field. */
export type MetaOverrides = {
  readonly [K in keyof KubeObject['metadata']]?: KubeObject['metadata'][K] | undefined;
};

/** A widget: generation 1, resourceVersion '1', the given metadata on top. */
export function widget(meta: MetaOverrides = {}): KubeObject {
  const metadata: Record<string, unknown> = {
    namespace: 'default',
    name: 'w',
    resourceVersion: '1',
    generation: 1,
  };
  for (const [field, value] of Object.entries(meta)) {
    if (value === undefined) delete metadata[field];
    else metadata[field] = value;
  }
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: metadata as KubeObject['metadata'] };
}

export function context(signal: AbortSignal = new AbortController().signal): WatcherContext {
  return { signal, logger: noopLogger, attempt: 0 };
}

/** One write the client saw. */
export interface WriteRecord {
  readonly ops: readonly JsonPatchOperation[];
  /** The object after the write, or undefined when the write failed or removed the object. */
  readonly after: KubeObject | undefined;
}

/**
 * A patch client over one stored object with the apiserver's rules for what the watcher does: a
 * resourceVersion in the patched object is a precondition (409 Conflict), a failed `test` is a 422,
 * every write bumps the resourceVersion, no finalizer may be added once deletion started (422),
 * and an object being deleted is removed when its last finalizer goes. Faults are queued per
 * method; every change is reported to `onChange` (what an informer would deliver).
 */
export class MockPatchClient implements FinalizerPatchClient {
  stored: KubeObject | undefined;
  readonly writes: WriteRecord[] = [];
  gets = 0;
  readonly #faults: { get: Error[]; patch: Error[] } = { get: [], patch: [] };
  #revision: number;
  onChange: (oldObject: KubeObject | undefined, object: KubeObject | undefined) => void = () => {};

  constructor(stored: KubeObject | undefined) {
    this.stored = stored;
    this.#revision = Number(stored?.metadata.resourceVersion ?? 1);
  }

  /** The next calls of `method` throw these, in order. */
  fail(method: 'get' | 'patch', ...errors: Error[]): this {
    this.#faults[method].push(...errors);
    return this;
  }

  /** The ops of every patch, in order. */
  get patches(): (readonly JsonPatchOperation[])[] {
    return this.writes.map((w) => w.ops);
  }

  async get(_type: ResourceType, key: ObjectKey): Promise<KubeObject> {
    await Promise.resolve();
    this.gets++;
    const fault = this.#faults.get.shift();
    if (fault !== undefined) throw fault;
    if (this.stored === undefined) throw new NotFoundError(`widgets "${key.name}" not found`);
    return this.stored;
  }

  async patch(_type: ResourceType, key: ObjectKey, patch: Patch): Promise<KubeObject> {
    await Promise.resolve();
    if (patch.type !== 'json') throw new Error('only JSON patches expected');
    const fault = this.#faults.patch.shift();
    if (fault !== undefined) {
      this.writes.push({ ops: patch.patch, after: undefined });
      throw fault;
    }
    const previous = this.stored;
    if (previous === undefined) {
      this.writes.push({ ops: patch.patch, after: undefined });
      throw new NotFoundError(`widgets "${key.name}" not found`);
    }
    let next: KubeObject;
    try {
      next = applyJsonPatch(previous, patch.patch) as KubeObject;
    } catch (error) {
      this.writes.push({ ops: patch.patch, after: undefined });
      throw error;
    }
    if (next.metadata.resourceVersion !== previous.metadata.resourceVersion) {
      this.writes.push({ ops: patch.patch, after: undefined });
      throw new ConflictError(
        'the object has been modified; please apply your changes to the latest version',
      );
    }
    const before = previous.metadata.finalizers ?? [];
    if (
      previous.metadata.deletionTimestamp &&
      (next.metadata.finalizers ?? []).some((f) => !before.includes(f))
    ) {
      this.writes.push({ ops: patch.patch, after: undefined });
      throw new InvalidError('no new finalizers can be added if the object is being deleted');
    }
    const written = this.write(next);
    this.writes.push({ ops: patch.patch, after: this.stored });
    return written;
  }

  /** Stores `object` as a write (a new resourceVersion), removing it if deleting without finalizers. */
  write(object: KubeObject): KubeObject {
    const previous = this.stored;
    const next = { ...object, metadata: { ...object.metadata, resourceVersion: String(++this.#revision) } };
    this.stored =
      next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0 ? undefined : next;
    this.onChange(previous, this.stored ?? next);
    return next;
  }

  /** What a user's DELETE does: a deletionTimestamp (generation + 1) while finalizers remain, else removal. */
  deleteObject(): void {
    const previous = this.stored;
    if (previous === undefined || previous.metadata.deletionTimestamp) return;
    if ((previous.metadata.finalizers ?? []).length === 0) {
      this.stored = undefined;
      this.onChange(previous, undefined);
      return;
    }
    this.write({
      ...previous,
      metadata: {
        ...previous.metadata,
        deletionTimestamp: '2024-01-01T00:00:00Z',
        generation: (previous.metadata.generation ?? 0) + 1,
      },
    });
  }
}

type Method = 'add' | 'update' | 'delete' | 'sync';

/** One handler call: the method and the object (the new one for updates) it was given. */
export interface HandlerCall {
  readonly method: Method;
  readonly object: KubeObject;
}

/** Handlers that record every call; a method in `failing` throws `Error('<method> failed')`. */
export function recordingHandlers(failing: Iterable<Method> = []): ResourceWatcher & {
  calls: HandlerCall[];
  failing: Set<Method>;
  methods(): Method[];
} {
  const calls: HandlerCall[] = [];
  const failing_ = new Set(failing);
  const call = (method: Method, object: KubeObject): void => {
    calls.push({ method, object });
    if (failing_.has(method)) throw new Error(`${method} failed`);
  };
  return {
    calls,
    failing: failing_,
    methods: () => calls.map((c) => c.method),
    add: (object) => call('add', object),
    update: (_old, object) => call('update', object),
    delete: (object) => call('delete', object),
    sync: (object) => call('sync', object),
  };
}

/** When a test object's deletion started. */
export const DELETING = '2024-01-01T00:00:00Z';

type Method_ = 'add' | 'update' | 'delete' | 'sync';

/** v0.9.10's watcher (no in-progress finalizer) over a mock client holding `stored`. */
export function v0910(stored: KubeObject | undefined, failing: Method_[] = []) {
  const client = new MockPatchClient(stored);
  const handlers = recordingHandlers(failing);
  const watcher = new OpinionatedWatcher({ type: widgetType, client, handlers, inProgressFinalizer: false });
  return { client, handlers, watcher };
}

/** The default watcher (with the in-progress finalizer) over a mock client holding `stored`. */
export function withWip(stored: KubeObject | undefined, failing: Method_[] = []) {
  const client = new MockPatchClient(stored);
  const handlers = recordingHandlers(failing);
  const watcher = new OpinionatedWatcher({ type: widgetType, client, handlers });
  return { client, handlers, watcher };
}
