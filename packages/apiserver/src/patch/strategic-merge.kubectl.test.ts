import { describe, expect, it } from 'vitest';
import { patchSchemaFor } from './builtin-schemas.ts';
import { LAST_APPLIED_ANNOTATION } from './last-applied.ts';
import type { StructSchema } from './schema.ts';
import { applyStrategicMergePatch } from './strategic-merge.ts';
import { updateManagedFields } from './update-managed-fields.ts';

/*
 * The bodies below are the ones kubectl 1.32 sends (apiserver-semantics.md §1): client-side
 * `kubectl apply` of a changed manifest (a three-way strategic merge patch with `$setElementOrder`
 * and the new last-applied annotation, fieldManager kubectl-client-side-apply), `kubectl patch`
 * (fieldManager kubectl-patch) and `kubectl scale` (a merge patch of the scale subresource).
 */

function schemaOf(group: string, kind: string): StructSchema {
  const schema = patchSchemaFor(group, 'v1', kind);
  if (schema === undefined) throw new Error(`no schema for ${kind}`);
  return schema;
}

const DEPLOYMENT = schemaOf('apps', 'Deployment');
const CONFIGMAP = schemaOf('', 'ConfigMap');

function deployment(containers: object[], extra: object = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web' }, resourceVersion: '7' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers, ...extra } },
    },
  };
}

const app = {
  name: 'app',
  image: 'nginx:1.25',
  ports: [{ containerPort: 80, protocol: 'TCP' }],
  env: [
    { name: 'MODE', value: 'prod' },
    { name: 'DEBUG', value: '0' },
  ],
  imagePullPolicy: 'IfNotPresent',
};
const sidecar = { name: 'log', image: 'busybox', imagePullPolicy: 'Always' };

describe('kubectl apply (client-side) on a Deployment', () => {
  it('adds a container in the order of $setElementOrder and keeps the server-set fields', () => {
    const live = deployment([app]);
    const lastApplied = '{"apiVersion":"apps/v1","kind":"Deployment",…}\n';
    const patch = {
      metadata: { annotations: { [LAST_APPLIED_ANNOTATION]: lastApplied } },
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'log' }, { name: 'app' }],
            containers: [{ image: 'busybox', name: 'log' }],
          },
        },
      },
    };
    const result = applyStrategicMergePatch(live, patch, DEPLOYMENT) as ReturnType<typeof deployment>;
    expect(result.spec.template.spec.containers).toEqual([{ image: 'busybox', name: 'log' }, app]);
    expect(result.metadata).toEqual({
      ...live.metadata,
      annotations: { [LAST_APPLIED_ANNOTATION]: lastApplied },
    });
  });

  it('changes an image, removes an env var and a container, and sets a port, all in one patch', () => {
    const live = deployment([app, sidecar]);
    const patch = {
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'app' }],
            containers: [
              {
                '$setElementOrder/env': [{ name: 'MODE' }],
                env: [{ $patch: 'delete', name: 'DEBUG' }],
                image: 'nginx:1.26',
                name: 'app',
                '$setElementOrder/ports': [{ containerPort: 80 }, { containerPort: 443 }],
                ports: [{ containerPort: 443 }],
              },
              { $patch: 'delete', name: 'log' },
            ],
          },
        },
      },
    };
    const result = applyStrategicMergePatch(live, patch, DEPLOYMENT) as ReturnType<typeof deployment>;
    expect(result.spec.template.spec.containers).toEqual([
      {
        ...app,
        image: 'nginx:1.26',
        env: [{ name: 'MODE', value: 'prod' }],
        ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443 }],
      },
    ]);
  });

  it('removes a label with null and replaces tolerations, which have no merge key', () => {
    const live = deployment([app], { tolerations: [{ key: 'a', operator: 'Exists' }] });
    const patch = {
      metadata: { labels: { app: null, tier: 'front' } },
      spec: { template: { spec: { tolerations: [{ key: 'b', operator: 'Exists' }] } } },
    };
    const result = applyStrategicMergePatch(live, patch, DEPLOYMENT) as ReturnType<typeof deployment> & {
      spec: { template: { spec: { tolerations: unknown } } };
    };
    expect(result.metadata.labels).toEqual({ tier: 'front' });
    expect(result.spec.template.spec.tolerations).toEqual([{ key: 'b', operator: 'Exists' }]);
  });

  it('applies the ConfigMap patch of §1 (data change plus the new annotation) as a merge', () => {
    const live = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'demo', annotations: { [LAST_APPLIED_ANNOTATION]: 'old' } },
      data: { a: '1', b: '2' },
    };
    const patch = { data: { a: '2' }, metadata: { annotations: { [LAST_APPLIED_ANNOTATION]: 'new' } } };
    expect(applyStrategicMergePatch(live, patch, CONFIGMAP)).toEqual({
      ...live,
      metadata: { name: 'demo', annotations: { [LAST_APPLIED_ANNOTATION]: 'new' } },
      data: { a: '2', b: '2' },
    });
  });

  it('removes a finalizer with $deleteFromPrimitiveList and adds one by union', () => {
    const live = { metadata: { name: 'demo', finalizers: ['a.example/x', 'b.example/y'] } };
    const patch = {
      metadata: {
        '$setElementOrder/finalizers': ['b.example/y', 'c.example/z'],
        '$deleteFromPrimitiveList/finalizers': ['a.example/x'],
        finalizers: ['c.example/z'],
      },
    };
    expect(applyStrategicMergePatch(live, patch, CONFIGMAP)).toEqual({
      metadata: { name: 'demo', finalizers: ['b.example/y', 'c.example/z'] },
    });
  });

  it('merges ownerReferences by uid, in the order the patch names them', () => {
    const owner = (uid: string, name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid });
    const live = { metadata: { name: 'demo', ownerReferences: [owner('u1', 'one')] } };
    const patch = { metadata: { ownerReferences: [owner('u2', 'two'), { uid: 'u1', name: 'uno' }] } };
    const result = applyStrategicMergePatch(live, patch, CONFIGMAP) as {
      metadata: { ownerReferences: object[] };
    };
    expect(result.metadata.ownerReferences).toEqual([owner('u2', 'two'), owner('u1', 'uno')]);
  });
});

