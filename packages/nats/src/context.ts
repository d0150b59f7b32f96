import type { ResourceType } from '@converge/runtime';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { TypeBucket } from './bucket.ts';
import type { ContinueTokens } from './continue-tokens.ts';
import type { MalformedValueError } from './errors.ts';
import type { ResolvedOptions } from './options.ts';

/** What the backend's parts share: the connection, the options and the served buckets. */
export interface BackendContext {
  readonly js: JetStreamClient;
  readonly options: ResolvedOptions;
  readonly continueTokens: ContinueTokens;
  /** Logs and counts a value that is not an object of its bucket's type. */
  reportMalformed(error: MalformedValueError): void;
  /** A write may have left work for the garbage collector (an object went, an owner is terminating). */
  garbageMayExist(): void;
  /** The served type of `apiVersion` + `kind`. */
  resolveType(apiVersion: string, kind: string): ResourceType | undefined;
  /** The bucket of a served type (throws NotFoundError for another type). */
  bucketOf(type: ResourceType): TypeBucket;
  /** Every served bucket. */
  buckets(): readonly TypeBucket[];
}
