/**
 * Secret replicator: every Secret in the source namespace (`default`) annotated
 * `examples.converge.dev/replicate: "true"` is copied into every other namespace that is not
 * terminating, kept in step when the source changes, and removed when the source goes or stops
 * being annotated. The primary kind is Namespace; the Secrets it watches but does not own reach it
 * through a map function (one source Secret → every namespace).
 */
import {
  type Client,
  createOrUpdate,
  done,
  enqueueFromMapFunction,
  ignoreNotFound,
  type KubeObject,
  type Manager,
  namespaceType,
  type ObjectKey,
  type Secret,
  secretType,
} from '@converge/runtime';

export const SOURCE_NAMESPACE = 'default';
export const REPLICATE = 'examples.converge.dev/replicate';
export const REPLICA_OF = 'examples.converge.dev/replica-of';

const isSource = (s: Secret) =>
  s.metadata.namespace === SOURCE_NAMESPACE && s.metadata.annotations?.[REPLICATE] === 'true';

export async function reconcileNamespace(client: Client, key: ObjectKey): Promise<void> {
  if (key.name === SOURCE_NAMESPACE) return;
  const ns = await client.get(namespaceType, { namespace: '', name: key.name }).catch(ignoreNotFound);
  if (ns === undefined || ns.metadata.deletionTimestamp) return;
  const sources = (await client.list(secretType, { namespace: SOURCE_NAMESPACE })).filter(isSource);
  const wanted = new Set(sources.map((s) => s.metadata.name ?? ''));
  for (const source of sources) {
    const name = source.metadata.name ?? '';
    const skeleton: Secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: key.name } };
    await createOrUpdate(client, secretType, skeleton, (current) => ({
      ...current,
      metadata: { ...current.metadata, labels: { ...current.metadata.labels, [REPLICA_OF]: name } },
      ...(source.type === undefined ? {} : { type: source.type }),
      data: source.data ?? {},
    }));
  }
  const replicas = await client.list(secretType, { namespace: key.name, labelSelector: REPLICA_OF });
  for (const replica of replicas) {
    if (wanted.has(replica.metadata.labels?.[REPLICA_OF] ?? '')) continue;
    const name = replica.metadata.name ?? '';
    await client.delete(secretType, { namespace: key.name, name }).catch(ignoreNotFound);
  }
}

/** The operator module. */
export default function secretReplicator(manager: Manager): void {
  const client = manager.client;
  // Shared with the builder's own Namespace informer (reference-counted, one watch).
  const namespaces = manager.informers.acquire({ backend: manager.backend, type: namespaceType }).informer;
  manager
    .controller(namespaceType)
    .watches(
      secretType,
      // A source Secret concerns every namespace; a replica only its own (so edits to it are undone).
      enqueueFromMapFunction<KubeObject, ObjectKey>((secret) => {
        const ns = secret.metadata.namespace ?? '';
        if (ns === SOURCE_NAMESPACE)
          return namespaces.cache.keys().map((k) => ({ namespace: '', name: k.name }));
        return secret.metadata.labels?.[REPLICA_OF] === undefined ? [] : [{ namespace: '', name: ns }];
      }),
    )
    .named('secret-replicator')
    .complete(async (key) => {
      await reconcileNamespace(client, key);
      return done();
    });
}
