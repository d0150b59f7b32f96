import { type Backend, type ResourceType, RoutedBackend, resourceType, typeId } from '../backend/index.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { whenAborted } from '../runnable/index.ts';
import { RegistryStoppedError } from './errors.ts';
import { Informer } from './informer.ts';
import type { InformerOptions, InformerShardScope } from './options.ts';
import { normalizeFieldSelector, normalizeLabelSelector, normalizeShardSelector } from './selectors.ts';
import type { InformerMetrics } from './stats.ts';

/** What identifies a shared informer: one per backend, kind, namespace, selectors (shard included) and metadata-only mode. */
export interface InformerSpec {
  readonly backend: Backend;
  readonly type: ResourceType;
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Only this shard (see {@link InformerOptions.shardSelector}): a separate informer per shard. */
  readonly shardSelector?: string;
  /**
   * A shard that changes (see {@link InformerOptions.shardScope}): one informer per scope object,
   * shared by everyone who passes the same one.
   */
  readonly shardScope?: InformerShardScope;
  /**
   * Metadata only (see {@link InformerOptions.metadataOnly}): a separate informer from the full
   * one of the same kind, as in controller-runtime. Default false.
   */
  readonly metadataOnly?: boolean;
}

/** Options every informer of a registry gets (everything of {@link InformerOptions} but what identifies it). */
export type InformerRegistryOptions = Omit<
  InformerOptions,
  | 'backend'
  | 'type'
  | 'namespace'
  | 'labelSelector'
  | 'fieldSelector'
  | 'shardSelector'
  | 'shardScope'
  | 'metadataOnly'
  | 'name'
>;

/** One reference to a shared informer. Call `release()` once you no longer need it (idempotent). */
export interface InformerHandle<T extends KubeObject = KubeObject> {
  readonly informer: Informer<T>;
  release(): void;
}

type Run =
  | { readonly kind: 'idle' }
  | { readonly kind: 'running'; readonly controller: AbortController; readonly done: Promise<void> };

interface Entry {
  readonly key: string;
  readonly backend: Backend;
  readonly informer: Informer;
  references: number;
  run: Run;
}

type RegistryState =
  | { readonly phase: 'new' }
  | { readonly phase: 'running'; readonly signal: AbortSignal }
  | { readonly phase: 'stopped' };

/**
 * Shares informers (client-go's SharedInformerFactory, controller-runtime's informer cache): one
 * informer per backend, kind, namespace and selector pair (selectors compared in canonical form),
 * however many controllers watch it, reference-counted. One per manager.
 *
 * `acquire` returns the shared informer and a `release`; the first acquire creates it, and it is
 * started at once if the registry runs. `start(signal)` starts every informer and each one acquired
 * later, and resolves when `signal` aborts and they have all stopped. Releasing the last reference
 * stops that informer and drops it, so its cache can be garbage collected (do not use a released
 * handle). Start a shared informer only through the registry: use
 * `fromEventSource({ eventSource: informer, handler, startEventSource: false })`.
 *
 * @example
 * const informers = new InformerRegistry({ resyncPeriodMs: 0 });
 * const { informer, release } = informers.acquire<Pod>({ backend, type: podType, namespace: 'default' });
 * void informers.start(signal);
 * await informers.waitForSync(signal);
 * informer.cache.list();
 * release(); // the last release stops it
 */
export class InformerRegistry {
  readonly #options: InformerRegistryOptions;
  readonly #entries = new Map<Backend, Map<string, Entry>>();
  readonly #running = new Set<Promise<void>>();
  #state: RegistryState = { phase: 'new' };
  readonly #hooks: InformerMetrics[] = [];

