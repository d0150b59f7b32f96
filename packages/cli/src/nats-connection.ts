/**
 * Connecting the command line to NATS: the URL from a flag, `NATS_URL` or the default, and a
 * connection that fails fast with a {@link NatsUnreachableError} when nothing answers.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NatsUnreachableError } from './errors.ts';

export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';
/** How long the first connection attempt may take before the server counts as unreachable. */
const CONNECT_TIMEOUT_MS = 2000;

export interface NatsConnectOptions {
  /** The connection's name, as `nats server report connections` shows it. */
  readonly name: string;
  /**
   * Keep reconnecting for as long as the process runs, once connected (a long-running command);
   * otherwise the client's default of a few attempts (a one-shot command). Default false.
   */
  readonly reconnectForever?: boolean;
}

/** The NATS URL: the flag, else `NATS_URL`, else {@link DEFAULT_NATS_URL}. */
export function natsUrl(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  return flag ?? env.NATS_URL ?? DEFAULT_NATS_URL;
}

/** Connects to `url`; rejects with a {@link NatsUnreachableError} if the first attempt fails. */
export async function connectNats(url: string, options: NatsConnectOptions): Promise<NatsConnection> {
  try {
    return await connect({
      servers: url,
      timeout: CONNECT_TIMEOUT_MS,
      name: options.name,
      ...(options.reconnectForever === true ? { maxReconnectAttempts: -1 } : {}),
    });
  } catch (error) {
    throw new NatsUnreachableError(url, { cause: error });
  }
}