describe('kubectl patch deployment web -p \'{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"v2"}]}}}}\'', () => {
  const patch = { spec: { template: { spec: { containers: [{ name: 'app', image: 'v2' }] } } } };

  it('changes only the image of the container named app', () => {
    const result = applyStrategicMergePatch(deployment([app, sidecar]), patch, DEPLOYMENT) as ReturnType<
      typeof deployment
    >;
    expect(result.spec.template.spec.containers).toEqual([{ ...app, image: 'v2' }, sidecar]);
    expect(result.spec.replicas).toBe(1);
  });

  it('records kubectl-patch as the owner of the image it changed', () => {
    const created = deployment([app]);
    const createdFields = updateManagedFields({
      live: undefined,
      updated: created,
      manager: 'kubectl-create',
      apiVersion: 'apps/v1',
      now: '2026-11-01T10:00:00Z',
      schema: DEPLOYMENT,
    });
    const live = { ...created, metadata: { ...created.metadata, managedFields: createdFields } };
    const patched = applyStrategicMergePatch(live, patch, DEPLOYMENT);
    const fields = updateManagedFields({
      live,
      updated: patched as object,
      manager: 'kubectl-patch',
      apiVersion: 'apps/v1',
      now: '2026-11-01T10:05:00Z',
      schema: DEPLOYMENT,
    });
    expect(fields.map((f) => f.manager)).toEqual(['kubectl-create', 'kubectl-patch']);
    expect(fields[1]?.fieldsV1).toEqual({
      'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { 'f:image': {} } } } } },
    });
    expect(JSON.stringify(fields[0]?.fieldsV1)).not.toContain('"f:image":');
    expect(JSON.stringify(fields[0]?.fieldsV1)).toContain('"f:imagePullPolicy":');
  });
});

describe('kubectl scale deployment web --replicas=3', () => {
  it('a replicas-only patch changes replicas, and the scale write is owned with subresource scale', () => {
    const live = deployment([app]);
    const scaled = applyStrategicMergePatch(live, { spec: { replicas: 3 } }, DEPLOYMENT) as ReturnType<
      typeof deployment
    >;
    expect(scaled).toEqual({ ...live, spec: { ...live.spec, replicas: 3 } });
    const withFields = {
      ...live,
      metadata: {
        ...live.metadata,
        managedFields: updateManagedFields({
          live: undefined,
          updated: live,
          manager: 'kubectl-create',
          apiVersion: 'apps/v1',
          now: '2026-11-01T10:00:00Z',
          schema: DEPLOYMENT,
        }),
      },
    };
    const fields = updateManagedFields({
      live: withFields,
      updated: scaled,
      manager: 'kubectl',
      apiVersion: 'apps/v1',
      now: '2026-11-01T11:00:00Z',
      subresource: 'scale',
      schema: DEPLOYMENT,
    });
    expect(fields.find((f) => f.subresource === 'scale')).toEqual({
      manager: 'kubectl',
      operation: 'Update',
      apiVersion: 'apps/v1',
      time: '2026-11-01T11:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      subresource: 'scale',
    });
    expect(JSON.stringify(fields.find((f) => f.manager === 'kubectl-create')?.fieldsV1)).not.toContain(
      'f:replicas',
    );
  });
});
