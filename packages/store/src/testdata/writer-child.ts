/**
 * A child process for the crash test: opens a store on `argv[2]` with fsync mode `argv[3]` and
 * writes forever — creates, updates and deletes in a fixed cycle — printing one line per write
 * after its promise resolved (so after it was durable): `op name resourceVersion value`.
 * The parent SIGKILLs it at a random moment and checks the reopened store.
 */
import type { UnstructuredObject } from '@converge/runtime';
import { Store } from '../store.ts';

const [dataDir, fsync] = process.argv.slice(2);
if (dataDir === undefined || (fsync !== 'always' && fsync !== 'batch')) {
  process.stderr.write('usage: writer-child <dataDir> <always|batch>\n');
  process.exit(2);
}
const type = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
  generation: false,
};
// Small thresholds so snapshots and log replacements happen often: kills land inside them too.
const store = new Store({
  dataDir,
  fsync,
  snapshotEveryRecords: 40,
  persistence: { minLogBytes: 2_048, logToSnapshotRatio: 1 },
  types: [type],
});
/**
 * Acknowledges a write: resolves once the line is in the pipe to the parent, and the next write
 * starts only then. A write to a full pipe (the parent slow to read, on a loaded machine) is
 * queued in this process and lost with it at the SIGKILL: without the wait, the store ran
 * hundreds of writes ahead of the last line the parent could read (seen: the store at revision
 * 994, the last line read at 530), and a lost acknowledgement looked like a write kept that was
 * never acknowledged. With it, at most one write is in flight past the last line in the pipe.
 */
const ack = (op: string, name: string, rv: string, value: string): Promise<void> =>
  new Promise((resolve, reject) => {
    process.stdout.write(`${op} ${name} ${rv} ${value}\n`, (error) => (error ? reject(error) : resolve()));
  });

for (let i = 0; ; i++) {
  const name = `o-${i % 25}`;
  const key = { namespace: 'default', name };
  const existing = await store.get(type, key).catch(() => undefined);
  const value = String(i);
  if (existing === undefined) {
    const created = await store.create<UnstructuredObject>(type, {
      metadata: { name, namespace: 'default' },
      data: { value },
    });
    await ack('put', name, created.metadata.resourceVersion as string, value);
  } else if (i % 7 === 0) {
    await store.delete(type, key);
    await ack('del', name, String(store.revision), '-');
  } else {
    const updated = await store.update(type, { ...existing, data: { value } });
    await ack('put', name, updated.metadata.resourceVersion as string, value);
  }
}
