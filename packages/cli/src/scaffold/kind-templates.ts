/**
 * The files of one kind in a generated project: its schema (`src/kinds/<kind>.ts`), its
 * reconciler (`src/controllers/<kind>.ts`) and its test (`test/<kind>.test.ts`). `converge init`
 * writes them for the first kind, `converge create api` for each further one.
 */
import type { KindNames } from './names.ts';

/** An import statement of the generated code (built, so the repository's import checks skip it). */
function importOf(what: string, path: string): string {
  return `import ${what} from '${path}';`;
}

/** `src/kinds/<kind>.ts`: the kind declared once, its type and its CRD both derived from it. */
export function kindModule(k: KindNames): string {
  return `/**
 * The ${k.kind} kind (${k.group}/${k.version}). Its schema is the one source of truth: the
 * TypeScript type below is derived from it, and so is the CRD (\`npm run manifests\` writes it to
 * config/crd/; \`converge manifests --check\` fails when the committed CRD differs).
 */
import { defineKind, type ObjectOfKind, Type } from '@converge/kube';

/** A status condition, as Kubernetes' metav1.Condition. */
const Condition = Type.Object({
  type: Type.String({ description: 'The condition, in CamelCase: Ready.' }),
  status: Type.Enum(['True', 'False', 'Unknown']),
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
  lastTransitionTime: Type.String({ format: 'date-time' }),
  reason: Type.String(),
  message: Type.String(),
});

export const ${k.camel}Kind = defineKind({
  group: '${k.group}',
  version: '${k.version}',
  kind: '${k.kind}',
  plural: '${k.plural}',
  scope: '${k.clusterScoped ? 'Cluster' : 'Namespaced'}',
  spec: Type.Object({
    message: Type.String({
      description: 'What the ${k.kind} says: its ConfigMap holds it under the key "message".',
      minLength: 1,
      maxLength: 1024,
    }),
  }),
  status: Type.Object({
    observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
    configMap: Type.Optional(Type.String({ description: 'The name of the ConfigMap this ${k.kind} owns.' })),
    // One entry per type, merged by type under server-side apply (kubebuilder's listType=map).
    conditions: Type.Optional(
      Type.Array(Condition, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
    ),
  }),
  printerColumns: [
    { name: 'Message', type: 'string', jsonPath: '.spec.message' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

/** A ${k.kind} object, typed from the schema above. */
export type ${k.kind} = ObjectOfKind<typeof ${k.camel}Kind>;
`;
}

/** `src/controllers/<kind>.ts`: a level-based reconciler that owns a ConfigMap and reports Ready. */
export function controllerModule(k: KindNames): string {
  const namespace = k.clusterScoped
    ? `// A cluster-scoped ${k.kind} keeps its ConfigMap in the operator's namespace.
const NAMESPACE = process.env.POD_NAMESPACE ?? 'default';

`
    : '';
  const cmNamespace = k.clusterScoped ? 'NAMESPACE' : 'key.namespace';
  return `/**
 * The ${k.kind} controller. Level-based: each reconcile reads the ${k.kind} as it is now and
 * converges the world to it — an owned ConfigMap holding \`spec.message\` (deleted with the
 * ${k.kind} by garbage collection), and a Ready condition with the generation it was computed
 * from — so a missed event or a crash between two writes heals on the next run.
 */
import {
  type ConfigMap,
  configMapType,
  createOrUpdate,
  done,
  ignoreNotFound,
  type Manager,
  setControllerReference,
  setStatusCondition,
} from '@converge/runtime';
${importOf(`{ type ${k.kind}, ${k.camel}Kind }`, `../kinds/${k.file}.ts`)}

${namespace}/** Wires the ${k.kind} controller into the manager. */
export function ${k.camel}Controller(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(${k.camel}Kind.type)
    .owns(configMapType)
    .named('${k.file}')
    .complete(async (key, { logger }) => {
      const ${k.camel} = await client.get(${k.camel}Kind.type, key).catch(ignoreNotFound);
      // Gone, or going: its ConfigMap is garbage-collected with it.
      if (${k.camel} === undefined || ${k.camel}.metadata.deletionTimestamp !== undefined) return done();
      const configMap: ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace: ${cmNamespace}, name: \`${k.file}-\${key.name}\` },
      };
      const { result } = await createOrUpdate(client, configMapType, configMap, (current) =>
        setControllerReference(${k.camel}, { ...current, data: { message: ${k.camel}.spec.message } }),
      );
      if (result !== 'unchanged') logger.info({ configMap: configMap.metadata.name, result }, 'ConfigMap converged');
      const generation = ${k.camel}.metadata.generation;
      const status: NonNullable<${k.kind}['status']> = {
        ...(generation === undefined ? {} : { observedGeneration: generation }),
        configMap: configMap.metadata.name,
        conditions: setStatusCondition(
          ${k.camel}.status?.conditions,
          {
            type: 'Ready',
            status: 'True',
            reason: 'ConfigMapReady',
            message: \`ConfigMap \${configMap.metadata.name} holds the message\`,
            ...(generation === undefined ? {} : { observedGeneration: generation }),
          },
          manager.clock.now(),
        ),
      };
      if (JSON.stringify(status) !== JSON.stringify(${k.camel}.status)) {
        await client.updateStatus(${k.camel}Kind.type, { ...${k.camel}, status });
      }
      return done();
    });
}
`;
}

