import { configMapType, deploymentType, Manager, OptionsError, Permissions } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defineKind, Type } from '../kind/index.ts';
import {
  configFiles,
  GENERATED_HEADER,
  generateManifests,
  helmChart,
  type ManifestOptions,
  policyRules,
} from './index.ts';

const widget = defineKind({
  group: 'widgets.example.com',
  version: 'v1',
  kind: 'Widget',
  spec: Type.Object({ size: Type.Integer() }),
  status: Type.Object({ ready: Type.Boolean() }),
});

function permissions(): Permissions {
  const p = new Permissions();
  p.require(widget.type, ['get', 'list', 'watch']);
  p.require(deploymentType, ['create']);
  p.require(configMapType, ['get'], { namespace: 'apps' });
  return p;
}

describe('generateManifests', () => {
  it('is deterministic: the same permissions in another order give byte-equal files', () => {
    const a = permissions();
    const b = new Permissions();
    b.require(configMapType, ['get'], { namespace: 'apps' });
    b.require(deploymentType, ['create']);
    b.require(widget.type, ['watch', 'list', 'get']);
    const options = { name: 'widgets', image: 'registry.example.com/widgets:v1' };
    expect([...configFiles(generateManifests(a, options))]).toEqual([
      ...configFiles(generateManifests(b, options)),
    ]);
    expect([...helmChart(generateManifests(a, options))]).toEqual([
      ...helmChart(generateManifests(b, options)),
    ]);
  });

  it('generates a CRD for every defineKind type and none for built-in kinds', () => {
    const set = generateManifests(permissions(), { name: 'widgets' });
    expect(set.crds.map((c) => c.metadata.name)).toEqual(['widgets.widgets.example.com']);
    expect([...configFiles(set).keys()]).toContain('crd/widgets.widgets.example.com.yaml');
  });

  it('takes a manager (its permissions) as well as a Permissions', () => {
    const manager = new Manager();
    manager.permissions.require(deploymentType, ['get']);
    const set = generateManifests(manager, {
      name: 'op',
      leaderElection: false,
      events: false,
      metricsService: false,
    });
    expect(set.roles).toHaveLength(1);
    expect(set.roles[0]?.rules).toEqual([
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] },
    ]);
    expect(set.leaderElection).toEqual([]);
    expect(set.metricsService).toBeUndefined();
    expect(set.objects.map((o) => o.kind)).toEqual([
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Deployment',
    ]);
    expect(set.dockerfile).toContain('CMD ["run","src/operator.ts"]');
  });

  it("copies the project's file: dependencies into the build stage before npm ci", () => {
    const none = generateManifests(new Permissions(), { name: 'op' }).dockerfile;
    expect(none).not.toContain('COPY vendor');
    const set = generateManifests(new Permissions(), {
      name: 'op',
      localPackages: ['vendor/converge-kube-0.1.0.tgz', 'vendor/converge-cli-0.1.0.tgz'],
    });
    const lines = set.dockerfile.split('\n');
    const copies = lines.filter((line) => line.startsWith('COPY vendor/'));
    expect(copies).toEqual([
      'COPY vendor/converge-cli-0.1.0.tgz ./vendor/converge-cli-0.1.0.tgz',
      'COPY vendor/converge-kube-0.1.0.tgz ./vendor/converge-kube-0.1.0.tgz',
    ]);
    const npmCi = lines.findIndex((line) => line.startsWith('RUN npm ci'));
    expect(lines.indexOf(copies[1] as string)).toBeLessThan(npmCi);
    expect(lines.indexOf('COPY package.json package-lock.json ./')).toBeLessThan(
      lines.indexOf(copies[0] as string),
    );
  });

  it('every YAML file starts with the generated header', () => {
    const set = generateManifests(permissions(), { name: 'widgets' });
    for (const [path, text] of [...configFiles(set), ...helmChart(set)])
      expect(text.startsWith(GENERATED_HEADER), path).toBe(true);
  });

  it('groups rules of one group, verbs and names into one PolicyRule', () => {
    expect(
      policyRules([
        { group: 'apps', resource: 'statefulsets', verbs: ['get', 'list'] },
        { group: 'apps', resource: 'deployments', verbs: ['list', 'get'] },
        { group: 'apps', resource: 'deployments/scale', verbs: ['update'], resourceNames: ['web'] },
      ]),
    ).toEqual([
      { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: ['get', 'list'] },
      { apiGroups: ['apps'], resources: ['deployments/scale'], resourceNames: ['web'], verbs: ['update'] },
    ]);
  });

  it('rejects bad options with an OptionsError naming the field', () => {
    const bad: [Partial<ManifestOptions>, string][] = [
      [{ name: 'Bad' }, 'name'],
      [{ name: '1abc' }, 'name'],
      [{ name: 'a'.repeat(41) }, 'name'],
      [{ name: 'ok', namespace: 'No' }, 'namespace'],
      [{ name: 'ok', image: 'a b' }, 'image'],
      [{ name: 'ok', modules: [] }, 'modules'],
      [{ name: 'ok', modules: ['../x.ts'] }, 'modules'],
      [{ name: 'ok', modules: ['/abs.ts'] }, 'modules'],
      [{ name: 'ok', modules: ['op.py'] }, 'modules'],
      [{ name: 'ok', metricsPort: 0 }, 'metricsPort'],
      [{ name: 'ok', probePort: 8080 }, 'probePort'],
      [{ name: 'ok', replicas: -1 }, 'replicas'],
      [{ name: 'ok', resources: { limits: { memory: 'lots' } } }, 'resources.limits.memory'],
      [{ name: 'ok', chartVersion: 'one' }, 'chartVersion'],
      [{ name: 'ok', localPackages: ['../up.tgz'] }, 'localPackages'],
      [{ name: 'ok', localPackages: ['/abs.tgz'] }, 'localPackages'],
      [{ name: 'ok', localPackages: ['./vendor/a.tgz'] }, 'localPackages'],
      [{ name: 'ok', localPackages: ['a b.tgz'] }, 'localPackages'],
      [{ name: 'ok', localPackages: 'vendor' as unknown as string[] }, 'localPackages'],
      [{ name: 'ok', fencingPolicy: 'yes' as unknown as boolean }, 'fencingPolicy'],
      [{ name: 'ok', leaderElection: false, fencingPolicy: true }, 'fencingPolicy'],
    ];
    for (const [options, field] of bad) {
      let caught: unknown;
      try {
        generateManifests(new Permissions(), options as ManifestOptions);
      } catch (error) {
        caught = error;
      }
      expect(caught, JSON.stringify(options)).toBeInstanceOf(OptionsError);
      expect((caught as OptionsError).field).toBe(field);
    }
  });

  it('arbitrary options either generate manifests or throw an OptionsError', () => {
    const options = fc.record(
      {
        name: fc.oneof(fc.stringMatching(/^[a-z][a-z0-9-]{0,12}[a-z0-9]$/), fc.string({ maxLength: 8 })),
        namespace: fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,10}$/), fc.anything()),
        image: fc.oneof(fc.constant('op:v1'), fc.string({ maxLength: 10 })),
        modules: fc.oneof(
          fc.constant(['dist/op.js']),
          fc.array(fc.string({ maxLength: 10 }), { maxLength: 2 }),
        ),
        metricsPort: fc.oneof(fc.integer({ min: -1, max: 70_000 }), fc.anything()),
        replicas: fc.oneof(fc.integer({ min: -2, max: 2000 }), fc.double()),
        leaderElection: fc.anything(),
        fencingPolicy: fc.anything(),
        resources: fc.anything(),
      },
      { requiredKeys: ['name'] },
    );
    fc.assert(
      fc.property(options, (o) => {
        try {
          const set = generateManifests(new Permissions(), o as ManifestOptions);
          expect(set.deployment.metadata.name).toBe(o.name);
        } catch (error) {
          expect(error).toBeInstanceOf(OptionsError);
        }
      }),
    );
  });
});
