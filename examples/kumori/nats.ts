/**
 * The Kumori example's NATS connection: a short connect timeout and a clear error when nothing
 * answers, so `converge dev` can say why the example did not start.
 */
import { NatsBackend } from '@converge/nats';
import type { ResourceType } from '@converge/runtime';
import { connect } from '@nats-io/transport-node';

export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

/** Nothing answered at the NATS URL; the message says how to get a server. */
export class NatsUnreachableError extends Error {
  readonly url: string;

  constructor(url: string, options?: ErrorOptions) {
    const hint = 'start one with `nats-server -js` (Debian: apt-get install nats-server) or set NATS_URL';
    super(`NATS is not reachable at ${url}: ${hint}`, options);
    this.name = 'NatsUnreachableError';
    this.url = url;
  }
}

/** A NATS backend over a connection of its own, and how to close both. */
export interface NatsConnection {
  readonly backend: NatsBackend;
  close(): Promise<void>;
}

/**
 * Connects to `url` within `timeoutMs` (reconnecting forever afterwards) and serves `types` from
 * buckets named with `bucketPrefix`. Throws {@link NatsUnreachableError} when nothing answers; a
 * server without JetStream is the backend's UnavailableError.
 */
export async function connectNats(
  url: string,
  types: readonly ResourceType[],
  bucketPrefix = 'converge_',
  timeoutMs = 2000,
): Promise<NatsConnection> {
  let connection: Awaited<ReturnType<typeof connect>>;
  try {
    connection = await connect({
      servers: url,
      timeout: timeoutMs,
      maxReconnectAttempts: -1,
      name: 'kumori',
    });
  } catch (error) {
    throw new NatsUnreachableError(url, { cause: error });
  }
  try {
    const backend = await NatsBackend.connect({ connection, types, bucketPrefix });
    const close = async () => {
      await backend.close();
      await connection.close();
    };
    return { backend, close };
  } catch (error) {
    await connection.close();
    throw error;
  }
}
