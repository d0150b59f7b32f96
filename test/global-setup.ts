/**
 * Run-wide state of the `process` project:
 *
 * - the folder the packed tarballs are shared in (test/packs.ts), made empty before the first test
 *   and removed after the last;
 * - a sentinel KV bucket on the shared NATS server (`NATS_URL`, default 127.0.0.1:4222), kept
 *   there for good. nats-server removes its account's stream folder when the last stream goes, and
 *   a stream created at that moment fails with "error creating store for stream" (10077; its log:
 *   `mkdir …/jetstream/$G/streams: no such file or directory`). Tests create and delete buckets
 *   all the time, and two suites side by side (or a suite and anything else using the server)
 *   met that race; with one stream that never goes, the folder stays.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import type { TestProject } from 'vitest/node';

/** The bucket that keeps the shared server's stream folder from being removed. */
export const SENTINEL_BUCKET = 'converge-test-sentinel';

async function keepStreamFolder(): Promise<void> {
  const servers = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  let connection: Awaited<ReturnType<typeof connect>> | undefined;
  try {
    connection = await connect({ servers, timeout: 2_000, maxReconnectAttempts: 0 });
    await new Kvm(connection).create(SENTINEL_BUCKET, { history: 1 });
  } catch {
    // No shared server (the NATS tests start a private one then), or no JetStream: nothing to keep.
  } finally {
    await connection?.close();
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'converge-packs-'));
  project.provide('convergePacks', dir);
  await keepStreamFolder();
  return () => rmSync(dir, { recursive: true, force: true });
}
