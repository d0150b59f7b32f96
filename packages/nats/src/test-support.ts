/**
 * Helpers for this package's tests (not part of the published API): backends on the shared test
 * server with unique bucket prefixes, and removal of their buckets afterwards.
 *
 * @module
 */
import type { ResourceType } from '@converge/runtime';
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
