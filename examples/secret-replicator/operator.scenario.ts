/**
 * The Secret replicator under simulation (`npx converge simulate
 * examples/secret-replicator/operator.scenario.ts`): the user creates namespaces and Secrets,
 * annotates some for replication, changes one, edits a replica by hand, stops replicating another
 * and deletes a third, while the simulator injects faults. Once things settle, every other
 * namespace holds exactly the annotated sources' copies, with their data and type, and nothing else
 * labelled as a replica.
 */
import { type Client, type Namespace, namespaceType, type Secret, secretType } from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import secretReplicator, { REPLICA_OF, REPLICATE, SOURCE_NAMESPACE } from './operator.ts';

const base64 = (text: string) => Buffer.from(text).toString('base64');
const namespaces = ['team-a', 'team-b', 'team-c'];

const secret = (name: string, token: string, replicate: boolean): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    name,
    namespace: SOURCE_NAMESPACE,
    ...(replicate ? { annotations: { [REPLICATE]: 'true' } } : {}),
  },
  type: 'Opaque',
  data: { token: base64(token) },
});

const namespace = (name: string): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

async function createNamespace(client: Client, name: string): Promise<void> {
  await client.create(namespaceType, namespace(name));
}

export default defineScenario({
  name: 'secret-replicator',
  operator: secretReplicator,
  setup: async ({ client, sleep }) => {
    await createNamespace(client, SOURCE_NAMESPACE);
    await createNamespace(client, 'team-a');
    await createNamespace(client, 'team-b');
    await client.create(secretType, secret('private', 'x', false));
    await client.create(secretType, secret('registry', 'one', true));
    await client.create(secretType, secret('tls', 'cert', true));
    await client.create(secretType, secret('old', 'gone-soon', true));
    await sleep(500);
    // A namespace created later gets the copies; a change to a source reaches every replica.
    await createNamespace(client, 'team-c');
    await client.patch(
      secretType,
      { namespace: SOURCE_NAMESPACE, name: 'registry' },
      { type: 'merge', patch: { data: { token: base64('two') } } },
    );
    await sleep(300);
    // An edit to a replica is undone (if the replica is there yet, it is the user's edit to undo).
    await client
      .patch(
        secretType,
        { namespace: 'team-b', name: 'registry' },
        { type: 'merge', patch: { data: { token: base64('bad') } } },
      )
      .catch(() => undefined);
    // Unannotated: its replicas go. Deleted: its replicas go.
    await client.patch(
      secretType,
      { namespace: SOURCE_NAMESPACE, name: 'tls' },
      { type: 'merge', patch: { metadata: { annotations: { [REPLICATE]: null } } } },
    );
    await sleep(200);
    await client.delete(secretType, { namespace: SOURCE_NAMESPACE, name: 'old' });
  },
  invariants: {
    'every other namespace holds exactly the annotated sources, in step': async ({ client }) => {
      const sources = (await client.list<Secret>(secretType, { namespace: SOURCE_NAMESPACE })).filter(
        (s) => s.metadata.annotations?.[REPLICATE] === 'true',
      );
      const wanted = sources.map((s) => s.metadata.name).sort();
      if (JSON.stringify(wanted) !== '["registry"]') throw new Error(`sources are ${JSON.stringify(wanted)}`);
      for (const ns of namespaces) {
        const replicas = await client.list<Secret>(secretType, { namespace: ns, labelSelector: REPLICA_OF });
        const names = replicas.map((r) => r.metadata.name).sort();
        if (JSON.stringify(names) !== JSON.stringify(wanted))
          throw new Error(`${ns} holds replicas ${JSON.stringify(names)}, wants ${JSON.stringify(wanted)}`);
        for (const replica of replicas) {
          const source = sources.find((s) => s.metadata.name === replica.metadata.name) as Secret;
          if (JSON.stringify(replica.data) !== JSON.stringify(source.data) || replica.type !== source.type)
            throw new Error(
              `${ns}/${replica.metadata.name} holds ${JSON.stringify(replica.data)}, not the source's`,
            );
          if (replica.metadata.labels?.[REPLICA_OF] !== replica.metadata.name)
            throw new Error(
              `${ns}/${replica.metadata.name} is labelled ${JSON.stringify(replica.metadata.labels)}`,
            );
        }
      }
    },
    'the sources are left as the user left them': async ({ client }) => {
      const names = (await client.list<Secret>(secretType, { namespace: SOURCE_NAMESPACE }))
        .map((s) => s.metadata.name)
        .sort();
      if (JSON.stringify(names) !== '["private","registry","tls"]')
        throw new Error(`the source namespace holds ${JSON.stringify(names)}`);
    },
  },
});
