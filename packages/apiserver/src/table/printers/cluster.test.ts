import { describe, expect, it } from 'vitest';
import {
  defaultConvertorPrinter,
  leasePrinter,
  validatingAdmissionPolicyBindingPrinter,
  validatingAdmissionPolicyPrinter,
  webhookConfigurationPrinter,
} from './cluster.ts';
import { builtinPrinter } from './index.ts';

const now = Date.UTC(2026, 0, 10, 12, 0, 0);
const meta = (name: string) => ({ name, creationTimestamp: '2026-01-10T11:58:00Z' });

describe('Lease', () => {
  it('prints NAME HOLDER AGE, an empty holder when the lease is free', () => {
    expect(leasePrinter.columns.map((c) => c.name)).toEqual(['Name', 'Holder', 'Age']);
    const lease = {
      metadata: meta('my-operator'),
      spec: { holderIdentity: 'pod-a_4c1e', leaseDurationSeconds: 15 },
    };
    expect(leasePrinter.row(lease, now).cells).toEqual(['my-operator', 'pod-a_4c1e', '2m']);
    expect(leasePrinter.row({ metadata: meta('free'), spec: {} }, now).cells).toEqual(['free', '', '2m']);
  });
});

describe('CustomResourceDefinition', () => {
  it('prints NAME CREATED AT, the creation time in UTC as a date column', () => {
    expect(defaultConvertorPrinter.columns.map((c) => [c.name, c.type])).toEqual([
      ['Name', 'string'],
      ['Created At', 'date'],
    ]);
    const crd = { metadata: { name: 'widgets.example.com', creationTimestamp: '2026-01-10T13:58:00+02:00' } };
    expect(defaultConvertorPrinter.row(crd, now).cells).toEqual([
      'widgets.example.com',
      '2026-01-10T11:58:00Z',
    ]);
    expect(builtinPrinter('apiextensions.k8s.io', 'CustomResourceDefinition')).toBe(defaultConvertorPrinter);
  });
});

describe('admission registration', () => {
  it('prints NAME WEBHOOKS AGE for webhook configurations', () => {
    const config = {
      metadata: meta('policy-hooks'),
      webhooks: [{ name: 'a.example.com' }, { name: 'b.example.com' }],
    };
    expect(webhookConfigurationPrinter.row(config, now).cells).toEqual(['policy-hooks', 2, '2m']);
    expect(builtinPrinter('admissionregistration.k8s.io', 'ValidatingWebhookConfiguration')).toBe(
      webhookConfigurationPrinter,
    );
  });

  it('prints NAME VALIDATIONS PARAMKIND AGE for validating admission policies', () => {
    const policy = {
      metadata: meta('replica-limit'),
      spec: {
        paramKind: { apiVersion: 'example.com/v1', kind: 'Limit' },
        validations: [{ expression: 'true' }],
      },
    };
    expect(validatingAdmissionPolicyPrinter.row(policy, now).cells).toEqual([
      'replica-limit',
      1,
      'example.com/v1/Limit',
      '2m',
    ]);
    expect(validatingAdmissionPolicyPrinter.row({ metadata: meta('p'), spec: {} }, now).cells).toEqual([
      'p',
      0,
      '<unset>',
      '2m',
    ]);
  });

  it('prints NAME POLICYNAME PARAMREF AGE for bindings, in every form of paramRef', () => {
    const binding = (paramRef?: object) => ({
      metadata: meta('b'),
      spec: { policyName: 'replica-limit', ...(paramRef ? { paramRef } : {}) },
    });
    const param = (paramRef?: object) =>
      validatingAdmissionPolicyBindingPrinter.row(binding(paramRef), now).cells[2];
    expect(
      validatingAdmissionPolicyBindingPrinter.row(binding({ name: 'l', namespace: 'ns' }), now).cells,
    ).toEqual(['b', 'replica-limit', 'ns/l', '2m']);
    expect(param({ name: 'l' })).toBe('*/l');
    expect(param()).toBe('<unset>');
    expect(
      param({
        selector: {
          matchLabels: { tier: 'a', app: 'b' },
          matchExpressions: [{ key: 'env', operator: 'In', values: ['x', 'y'] }],
        },
      }),
    ).toBe(
      '&LabelSelector{MatchLabels:map[string]string{app: b,tier: a,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:env,Operator:In,Values:[x y],},},}',
    );
  });
});

describe('builtinPrinter', () => {
  it('knows the served built-in kinds by group and kind, and nothing else', () => {
    expect(builtinPrinter('', 'Pod')?.columns[1]?.name).toBe('Ready');
    expect(builtinPrinter('apps', 'Deployment')?.columns[2]?.name).toBe('Up-to-date');
    expect(builtinPrinter('events.k8s.io', 'Event')?.columns[0]?.name).toBe('Last Seen');
    expect(builtinPrinter('example.com', 'Pod')).toBeUndefined();
    expect(builtinPrinter('', 'Deployment')).toBeUndefined();
  });
});
