import type { Backend, ResourceType } from '../../backend/index.ts';
import { OptionsError } from '../../errors.ts';

/**
 * A backend made for one conformance test, and how to clean it up.
 *
 * @example
 * const harness: BackendHarness = {
 *   backend: store.backend,
 *   compact: async () => store.compact(),
 *   close: async () => store.close(),
 * };
 */
export interface BackendHarness {
  readonly backend: Backend;
  /**
   * Force the backend to forget history older than now, so old resourceVersions and continue tokens
   * expire. Omit if the backend cannot (the Expired tests are then skipped with that reason).
   */
  compact?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Capabilities a backend may lack. Each gates only the tests that need it; a skipped test says why
 * in its title. Every capability defaults to true.
 *
 * @example
 * // A poller-style backend: no watch bookmarks, no pagination, no garbage collector.
 * const capabilities: BackendCapabilities = { bookmarks: false, pagination: false, ownerGc: false };
 */
export interface BackendCapabilities {
  /** Finalizers keep a deleted object with a deletionTimestamp until the last one is removed. */
  readonly finalizers?: boolean;
  /** A garbage collector deletes or orphans dependents by their ownerReferences. */
  readonly ownerGc?: boolean;
  /** RFC 6902 JSON patch. */
  readonly jsonPatch?: boolean;
  /** `.status` is a subresource written only by `updateStatus` / `patch(…, { subresource: 'status' })`. */
  readonly statusSubresource?: boolean;
  /** Cluster-scoped kinds. */
  readonly clusterScoped?: boolean;
  /** Field selectors on `metadata.name` and `metadata.namespace`. */
  readonly fieldSelectors?: boolean;
  /** `limit` / `continue` lists served from one snapshot. */
  readonly pagination?: boolean;
  /** Periodic BOOKMARK events on watches that ask for them. */
  readonly bookmarks?: boolean;
  /** KEP-5866 `shardSelector` on lists and watches. */
  readonly shardSelectors?: boolean;
}

/**
 * Options of `runBackendSuite`.
 *
 * @example
 * const options: BackendSuiteOptions = {
 *   name: 'kube (embedded apiserver)',
 *   timeoutMs: 20_000,
 *   makeBackend: async (types) => {
 *     const server = await startEmbeddedServer({ crds: types });
 *     return { backend: server.client(), compact: () => server.compact(), close: () => server.stop() };
 *   },
 * };
 */
export interface BackendSuiteOptions {
  /** Name in the describe() title. */
  readonly name: string;
  /**
   * Make a fresh, empty backend serving exactly these types (the factory registers them, e.g. as
   * CRDs). The namespaces in `suiteNamespaces` must be usable: a backend that requires namespaces to
   * exist creates them here.
   */
  readonly makeBackend: (types: readonly ResourceType[]) => Promise<BackendHarness>;
  /** Capabilities a backend may lack; each gates only the tests that need it, with the reason in the test title. Default: all true. */
  readonly capabilities?: BackendCapabilities;
  /** Per-test timeout in ms for real backends (default 10 000). */
  readonly timeoutMs?: number;
}

/** The name of one capability. */
export type Capability = keyof BackendCapabilities;

/** Why a test is skipped when its capability is missing (shown in the skipped test's title). */
export const capabilityReasons: Readonly<Record<Capability | 'compact', string>> = {
  finalizers: 'the backend does not support finalizers',
  ownerGc: 'the backend has no owner-reference garbage collector',
  jsonPatch: 'the backend does not support JSON patch',
  statusSubresource: 'the backend has no status subresource',
  clusterScoped: 'the backend does not serve cluster-scoped kinds',
  fieldSelectors: 'the backend does not support field selectors',
  pagination: 'the backend does not paginate lists',
  bookmarks: 'the backend does not send watch bookmarks',
  shardSelectors: 'the backend does not support shard selectors',
  compact: 'the harness cannot compact history (it has no compact())',
};

/** Everything a group of suite tests needs, resolved from {@link BackendSuiteOptions}. */
export interface SuiteContext {
  readonly name: string;
  readonly makeBackend: (types: readonly ResourceType[]) => Promise<BackendHarness>;
  readonly capabilities: Readonly<Record<Capability, boolean>>;
  /** Per-test timeout. */
  readonly timeoutMs: number;
  /** Longest wait for one expected event or result inside a test. */
  readonly waitMs: number;
}

const CAPABILITIES: readonly Capability[] = [
  'finalizers',
  'ownerGc',
  'jsonPatch',
  'statusSubresource',
  'clusterScoped',
  'fieldSelectors',
  'pagination',
  'bookmarks',
  'shardSelectors',
];

/** Validates the options and fills in the defaults. */
export function resolveSuiteOptions(options: BackendSuiteOptions): SuiteContext {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError('options', options, 'a BackendSuiteOptions object');
  }
  if (typeof options.name !== 'string' || options.name === '') {
    throw new OptionsError('name', options.name, 'a non-empty string');
  }
  if (typeof options.makeBackend !== 'function') {
    throw new OptionsError(
      'makeBackend',
      options.makeBackend,
      'a function (types) => Promise<BackendHarness>',
    );
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 1000) {
    throw new OptionsError('timeoutMs', timeoutMs, 'a number of milliseconds >= 1000');
  }
  const given = options.capabilities ?? {};
  const capabilities = Object.fromEntries(CAPABILITIES.map((c) => [c, given[c] !== false])) as Record<
    Capability,
    boolean
  >;
  return {
    name: options.name,
    makeBackend: options.makeBackend,
    capabilities,
    timeoutMs,
    waitMs: Math.max(1000, Math.floor(timeoutMs / 2)),
  };
}
