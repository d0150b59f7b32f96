import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isExempt, namespaceSelected, objectSelected, ruleMatches } from './match.ts';
import type { AdmissionAttributes, Webhook } from './types.ts';

function attributes(overrides: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    subResource: '',
    namespaced: true,
    namespace: 'default',
    name: 'web',
    object: { metadata: { name: 'web', labels: { app: 'web' } } },
    oldObject: null,
    dryRun: false,
    options: {},
    userInfo: { username: 'admin' },
    ...overrides,
  };
}

const all = { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'] };
const name = fc.stringMatching(/^[a-z]{1,8}$/);

describe('webhook rules', () => {
  it('"*" names every main resource and no subresource; "*/*" and "RES/*" name both', () => {
    fc.assert(
      fc.property(name, fc.option(name, { nil: '' }), (resource, subResource) => {
        const request = attributes({ resource: { group: 'apps', version: 'v1', resource }, subResource });
        expect(ruleMatches({ ...all, resources: ['*'] }, request)).toBe(subResource === '');
        expect(ruleMatches({ ...all, resources: ['*/*'] }, request)).toBe(true);
        expect(ruleMatches({ ...all, resources: [`${resource}/*`] }, request)).toBe(true);
        expect(ruleMatches({ ...all, resources: [`${resource}x/*`] }, request)).toBe(false);
        expect(ruleMatches({ ...all, resources: [resource] }, request)).toBe(subResource === '');
      }),
    );
  });

  it('"*/status" names the status of every resource and nothing else', () => {
    const rule = { ...all, resources: ['*/status'] };
    expect(ruleMatches(rule, attributes({ subResource: 'status' }))).toBe(true);
    expect(ruleMatches(rule, attributes({ subResource: 'scale' }))).toBe(false);
    expect(ruleMatches(rule, attributes())).toBe(false);
  });

  it('operations, groups, versions and scope must all match', () => {
    const rule = {
      operations: ['UPDATE'],
      apiGroups: ['apps'],
      apiVersions: ['v1'],
      resources: ['deployments'],
      scope: 'Namespaced',
    };
    expect(ruleMatches(rule, attributes({ operation: 'UPDATE' }))).toBe(true);
    expect(ruleMatches(rule, attributes())).toBe(false);
    expect(ruleMatches(rule, attributes({ operation: 'UPDATE', namespaced: false }))).toBe(false);
    expect(
      ruleMatches(
        rule,
        attributes({
          operation: 'UPDATE',
          resource: { group: 'apps', version: 'v2', resource: 'deployments' },
        }),
      ),
    ).toBe(false);
    expect(
      ruleMatches({ ...rule, scope: 'Cluster' }, attributes({ operation: 'UPDATE', namespaced: false })),
    ).toBe(true);
  });

  it('writes to webhook configurations are exempt, other admissionregistration kinds too', () => {
    const of = (resource: string): AdmissionAttributes =>
      attributes({ resource: { group: 'admissionregistration.k8s.io', version: 'v1', resource } });
    expect(isExempt(of('validatingwebhookconfigurations'))).toBe(true);
    expect(isExempt(of('mutatingwebhookconfigurations'))).toBe(true);
    expect(isExempt(attributes())).toBe(false);
  });
});

describe('webhook selectors', () => {
  const hook = (selectors: Partial<Webhook>): Webhook => ({ name: 'w', clientConfig: {}, ...selectors });

  it('objectSelector: either the new or the old object may match', () => {
    const webhook = hook({ objectSelector: { matchLabels: { app: 'db' } } });
    expect(objectSelected(webhook, attributes())).toBe(false);
    const relabelled = attributes({
      operation: 'UPDATE',
      oldObject: { metadata: { labels: { app: 'db' } } },
    });
    expect(objectSelected(webhook, relabelled)).toBe(true);
    const deleted = attributes({
      operation: 'DELETE',
      object: null,
      oldObject: { metadata: { labels: { app: 'db' } } },
    });
    expect(objectSelected(webhook, deleted)).toBe(true);
  });

  it('namespaceSelector: the namespace labels of namespaced objects; always for other cluster-scoped ones', async () => {
    const webhook = hook({ namespaceSelector: { matchLabels: { env: 'prod' } } });
    const labels = async (ns: string): Promise<Record<string, string>> =>
      ns === 'prod' ? { env: 'prod' } : {};
    expect(await namespaceSelected(webhook, attributes(), labels)).toBe(false);
    expect(await namespaceSelected(webhook, attributes({ namespace: 'prod' }), labels)).toBe(true);
    expect(await namespaceSelected(webhook, attributes({ namespaced: false, namespace: '' }), labels)).toBe(
      true,
    );
    const namespace = attributes({
      namespaced: false,
      namespace: '',
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      object: { metadata: { name: 'new', labels: { env: 'dev' } } },
    });
    expect(await namespaceSelected(webhook, namespace, labels)).toBe(false);
  });
});
