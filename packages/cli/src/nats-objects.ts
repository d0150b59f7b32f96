/**
 * The NATS JetStream KV backend the CLI gives operator modules as `nats` (`converge dev --nats`,
 * `converge run --nats-backend`), and the bucket prefix every command that reads those buckets
 * shares (`converge kv` too). Imported only where NATS is asked for: a start without it compiles
 * no NATS client.
 */

import { NatsBackend } from '@converge/nats';
import type { Logger } from '@converge/runtime';
import { connectNats } from './nats-connection.ts';

/** The bucket prefix when `$CONVERGE_NATS_BUCKET_PREFIX` is not set. */
export const DEFAULT_BUCKET_PREFIX = 'converge_';

/** The prefix of the KV buckets modules keep kinds in: `$CONVERGE_NATS_BUCKET_PREFIX`, else `converge_`. */
export function natsBucketPrefix(env: Readonly<Record<string, string | undefined>>): string {
  return env.CONVERGE_NATS_BUCKET_PREFIX ?? DEFAULT_BUCKET_PREFIX;
}

/**
 * Connects to `url` (reconnecting for as long as the process runs) and opens the backend on the
 * buckets of {@link natsBucketPrefix}. Nothing answering is a NatsUnreachableError naming the URL;
 * a server without JetStream is the backend's UnavailableError.
 */
export async function openNatsObjects(
  url: string,
  options: {
    /** The connection's name, as the server lists it. */
    readonly name: string;
    readonly logger: Logger;
    readonly env: Readonly<Record<string, string | undefined>>;
  },
): Promise<{ readonly backend: NatsBackend; close(): Promise<void> }> {
  const connection = await connectNats(url, { name: options.name, reconnectForever: true });
  try {
    const backend = await NatsBackend.connect({
      connection,
      bucketPrefix: natsBucketPrefix(options.env),
      logger: options.logger.child({ backend: 'nats' }),
    });
    return {
      backend,
      close: async () => {
        await backend.close();
        await connection.close();
      },
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
}