  constructor(options: InformerRegistryOptions = {}) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    this.#options = options;
  }

  /** Informers held now. */
  get size(): number {
    let size = 0;
    for (const byKey of this.#entries.values()) size += byKey.size;
    return size;
  }

  /** Every informer held now. */
  informers(): Informer[] {
    return [...this.#entries.values()].flatMap((byKey) => [...byKey.values()].map((entry) => entry.informer));
  }

  /** Adds metric hooks to every informer held now and every one created later. */
  observe(hooks: InformerMetrics): void {
    if (typeof hooks !== 'object' || hooks === null) throw new OptionsError('hooks', hooks, 'an object');
    this.#hooks.push(hooks);
    for (const informer of this.informers()) informer.observe(hooks);
  }

  /**
   * The shared informer for `spec`, created (and started, if the registry runs) on first use.
   * Throws an OptionsError for a bad spec and a {@link RegistryStoppedError} once the registry stopped.
   */
  acquire<T extends KubeObject = KubeObject>(given: InformerSpec): InformerHandle<T> {
    if (this.#state.phase === 'stopped') throw new RegistryStoppedError();
    if (typeof given !== 'object' || given === null)
      throw new OptionsError('spec', given, 'an informer spec object');
    // A routed backend (a manager's) is the backend holding the kind: one informer per kind
    // whether it was asked for through the route or with that backend itself.
    const spec =
      given.backend instanceof RoutedBackend && typeof given.type === 'object' && given.type !== null
        ? { ...given, backend: given.backend.backendFor(given.type) }
        : given;
    const key = specKey(spec);
    let byKey = this.#entries.get(spec.backend);
    let entry = byKey?.get(key);
    if (entry === undefined) {
      const informer = new Informer({ ...this.#options, ...spec });
      for (const hooks of this.#hooks) informer.observe(hooks);
      entry = { key, backend: spec.backend, informer, references: 0, run: { kind: 'idle' } };
      if (byKey === undefined) {
        byKey = new Map();
        this.#entries.set(spec.backend, byKey);
      }
      byKey.set(key, entry);
      if (this.#state.phase === 'running') this.#run(entry, this.#state.signal);
    }
    entry.references++;
    const held = entry;
    let released = false;
    return {
      informer: held.informer as unknown as Informer<T>,
      release: () => {
        if (released) return;
        released = true;
        this.#release(held);
      },
    };
  }

  /** Starts every informer, and later ones at once; resolves once `signal` aborted and all stopped. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#state.phase !== 'new') throw new AlreadyStartedError('informer registry');
    if (signal.aborted) {
      this.#state = { phase: 'stopped' };
      return;
    }
    this.#state = { phase: 'running', signal };
    for (const byKey of this.#entries.values()) for (const entry of byKey.values()) this.#run(entry, signal);
    await whenAborted(signal);
    this.#state = { phase: 'stopped' };
    while (this.#running.size > 0) await Promise.all(this.#running);
  }

  /**
   * Resolves once every informer held now has synced. An informer released meanwhile is not waited
   * for. Rejects with an AbortedError when `signal` aborts first.
   */
  async waitForSync(signal: AbortSignal): Promise<void> {
    const entries = [...this.#entries.values()].flatMap((byKey) => [...byKey.values()]);
    await Promise.all(
      entries.map(async (entry) => {
        try {
          await entry.informer.waitForSync(signal);
        } catch (error) {
          if (signal.aborted || this.#entries.get(entry.backend)?.get(entry.key) === entry) throw error;
        }
      }),
    );
  }

  /** True when every informer held now has synced. */
  hasSynced(): boolean {
    return this.informers().every((informer) => informer.hasSynced());
  }

  #run(entry: Entry, signal: AbortSignal): void {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const done = entry.informer
      .start(controller.signal)
      .catch(() => undefined)
      .finally(() => {
        signal.removeEventListener('abort', onAbort);
        this.#running.delete(done);
      });
    this.#running.add(done);
    entry.run = { kind: 'running', controller, done };
  }

  #release(entry: Entry): void {
    if (--entry.references > 0) return;
    const byKey = this.#entries.get(entry.backend);
    if (byKey?.get(entry.key) === entry) {
      byKey.delete(entry.key);
      if (byKey.size === 0) this.#entries.delete(entry.backend);
    }
    if (entry.run.kind === 'running') entry.run.controller.abort();
  }
}

/** The identity of a spec: kind, namespace and canonical selectors (the backend keys the outer map). */
function specKey(spec: InformerSpec): string {
  const { backend } = spec;
  if (typeof backend !== 'object' || backend === null)
    throw new OptionsError('backend', backend, 'a Backend');
  const type = resourceType(spec.type);
  const namespace = spec.namespace ?? '';
  if (typeof namespace !== 'string') throw new OptionsError('namespace', namespace, 'a string');
  const labels = normalizeLabelSelector('labelSelector', spec.labelSelector);
  const fields = normalizeFieldSelector('fieldSelector', spec.fieldSelector);
  const shard = normalizeShardSelector('shardSelector', spec.shardSelector);
  const metadataOnly = spec.metadataOnly ?? false;
  if (typeof metadataOnly !== 'boolean') throw new OptionsError('metadataOnly', metadataOnly, 'a boolean');
  const scope = spec.shardScope === undefined ? 0 : scopeId(spec.shardScope);
  return JSON.stringify([typeId(type), namespace, labels, fields, shard, metadataOnly, scope]);
}

const scopeIds = new WeakMap<object, number>();
let lastScopeId = 0;

/** A number per shard scope object (a scope is shared by identity); checked by the informer. */
function scopeId(scope: InformerShardScope): number {
  if (typeof scope !== 'object' || scope === null) return -1;
  let id = scopeIds.get(scope);
  if (id === undefined) {
    id = ++lastScopeId;
    scopeIds.set(scope, id);
  }
  return id;
}
