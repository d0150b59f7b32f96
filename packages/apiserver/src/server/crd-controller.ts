import {
  type Clock,
  isConflict,
  isExpired,
  isNotFound,
  type KubeObject,
  type Logger,
  type ResourceType,
} from '@converge/runtime';
import type { Store } from '@converge/store';
import type { JsonObject, MutableObject } from './api-resource.ts';
import type { CrdReconciler } from './context.ts';
import type { ConversionWebhookOptions } from './conversion-webhook.ts';
import { crdServing } from './crd-resources.ts';
import { CRD_CLEANUP_FINALIZER, conflictStatus, establishedStatus } from './crd-status.ts';
import { ApiServerErrorCodes } from './errors.ts';
import { cloneJson } from './json-util.ts';
import type { ResourceRegistry } from './resource-registry.ts';

/** Options of a {@link CrdController}. */
export interface CrdControllerOptions {
  readonly store: Store;
  readonly registry: ResourceRegistry;
  /** The store type of apiextensions.k8s.io/v1 CustomResourceDefinition. */
  readonly crdType: ResourceType;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How conversion webhooks of CRDs with `conversion.strategy: Webhook` are called. */
  readonly conversion?: ConversionWebhookOptions;
}

/**
 * The apiextensions controllers of kube-apiserver, in process: for every CustomResourceDefinition
 * it registers the storage version as a store type and the served versions as REST resources (in
 * discovery and OpenAPI at once), then sets `acceptedNames`, `storedVersions` and the conditions
 * NamesAccepted and Established; a CRD whose names clash gets NamesAccepted False. A terminating
 * CRD has its objects deleted (unregistering its type), stops being served and loses the
 * `customresourcecleanup.apiextensions.k8s.io` finalizer. It reacts to the store's watch, and
 * handlers call {@link CrdController.reconcile} directly so a write's response is only sent once
 * the change is served. Reconciles of one CRD never overlap.
 */
export class CrdController implements CrdReconciler {
  readonly #options: CrdControllerOptions;
  readonly #storeTypes = new Map<string, ResourceType>();
  readonly #chains = new Map<string, Promise<void>>();
  readonly #abort = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(options: CrdControllerOptions) {
    this.#options = options;
  }

  /** Serves every stored CRD, then follows changes until {@link CrdController.stop}. */
  async start(): Promise<void> {
    const revision = await this.#resync();
    this.#loop = this.#follow(revision);
  }

  /** Stops following changes (served types stay registered). */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
    await Promise.all([...this.#chains.values()]);
  }

  reconcile(name: string): Promise<void> {
    const previous = this.#chains.get(name) ?? Promise.resolve();
    const next = previous.then(() => this.#reconcile(name));
    const settled = next.catch((error: unknown) => {
      this.#options.logger.warn(
        { crd: name, err: error, code: ApiServerErrorCodes.CRD_REGISTRATION_FAILED },
        'CRD reconcile failed',
      );
    });
    this.#chains.set(name, settled);
    void settled.then(() => {
      if (this.#chains.get(name) === settled) this.#chains.delete(name);
    });
    return next;
  }

  async #resync(): Promise<string> {
    const list = await this.#options.store.list(this.#options.crdType);
    const names = new Set(list.items.map((crd) => crd.metadata.name ?? ''));
    for (const name of this.#storeTypes.keys()) names.add(name);
    await Promise.all([...names].map((name) => this.reconcile(name).catch(() => undefined)));
    return list.resourceVersion;
  }

  async #follow(resourceVersion: string): Promise<void> {
    const { store, crdType, clock, logger } = this.#options;
    let from = resourceVersion;
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        for await (const event of store.watch(crdType, { resourceVersion: from, signal })) {
          if (event.type === 'BOOKMARK') continue;
          from = event.object.metadata.resourceVersion ?? from;
          await this.reconcile(event.object.metadata.name ?? '').catch(() => undefined);
        }
        if (!signal.aborted) from = await this.#resync();
      } catch (error) {
        if (signal.aborted) return;
        if (!isExpired(error)) logger.warn({ err: error }, 'CRD watch failed; relisting');
        await clock.sleep(100, signal).catch(() => undefined);
        if (!signal.aborted) from = await this.#resync().catch(() => from);
      }
    }
  }

  async #reconcile(name: string): Promise<void> {
    const { store, crdType } = this.#options;
    let crd: KubeObject;
    try {
      crd = await store.get(crdType, { namespace: '', name });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.#unserve(name);
      return;
    }
    if (crd.metadata.deletionTimestamp !== undefined) await this.#cleanup(crd);
    else await this.#establish(crd);
  }

  async #establish(crd: KubeObject): Promise<void> {
    const { store, registry, clock } = this.#options;
    const name = crd.metadata.name ?? '';
    const owner = `crd:${name}`;
    const serving = crdServing(crd, this.#storeTypes.get(name)?.version, this.#options.conversion);
    if (serving === undefined) return;
    const clash = serving.resources.find((r) => {
      const other =
        registry.lookup(r.group, r.version, r.plural) ?? registry.byKind(r.group, r.version, r.kind);
      return other !== undefined && other.crd?.metadata.name !== name;
    });
    const status = (crd as unknown as JsonObject).status;
    let next: JsonObject;
    if (clash !== undefined) {
      next = conflictStatus(status, `"${clash.plural}" is already in use`, clock.now());
    } else {
      try {
        const registered = store.registerType(serving.storeType);
        this.#storeTypes.set(name, registered);
        registry.set(owner, serving.resources);
        next = establishedStatus(status, serving.names, registered.version, clock.now());
      } catch (error) {
        next = conflictStatus(status, (error as Error).message, clock.now());
      }
    }
    await this.#writeStatus(crd, next);
  }

  async #writeStatus(crd: KubeObject, status: JsonObject): Promise<void> {
    const current = (crd as unknown as JsonObject).status;
    if (JSON.stringify(current) === JSON.stringify(status)) return;
    const next = cloneJson(crd) as unknown as MutableObject;
    next.status = status;
    try {
      await this.#options.store.updateStatus(this.#options.crdType, next);
    } catch (error) {
      if (!isConflict(error) && !isNotFound(error)) throw error;
    }
  }

  async #cleanup(crd: KubeObject): Promise<void> {
    const name = crd.metadata.name ?? '';
    await this.#unserve(name);
    const finalizers = crd.metadata.finalizers ?? [];
    if (!finalizers.includes(CRD_CLEANUP_FINALIZER)) return;
    const next = cloneJson(crd) as unknown as MutableObject;
    next.metadata.finalizers = finalizers.filter((f) => f !== CRD_CLEANUP_FINALIZER);
    try {
      await this.#options.store.update(this.#options.crdType, next);
    } catch (error) {
      if (!isConflict(error) && !isNotFound(error)) throw error;
    }
  }

  /**
   * Stops serving a CRD's resources and deletes its objects by unregistering the store type — only
   * a type this controller registered (a CRD clashing with a built-in never touches the built-in).
   */
  async #unserve(name: string): Promise<void> {
    this.#options.registry.remove(`crd:${name}`);
    const type = this.#storeTypes.get(name);
    this.#storeTypes.delete(name);
    if (type === undefined) return;
    try {
      await this.#options.store.unregisterType(type);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
