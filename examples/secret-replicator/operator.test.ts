import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, eventually, type KubeJson, type KubeListJson, startCluster } from '../test-support.ts';
import secretReplicator, { REPLICA_OF, REPLICATE } from './operator.ts';

type SecretJson = KubeJson & { readonly data?: Readonly<Record<string, string>> };

const base64 = (text: string) => Buffer.from(text).toString('base64');

let cluster: Cluster;
const kubectl = (...args: string[]) => cluster.kubectl(args);

beforeAll(async () => {
  cluster = await startCluster({ operator: secretReplicator, crds: [] });
  await kubectl('create', 'namespace', 'team-a');
  await kubectl('create', 'namespace', 'team-b');
});
afterAll(async () => {
  await cluster?.close();
});

/** Waits (with kubectl wait) until the replica of `registry` in `namespace` holds `token`. */
async function replicaHolds(namespace: string, token: string): Promise<void> {
  await kubectl('wait', '--for=create', '--timeout=60s', '-n', namespace, 'secret/registry');
  await kubectl(
    'wait',
    `--for=jsonpath={.data.token}=${base64(token)}`,
    '--timeout=60s',
    '-n',
    namespace,
    'secret/registry',
  );
}

/** The names of the Secrets in `namespace`. */
async function secretNames(namespace: string): Promise<string[]> {
  const list = await cluster.getJson<KubeListJson<SecretJson>>(['secrets', '-n', namespace]);
  return list.items.map((s) => s.metadata.name);
}

describe('Secret replicator over HTTP, driven by kubectl', () => {
  it('an annotated Secret created with kubectl is copied into every other namespace; an unannotated one is not', async () => {
    await kubectl('create', 'secret', 'generic', 'private', '-n', 'default', '--from-literal=x=1');
    await kubectl('create', 'secret', 'generic', 'registry', '-n', 'default', '--from-literal=token=one');
    await kubectl('annotate', 'secret', 'registry', '-n', 'default', `${REPLICATE}=true`);
    await replicaHolds('team-a', 'one');
    await replicaHolds('team-b', 'one');

    const replica = await cluster.getJson<SecretJson>(['secret', 'registry', '-n', 'team-a']);
    expect(replica.metadata.labels?.[REPLICA_OF]).toBe('registry');
    expect(await secretNames('team-a')).toEqual(['registry']);
    expect(await secretNames('team-b')).toEqual(['registry']);
  });

  it('a namespace created later gets the copy, and a change to the source reaches every replica', async () => {
    await kubectl('create', 'namespace', 'team-c');
    await replicaHolds('team-c', 'one');
    await kubectl(
      'patch',
      'secret',
      'registry',
      '-n',
      'default',
      '--type=merge',
      '-p',
      JSON.stringify({ data: { token: base64('two') } }),
    );
    for (const namespace of ['team-a', 'team-b', 'team-c']) await replicaHolds(namespace, 'two');
  });

  it('an edit to a replica with kubectl is undone', async () => {
    const written = await kubectl(
      'patch',
      'secret',
      'registry',
      '-n',
      'team-b',
      '--type=merge',
      '-p',
      JSON.stringify({ data: { token: base64('bad') } }),
      '-o',
      'jsonpath={.data.token}',
    );
    expect(written).toBe(base64('bad'));
    await eventually('the replica in team-b to hold the source token again', async () => {
      const replica = await cluster.getJson<SecretJson>(['secret', 'registry', '-n', 'team-b']);
      return replica.data?.token === base64('two');
    });
  });

  it('removing the annotation with kubectl removes every replica and leaves the source', async () => {
    await kubectl('annotate', 'secret', 'registry', '-n', 'default', `${REPLICATE}-`);
    for (const namespace of ['team-a', 'team-b', 'team-c']) {
      await kubectl('wait', '--for=delete', '--timeout=60s', '-n', namespace, 'secret/registry');
      expect(await secretNames(namespace)).toEqual([]);
    }
    expect((await secretNames('default')).sort()).toEqual(['private', 'registry']);
  });

  it('annotated again and then deleted with kubectl, the source takes its replicas with it', async () => {
    await kubectl('annotate', 'secret', 'registry', '-n', 'default', `${REPLICATE}=true`);
    await replicaHolds('team-a', 'two');
    await kubectl('delete', 'secret', 'registry', '-n', 'default');
    for (const namespace of ['team-a', 'team-b', 'team-c']) {
      await kubectl('wait', '--for=delete', '--timeout=60s', '-n', namespace, 'secret/registry');
    }
  });
});
