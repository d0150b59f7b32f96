import * as runtime from '@converge/runtime';
import { apiVersionOf, type ResourceType } from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinResources } from './builtin-resources.ts';
import { startTestServer, type TestServer } from './test-support.ts';

/** The built-in kinds `@converge/runtime` exports typed constants for (its `kinds` folder). */
const KINDS = [
  'ConfigMap',
  'Secret',
  'Service',
  'ServiceAccount',
  'Pod',
  'Namespace',
  'Event',
  'PersistentVolumeClaim',
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'ReplicaSet',
  'Job',
  'CronJob',
  'Ingress',
  'Role',
  'RoleBinding',
  'ClusterRole',
  'ClusterRoleBinding',
  'Lease',
  'PodDisruptionBudget',
  'HorizontalPodAutoscaler',
  'CustomResourceDefinition',
];

/** The Event kinds the runtime's event recorder writes, declared beside it rather than generated. */
const RECORDER_KINDS = ['coreEventType', 'eventsV1Type'];

interface DiscoveredResource {
  readonly name: string;
  readonly singularName: string;
  readonly namespaced: boolean;
  readonly kind: string;
  readonly shortNames?: readonly string[];
}

function isResourceType(value: unknown): value is ResourceType {
  const t = value as Partial<ResourceType> | null;
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.group === 'string' &&
    typeof t.kind === 'string' &&
    typeof t.plural === 'string'
  );
}

const constantOf = (kind: string): string => `${kind.charAt(0).toLowerCase()}${kind.slice(1)}Type`;

/** The constants of those kinds `@converge/runtime` exports (`configMapType`, …), by name. */
const constants = Object.entries(runtime)
  .filter((entry): entry is [string, ResourceType] => isResourceType(entry[1]))
  .filter(([name]) => KINDS.some((kind) => constantOf(kind) === name) || RECORDER_KINDS.includes(name))
  .sort(([a], [b]) => (a < b ? -1 : 1));

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

/** The resources of a group-version, as the server's discovery lists them (undefined: not served). */
async function discover(group: string, version: string): Promise<DiscoveredResource[] | undefined> {
  const res = await t.request(group === '' ? `/api/${version}` : `/apis/${group}/${version}`, {
    headers: { accept: 'application/json' },
  });
  if (res.status === 404) return undefined;
  expect(res.status).toBe(200);
  return (res.json as { resources: DiscoveredResource[] }).resources;
}

describe('the runtime’s built-in kind constants', () => {
  it('cover every kind the runtime promises, each in a constant named after it', () => {
    const generated = constants.filter(([name]) => !RECORDER_KINDS.includes(name));
    expect(generated.map(([name, type]) => constantOf(type.kind) === name && name)).toEqual(
      KINDS.map(constantOf).sort(),
    );
  });

  it('agree with the embedded server’s discovery and storage for every kind it serves', async () => {
    const { resources } = builtinResources();
    const served: string[] = [];
    const unserved: string[] = [];
    for (const [name, type] of constants) {
      const list = await discover(type.group, type.version);
      const entry = list?.find((r) => r.name === type.plural);
      if (list === undefined || entry === undefined) {
        unserved.push(name);
        continue;
      }
      served.push(name);
      const facts = {
        kind: type.kind,
        singular: type.singular,
        namespaced: type.namespaced,
        shortNames: type.shortNames ?? [],
        statusSubresource: type.statusSubresource ?? false,
      };
      expect(facts, `${name} (${apiVersionOf(type)} ${type.plural})`).toEqual({
        kind: entry.kind,
        singular: entry.singularName,
        namespaced: entry.namespaced,
        shortNames: entry.shortNames ?? [],
        statusSubresource: list.some((r) => r.name === `${type.plural}/status`),
      });
      const resource = resources.find(
        (r) => r.group === type.group && r.version === type.version && r.plural === type.plural,
      );
      expect(resource, name).toBeDefined();
      expect(type.generation ?? true, `${name}: generation`).toBe(resource?.storage.generation ?? true);
    }
    // The server serves these today; kinds it does not serve yet (RBAC, autoscaling/v2, …) are
    // checked as soon as it does.
    expect(served).toEqual(
      expect.arrayContaining([
        'configMapType',
        'coreEventType',
        'customResourceDefinitionType',
        'deploymentType',
        'eventType',
        'eventsV1Type',
        'jobType',
        'leaseType',
        'namespaceType',
        'podType',
        'replicaSetType',
        'secretType',
        'serviceAccountType',
        'serviceType',
        'statefulSetType',
      ]),
    );
    expect(served.length + unserved.length).toBe(constants.length);
  });
});