/**
 * `test/<kind>.test.ts`: node:test against the embedded API server started in this process, over
 * HTTP as in a cluster — the CRD generated from the kind is created, the controller runs, an
 * object converges; assertions read the API, no kubectl.
 */
export function testModule(k: KindNames): string {
  const namespace = k.clusterScoped ? '' : `namespace: 'default', `;
  const key = k.clusterScoped
    ? `{ namespace: '', name: 'hello' }`
    : `{ namespace: 'default', name: 'hello' }`;
  const cmNamespace = k.clusterScoped ? `process.env.POD_NAMESPACE ?? 'default'` : `'default'`;
  return `/**
 * The ${k.kind} controller against an embedded Kubernetes API server in this process, reached
 * over HTTP as a cluster is: the CRD generated from the kind is served (so the server validates
 * objects against the schema), the controller runs, and a ${k.kind} gets its ConfigMap and a
 * Ready status.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ApiServer, createApiServer } from '@converge/apiserver';
import { crdsOf, KubeBackend, loadKubeconfig } from '@converge/kube';
import {
  type ConfigMap,
  configMapType,
  type CustomResourceDefinition,
  customResourceDefinitionType,
  ignoreNotFound,
  Manager,
} from '@converge/runtime';
${importOf(`{ ${k.camel}Controller }`, `../src/controllers/${k.file}.ts`)}
${importOf(`{ type ${k.kind}, ${k.camel}Kind }`, `../src/kinds/${k.file}.ts`)}

/** How long the operator may take to converge an object. */
const DEADLINE_MS = 20_000;

const dir = mkdtempSync(join(tmpdir(), '${k.file}-test-'));
let server: ApiServer;
let backend: KubeBackend;
let manager: Manager;
const stop = new AbortController();
let running: Promise<void> | undefined;

/** Polls \`read\` until it returns something, or fails after {@link DEADLINE_MS}. */
async function eventually<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(\`\${what}: not within \${DEADLINE_MS} ms\`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

before(async () => {
  const kubeconfig = join(dir, 'kubeconfig');
  server = createApiServer({ port: 0, kubeconfigPath: kubeconfig });
  await server.listen();
  backend = new KubeBackend({ config: loadKubeconfig({ path: kubeconfig, env: {} }) });
  for (const crd of crdsOf([${k.camel}Kind])) {
    await backend.create(customResourceDefinitionType, crd);
    await eventually(\`CRD \${crd.metadata.name} established\`, async () => {
      const served = await backend.get<CustomResourceDefinition>(customResourceDefinitionType, {
        namespace: '',
        name: crd.metadata.name ?? '',
      });
      const established = served.status?.conditions?.find((c) => c.type === 'Established');
      return established?.status === 'True' ? served : undefined;
    });
  }
  manager = new Manager({ backend });
  ${k.camel}Controller(manager);
  running = manager.start(stop.signal);
});

after(async () => {
  stop.abort();
  await running;
  await backend?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a ${k.kind} gets a ConfigMap holding its message and a Ready condition', async () => {
  const created = await manager.client.create(${k.camel}Kind.type, {
    apiVersion: '${k.group}/${k.version}',
    kind: '${k.kind}',
    metadata: { ${namespace}name: 'hello' },
    spec: { message: 'Hello, world' },
  } satisfies ${k.kind});
  const ready = await eventually('Ready', async () => {
    const current = await manager.client.get(${k.camel}Kind.type, ${key});
    const condition = current.status?.conditions?.find((c) => c.type === 'Ready');
    return condition?.status === 'True' && current.status?.observedGeneration === created.metadata.generation
      ? current
      : undefined;
  });
  assert.equal(ready.status?.configMap, '${k.file}-hello');
  const configMap = await manager.client
    .get<ConfigMap>(configMapType, { namespace: ${cmNamespace}, name: '${k.file}-hello' })
    .catch(ignoreNotFound);
  assert.deepEqual(configMap?.data, { message: 'Hello, world' });
  assert.equal(configMap?.metadata.ownerReferences?.[0]?.uid, created.metadata.uid);
});

test('a changed message reaches the ConfigMap, and the new generation is observed', async () => {
  const current = await manager.client.get(${k.camel}Kind.type, ${key});
  const updated = await manager.client.update(${k.camel}Kind.type, { ...current, spec: { message: 'Hello again' } });
  await eventually('the new message', async () => {
    const configMap = await manager.client
      .get<ConfigMap>(configMapType, { namespace: ${cmNamespace}, name: '${k.file}-hello' })
      .catch(ignoreNotFound);
    return configMap?.data?.message === 'Hello again' ? configMap : undefined;
  });
  await eventually('observedGeneration', async () => {
    const seen = await manager.client.get(${k.camel}Kind.type, ${key});
    return seen.status?.observedGeneration === updated.metadata.generation ? seen : undefined;
  });
});

test('the API server refuses a ${k.kind} its schema does not allow', async () => {
  await assert.rejects(
    manager.client.create(${k.camel}Kind.type, {
      apiVersion: '${k.group}/${k.version}',
      kind: '${k.kind}',
      metadata: { ${namespace}name: 'empty' },
      spec: { message: '' },
    }),
    /spec\\.message/,
  );
});
`;
}
