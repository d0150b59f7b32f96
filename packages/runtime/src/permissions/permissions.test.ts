import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Backend, ResourceType } from '../backend/index.ts';
import type { Clock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import { enqueueForObject } from '../handler/index.ts';
import { configMapType, deploymentType, secretType, serviceType } from '../kinds/index.ts';
import { Manager } from '../manager/index.ts';
import { done } from '../reconcile/index.ts';
import { allowed } from '../webhook/index.ts';
import { type PermissionRule, Permissions } from './index.ts';

const websiteType: ResourceType = {
  group: 'example.converge.dev',
  version: 'v1',
  kind: 'Website',
  plural: 'websites',
  namespaced: true,
  statusSubresource: true,
};

/** A backend and a clock that record every use: an unstarted manager must use neither. */
function inert(): { backend: Backend; clock: Clock; used: string[] } {
  const used: string[] = [];
  const backend = new Proxy({} as Backend, {
    get(_, property) {
      if (property === 'then') return undefined;
      if (property === 'name') return 'inert';
      return (..._args: unknown[]) => {
        used.push(`backend.${String(property)}`);
        throw new Error(`inert backend: ${String(property)}`);
      };
    },
  });
  const clock: Clock = {
    // Reading the time is harmless; timers and sleeps are what would keep a process alive.
    now: () => 0,
    setTimer: () => {
      used.push('clock.setTimer');
      return { cancel: () => {} };
    },
    sleep: () => {
      used.push('clock.sleep');
      return new Promise(() => {});
    },
    random: () => 0.5,
  };
  return { backend, clock, used };
}

describe('manager.permissions', () => {
  it('derives get/list/watch for every wired kind, update/patch/status/finalizers for the primary, writes for owned kinds', () => {
    const { backend, clock } = inert();
    const manager = new Manager({ backend, clock });
    manager
      .controller(websiteType)
      .owns(deploymentType)
      .watches(configMapType, enqueueForObject())
      .reads(secretType, { namespace: 'web' })
      .complete(async () => done());
    manager.permissions.require(serviceType, ['create', 'get']);
    manager.permissions.require({ group: 'apps', resource: 'deployments', verbs: ['deletecollection'] });
    expect(manager.permissions.rules()).toEqual([
      { group: '', resource: 'configmaps', verbs: ['get', 'list', 'watch'] },
      { group: '', resource: 'services', verbs: ['create', 'get'] },
      {
        group: 'apps',
        resource: 'deployments',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      },
      {
        group: 'example.converge.dev',
        resource: 'websites',
        verbs: ['get', 'list', 'patch', 'update', 'watch'],
      },
      { group: 'example.converge.dev', resource: 'websites/finalizers', verbs: ['update'] },
      { group: 'example.converge.dev', resource: 'websites/status', verbs: ['get', 'patch', 'update'] },
      { group: '', resource: 'secrets', verbs: ['get', 'list', 'watch'], namespace: 'web' },
    ]);
    expect(manager.permissions.types().map((t) => t.plural)).toEqual([
      'configmaps',
      'secrets',
      'services',
      'deployments',
      'websites',
    ]);
  });

  it('a primary without a status subresource gets no status rule, but its finalizers', () => {
    const { backend, clock } = inert();
    const manager = new Manager({ backend, clock });
    manager.controller(configMapType).complete(async () => done());
    expect(manager.permissions.rules()).toEqual([
      { group: '', resource: 'configmaps', verbs: ['get', 'list', 'patch', 'update', 'watch'] },
      { group: '', resource: 'configmaps/finalizers', verbs: ['update'] },
    ]);
  });

  it('kinds in another backend need nothing from the API server', () => {
    const { backend, clock } = inert();
    const other = inert().backend;
    const manager = new Manager({ backend, clock });
    manager
      .controller(websiteType, { backend: other })
      .owns(configMapType, { ownership: 'labels' })
      .complete(async () => done());
    expect(manager.permissions.rules()).toEqual([
      {
        group: '',
        resource: 'configmaps',
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      },
    ]);
    expect(manager.permissions.types()).toEqual([configMapType]);
  });

  it('wiring a manager that never starts uses neither its backend nor its clock', () => {
    const { backend, clock, used } = inert();
    const manager = new Manager({ backend, clock });
    manager
      .controller(websiteType)
      .owns(deploymentType)
      .reads(secretType)
      .complete(async () => done());
    manager
      .webhook(websiteType)
      .withValidator({ validate: () => allowed() })
      .complete();
    manager.permissions.rules();
    expect(used).toEqual([]);
  });

  it('merges verbs per group, resource, namespace and names, in a deterministic order', () => {
    const rule = fc.record(
      {
        group: fc.constantFrom('', 'apps', 'example.com'),
        resource: fc.constantFrom('pods', 'deployments', 'deployments/status'),
        verbs: fc.uniqueArray(fc.constantFrom('get', 'list', 'watch', 'update', 'create'), {
          minLength: 1,
        }),
        namespace: fc.constantFrom('a', 'b'),
        resourceNames: fc.uniqueArray(fc.constantFrom('x', 'y'), { minLength: 1 }),
      },
      { requiredKeys: ['group', 'resource', 'verbs'] },
    );
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 20 }), (rules) => {
        const forward = new Permissions();
        const backward = new Permissions();
        for (const r of rules) forward.require(r);
        for (const r of [...rules].reverse()) backward.require(r);
        expect(forward.rules()).toEqual(backward.rules());
        const keys = forward
          .rules()
          .map((r) => JSON.stringify([r.namespace, r.group, r.resource, r.resourceNames]));
        expect(new Set(keys).size).toBe(keys.length);
        for (const r of rules) {
          const merged = forward
            .rules()
            .find(
              (m) =>
                m.group === r.group &&
                m.resource === r.resource &&
                m.namespace === r.namespace &&
                (m.resourceNames ?? []).join() === [...(r.resourceNames ?? [])].sort().join(),
            );
          expect(merged?.verbs).toEqual(expect.arrayContaining([...r.verbs]));
          expect([...(merged?.verbs ?? [])]).toEqual([...(merged?.verbs ?? [])].sort());
        }
      }),
    );
  });

  it('a * verb swallows the others', () => {
    const permissions = new Permissions();
    permissions.require({ group: '', resource: 'pods', verbs: ['get'] });
    permissions.require({ group: '', resource: 'pods', verbs: ['*'] });
    expect(permissions.rules()).toEqual([{ group: '', resource: 'pods', verbs: ['*'] }]);
  });

  it('rejects malformed rules with an OptionsError naming the field, and records nothing', () => {
    const bad: [unknown, string][] = [
      [{ group: 'apps', resource: 'deployments', verbs: [] }, 'permission.verbs'],
      [{ group: 'apps', resource: 'deployments', verbs: ['frobnicate'] }, 'permission.verbs'],
      [{ group: 'apps', resource: 'Deployments', verbs: ['get'] }, 'permission.resource'],
      [{ group: 'Apps!', resource: 'deployments', verbs: ['get'] }, 'permission.group'],
      [
        { group: 'apps', resource: 'deployments', verbs: ['get'], namespace: 'Not_A_Label' },
        'permission.namespace',
      ],
      [
        { group: 'apps', resource: 'deployments', verbs: ['get'], resourceNames: [] },
        'permission.resourceNames',
      ],
      [{ group: 'apps', resource: 'deployments', verbs: 'get' }, 'permission.verbs'],
      [null, 'permission'],
    ];
    for (const [rule, field] of bad) {
      const permissions = new Permissions();
      expect(() => permissions.require(rule as PermissionRule)).toThrow(OptionsError);
      try {
        permissions.require(rule as PermissionRule);
      } catch (error) {
        expect((error as OptionsError).field).toBe(field);
        expect((error as OptionsError).code).toBe('CONVERGE_ERR_OPTIONS_INVALID');
      }
      expect(permissions.rules()).toEqual([]);
    }
    const permissions = new Permissions();
    expect(() => permissions.require(deploymentType, ['get'], { subresource: 'Status!' })).toThrow(
      OptionsError,
    );
    expect(() => permissions.require(deploymentType as unknown as PermissionRule)).toThrow(OptionsError);
  });

  it('never throws anything but an OptionsError for arbitrary input', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), (a, b, c) => {
        const permissions = new Permissions();
        try {
          if (b === undefined) permissions.require(a as PermissionRule);
          else permissions.require(a as ResourceType, b as string[], c as object);
        } catch (error) {
          expect(error).toBeInstanceOf(OptionsError);
          return;
        }
        // Accepted: every rule it holds is well formed.
        for (const rule of permissions.rules()) expect(rule.verbs.length).toBeGreaterThan(0);
      }),
    );
  });

  it('a declaration with a subresource, names and namespace', () => {
    const permissions = new Permissions();
    permissions.require(deploymentType, ['update', 'get', 'update'], {
      subresource: 'scale',
      namespace: 'web',
      resourceNames: ['b', 'a', 'b'],
    });
    expect(permissions.rules()).toEqual([
      {
        group: 'apps',
        resource: 'deployments/scale',
        verbs: ['get', 'update'],
        resourceNames: ['a', 'b'],
        namespace: 'web',
      },
    ]);
    expect(permissions.types()).toEqual([deploymentType]);
  });
});
