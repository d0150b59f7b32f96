/**
 * Helpers for this package's tests (not part of the published API): backends on the shared test
 * server with unique bucket prefixes, and removal of their buckets afterwards.
 *
 * @module
 */
import { type ResourceType, resourceType } from '@converge/runtime';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { NatsBackend } from './nats-backend.ts';
import type { NatsBackendOptions } from './options.ts';
import { sharedNatsUrl, uniqueSuffix } from './test-harness.ts';

/** A backend on its own buckets, and how to remove them. */
export interface TestBackend {
  readonly backend: NatsBackend;
  readonly url: string;
  readonly prefix: string;
  /** Closes the backend and deletes every bucket with its prefix. */
  destroy(): Promise<void>;
}

/** Deletes every KV bucket whose name starts with `prefix` on the server at `url`. */
export async function deleteBuckets(url: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const name of jsm.streams.names()) if (name.startsWith(`KV_${prefix}`)) names.push(name);
    await Promise.all(names.map((name) => jsm.streams.delete(name)));
  } finally {
    await nc.close();
  }
}

/** A backend on the shared test server with a fresh bucket prefix. */
export async function testBackend(
  types: readonly ResourceType[],
  options: Partial<NatsBackendOptions> & { readonly url?: string } = {},
): Promise<TestBackend> {
  const url = options.url ?? (await sharedNatsUrl());
  const prefix = `t${uniqueSuffix()}_`;
  const { url: _url, ...rest } = options;
  const backend = await NatsBackend.connect({ servers: url, types, bucketPrefix: prefix, ...rest });
  return {
    backend,
    url,
    prefix,
    destroy: async () => {
      await backend.close();
      await deleteBuckets(url, prefix);
    },
  };
}

/** The ConfigMap type most tests of this package use. */
export const CM: ResourceType = resourceType({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
  generation: false,
});

/** The namespace tests write in. */
export const NS = 'default';

/** Polls `condition` every 50 ms until it holds; fails after `ms`, naming `what` and the last error. */
export async function eventually(
  ms: number,
  what: string,
  condition: () => Promise<boolean> | boolean,
): Promise<void> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await condition()) return;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(
    `timed out after ${ms} ms waiting until ${what}${last === undefined ? '' : ` (${String(last)})`}`,
  );
}

/** Retries a write every 100 ms (100 tries) while the server comes back or a bucket is recreated. */
export async function retrying<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
