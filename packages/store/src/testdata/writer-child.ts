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
const ack = (op: string, name: string, rv: string, value: string): void => {
  process.stdout.write(`${op} ${name} ${rv} ${value}\n`);
};

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
    ack('put', name, created.metadata.resourceVersion as string, value);
  } else if (i % 7 === 0) {
    await store.delete(type, key);
    ack('del', name, String(store.revision), '-');
  } else {
    const updated = await store.update(type, { ...existing, data: { value } });
    ack('put', name, updated.metadata.resourceVersion as string, value);
  }
}
