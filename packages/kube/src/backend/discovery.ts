import { apiVersionOf, type Clock, type Logger, type ResourceType, resourceType } from '@converge/runtime';
import { parseJson, readBody, type Transport } from '../http/index.ts';
import { parseAggregated, parseLegacyGroups, parseResourceList } from './discovery-parse.ts';

const AGGREGATED_ACCEPT = [
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
  'application/json',
].join(',');
const MAX_DISCOVERY_BYTES = 32 * 1024 * 1024;
/** A miss refreshes discovery at most this often (kinds registered meanwhile are found). */
const MISS_REFRESH_MS = 1_000;
const LEGACY_CONCURRENCY = 8;

/**
 * The kinds a cluster serves, from API discovery: aggregated discovery (`/api` + `/apis`, two
 * requests) when the server offers it, else legacy discovery (`/api/v1` and every
 * `/apis/{group}/{version}`; a group version that fails, like an unavailable aggregated API, is
 * skipped and logged). Cached until refreshed; a lookup miss refreshes at most once a second.
 *
 * @example
 * const discovery = new Discovery(transport, realClock, logger);
 * await discovery.refresh();
 * discovery.lookup('apps/v1', 'Deployment'); // { group: 'apps', plural: 'deployments', … }
 */
export class Discovery {
  readonly #transport: Transport;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #maxBytes: number;
  #types = new Map<string, ResourceType>();
  #refreshedAt: number | undefined;
  #refreshing: Promise<void> | undefined;

  constructor(transport: Transport, clock: Clock, logger: Logger) {
    this.#transport = transport;
    this.#clock = clock;
    this.#logger = logger;
    this.#maxBytes = MAX_DISCOVERY_BYTES;
  }

  /** Whether discovery ran at least once. */
  get loaded(): boolean {
    return this.#refreshedAt !== undefined;
  }

  /** Every served kind (main resources, preferred order). */
  types(): ResourceType[] {
    return [...new Set(this.#types.values())];
  }

  /** The cached type of `apiVersion` + `kind`. */
  lookup(apiVersion: string, kind: string): ResourceType | undefined {
    return this.#types.get(`${apiVersion}/${kind}`);
  }

  /** The type, refreshing discovery on a miss (at most once a second). */
  async resolve(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ResourceType | undefined> {
    const known = this.lookup(apiVersion, kind);
    if (known !== undefined) return known;
    if (this.#refreshedAt === undefined || this.#clock.now() - this.#refreshedAt >= MISS_REFRESH_MS) {
      await this.refresh(signal);
    }
    return this.lookup(apiVersion, kind);
  }

  /** The cached type of a group, version and resource (plural). */
  lookupResource(group: string, version: string, resource: string): ResourceType | undefined {
    for (const type of this.#types.values()) {
      if (type.group === group && type.version === version && type.plural === resource) return type;
    }
    return undefined;
  }

  /** {@link lookupResource}, refreshing discovery on a miss (at most once a second). */
  async resolveResource(
    group: string,
    version: string,
    resource: string,
    signal?: AbortSignal,
  ): Promise<ResourceType | undefined> {
    const known = this.lookupResource(group, version, resource);
    if (known !== undefined) return known;
    if (this.#refreshedAt === undefined || this.#clock.now() - this.#refreshedAt >= MISS_REFRESH_MS) {
      await this.refresh(signal);
    }
    return this.lookupResource(group, version, resource);
  }

  /** Reloads discovery; concurrent calls share one reload. */
  refresh(signal?: AbortSignal): Promise<void> {
    this.#refreshing ??= this.#load(signal).finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  async #load(signal: AbortSignal | undefined): Promise<void> {
    const core = await this.#get('/api', signal, AGGREGATED_ACCEPT);
    const groups = await this.#get('/apis', signal, AGGREGATED_ACCEPT);
    let found: ResourceType[];
    if (core.aggregated && groups.aggregated) {
      found = [...parseAggregated(core.body), ...parseAggregated(groups.body)];
    } else {
      const versions = ['v1', ...parseLegacyGroups(groups.body)].map((gv) =>
        gv === 'v1' ? '/api/v1' : `/apis/${gv}`,
      );
      found = await this.#legacy(versions, signal);
    }
    const types = new Map<string, ResourceType>();
    for (const candidate of found) {
      let type: ResourceType;
      try {
        type = resourceType(candidate);
      } catch (error) {
        this.#logger.debug({ kind: candidate.kind, err: error }, 'Skipped a discovered resource');
        continue;
      }
      const key = `${apiVersionOf(type)}/${type.kind}`;
      if (!types.has(key)) types.set(key, type);
    }
    this.#types = types;
    this.#refreshedAt = this.#clock.now();
    this.#logger.debug({ kinds: types.size }, 'Discovered API resources');
  }

  async #legacy(paths: readonly string[], signal: AbortSignal | undefined): Promise<ResourceType[]> {
    const results: ResourceType[][] = new Array(paths.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < paths.length) {
        const index = next++;
        const path = paths[index] as string;
        try {
          results[index] = parseResourceList((await this.#get(path, signal)).body);
        } catch (error) {
          if (signal?.aborted === true) throw error;
          this.#logger.warn({ path, err: error }, 'Discovery of a group version failed; skipping it');
          results[index] = [];
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(LEGACY_CONCURRENCY, paths.length) }, worker));
    return results.flat();
  }

  async #get(
    path: string,
    signal: AbortSignal | undefined,
    accept?: string,
  ): Promise<{ body: unknown; aggregated: boolean }> {
    const response = await this.#transport.send({
      method: 'GET',
      path,
      signal,
      ...(accept === undefined ? {} : { accept }),
    });
    const contentType = String(response.headers['content-type'] ?? '');
    const body = parseJson(
      await readBody(response.body, this.#maxBytes, `discovery ${path}`),
      `discovery ${path}`,
    );
    return { body, aggregated: contentType.includes('as=APIGroupDiscoveryList') };
  }
}
