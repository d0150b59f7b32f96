import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ResourceType } from '../backend/index.ts';
import { type ConvergeError, OptionsError } from '../errors.ts';
import { Manager } from '../manager/index.ts';
import type { KubeObject, UnstructuredObject } from '../object/index.ts';
import { allowed, type Defaulter, type Validator } from './admission.ts';
import { WebhookBuilder } from './builder.ts';
import type { Converter } from './conversion.ts';
import { ConverterNotFoundError, WebhookBuilderError, WebhookConflictError } from './errors.ts';
import { mutatePath, validatePath, webhookName } from './registration.ts';
import { checkPath, checkWebhookName } from './registration-options.ts';
import { type WebhookHost, WebhookRegistry } from './registry.ts';

const websiteType: ResourceType = {
  group: 'examples.converge.dev',
  version: 'v1alpha1',
  kind: 'Website',
  plural: 'websites',
  namespaced: true,
};
const podType: ResourceType = { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const deploymentType: ResourceType = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
};
const gadgetType: ResourceType = {
  group: 'gadgets.example.com',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: false,
};
const validator: Validator = { validate: () => allowed() };
const defaulter: Defaulter = { default: () => undefined };
const converter = (tag: string): Converter => ({ convert: (o, desired) => ({ ...o, tag, desired }) });

/** A host recording what it was asked to serve. */
function recordingHost(): WebhookHost & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    start: async () => {},
    validating: (path, _v, o) => calls.push(`validating ${path} ${o?.sideEffects}`),
    mutating: (path, _d, o) => calls.push(`mutating ${path} ${o?.sideEffects}`),
    conversion: (path) => calls.push(`conversion ${path}`),
  };
}

const signal = new AbortController().signal;

describe('webhook paths and names', () => {
  it("are controller-runtime's paths, with an empty group segment for the core group", () => {
    expect(mutatePath(websiteType)).toBe('/mutate-examples-converge-dev-v1alpha1-website');
    expect(validatePath(websiteType)).toBe('/validate-examples-converge-dev-v1alpha1-website');
    expect(validatePath(podType)).toBe('/validate--v1-pod');
    expect(mutatePath(deploymentType)).toBe('/mutate-apps-v1-deployment');
  });

  it('are qualified names of at least three labels', () => {
    expect(webhookName('mutating', websiteType)).toBe('mwebsite-v1alpha1.examples.converge.dev');
    expect(webhookName('validating', websiteType)).toBe('vwebsite-v1alpha1.examples.converge.dev');
    expect(webhookName('validating', podType)).toBe('vpod-v1.core.converge.dev');
    expect(webhookName('mutating', deploymentType)).toBe('mdeployment-v1.apps.converge.dev');
  });
});

describe('WebhookBuilder', () => {
  it('registers a defaulter, a validator and a converter with their defaults', () => {
    const registry = new WebhookRegistry();
    new WebhookBuilder(websiteType, registry)
      .withDefaulter(defaulter)
      .withValidator(validator)
      .withConverter(converter('w'))
      .complete();
    const [m, v, c] = registry.registrations;
    expect(m).toMatchObject({
      webhook: 'mutating',
      path: '/mutate-examples-converge-dev-v1alpha1-website',
      name: 'mwebsite-v1alpha1.examples.converge.dev',
      handler: defaulter,
      options: {
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
        operations: ['CREATE', 'UPDATE'],
        matchConditions: [],
        reinvocationPolicy: 'Never',
      },
    });
    expect(v).toMatchObject({
      webhook: 'validating',
      path: '/validate-examples-converge-dev-v1alpha1-website',
    });
    expect(c).toMatchObject({
      webhook: 'conversion',
      path: '/convert',
      name: 'websites.examples.converge.dev',
    });
    expect(registry.registrations).toHaveLength(3);
  });

  it('keeps the options given, a custom path and name included', () => {
    const registry = new WebhookRegistry();
    new WebhookBuilder(websiteType, registry)
      .withValidator(validator, {
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        failurePolicy: 'Ignore',
        timeoutSeconds: 30,
        sideEffects: 'NoneOnDryRun',
        path: '/check-website',
        name: 'check.websites.example.com',
        matchConditions: [
          { name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" },
        ],
        namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
        objectSelector: { matchLabels: { managed: 'yes' } },
      })
      .complete();
    expect(registry.registrations[0]).toMatchObject({
      path: '/check-website',
      name: 'check.websites.example.com',
      options: {
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        failurePolicy: 'Ignore',
        timeoutSeconds: 30,
        sideEffects: 'NoneOnDryRun',
        objectSelector: { matchLabels: { managed: 'yes' } },
      },
    });
  });

  it('refuses complete() with nothing added, complete() twice, with* after complete or twice', () => {
    const registry = new WebhookRegistry();
    expect(() => new WebhookBuilder(websiteType, registry).complete()).toThrow(WebhookBuilderError);
    const builder = new WebhookBuilder(websiteType, registry).withValidator(validator);
    builder.complete();
    expect(() => builder.complete()).toThrow(/completed twice/);
    expect(() => builder.withDefaulter(defaulter)).toThrow(WebhookBuilderError);
    expect(() =>
      new WebhookBuilder(podType, registry).withValidator(validator).withValidator(validator),
    ).toThrow(/called twice/);
    try {
      new WebhookBuilder(websiteType, registry).complete();
    } catch (error) {
      expect((error as ConvergeError).code).toBe('CONVERGE_ERR_MANAGER_WEBHOOK_BUILDER_MISUSE');
    }
  });

  it('refuses a kind registered twice for one webhook type, and registers nothing of that builder', () => {
    const registry = new WebhookRegistry();
    new WebhookBuilder(websiteType, registry)
      .withValidator(validator)
      .withConverter(converter('a'))
      .complete();
    const again = new WebhookBuilder(websiteType, registry).withDefaulter(defaulter).withValidator(validator);
    expect(() => again.complete()).toThrow(WebhookConflictError);
    expect(registry.registrations.map((r) => r.webhook)).toEqual(['validating', 'conversion']);
    // Another version of the kind is another path; its converter is the same group and kind.
    new WebhookBuilder({ ...websiteType, version: 'v1' }, registry).withValidator(validator).complete();
    expect(() =>
      new WebhookBuilder({ ...websiteType, version: 'v2' }, registry)
        .withConverter(converter('b'))
        .complete(),
    ).toThrow(/one converter per group and kind/);
    // A defaulter for the same kind is a different webhook type: fine.
    new WebhookBuilder(websiteType, registry).withDefaulter(defaulter).complete();
    expect(registry.registrations).toHaveLength(4);
  });

  it('refuses a path or a name another webhook already uses', () => {
    const registry = new WebhookRegistry();
    new WebhookBuilder(websiteType, registry).withValidator(validator, { path: '/shared' }).complete();
    expect(() =>
      new WebhookBuilder(podType, registry).withDefaulter(defaulter, { path: '/shared' }).complete(),
    ).toThrow(
      expect.objectContaining({ code: 'CONVERGE_ERR_MANAGER_WEBHOOK_CONFLICT', conflict: '/shared' }),
    );
    expect(() =>
      new WebhookBuilder(podType, registry).withValidator(validator, { path: '/convert' }).complete(),
    ).toThrow(WebhookConflictError);
    expect(() =>
      new WebhookBuilder(podType, registry)
        .withValidator(validator, { name: 'vwebsite-v1alpha1.examples.converge.dev' })
        .complete(),
    ).toThrow(/name vwebsite-v1alpha1.examples.converge.dev is already used/);
  });

  it.each([
    [{ timeoutSeconds: 0 }, 'withValidator.options.timeoutSeconds'],
    [{ timeoutSeconds: 31 }, 'withValidator.options.timeoutSeconds'],
    [{ timeoutSeconds: 2.5 }, 'withValidator.options.timeoutSeconds'],
    [{ failurePolicy: 'fail' }, 'withValidator.options.failurePolicy'],
    [{ sideEffects: 'Some' }, 'withValidator.options.sideEffects'],
    [{ operations: [] }, 'withValidator.options.operations'],
    [{ operations: ['CREATE', 'CREATE'] }, 'withValidator.options.operations[1]'],
    [{ operations: ['PATCH'] }, 'withValidator.options.operations[0]'],
    [{ reinvocationPolicy: 'IfNeeded' }, 'withValidator.options.reinvocationPolicy'],
    [{ path: 'validate' }, 'withValidator.options.path'],
    [{ path: '/a?b' }, 'withValidator.options.path'],
    [{ name: 'website.example' }, 'withValidator.options.name'],
    [
      { matchConditions: [{ name: 'a', expression: '' }] },
      'withValidator.options.matchConditions[0].expression',
    ],
    [
      {
        matchConditions: [
          { name: 'a', expression: 'true' },
          { name: 'a', expression: 'true' },
        ],
      },
      'withValidator.options.matchConditions[1].name',
    ],
    [
      { objectSelector: { matchLabels: { 'bad key!': 'x' } } },
      'withValidator.options.objectSelector.matchLabels["bad key!"]',
    ],
    [{ namespaceSelector: 'env=prod' }, 'withValidator.options.namespaceSelector'],
    [{ timeoutSecond: 5 }, 'withValidator.options.timeoutSecond'],
  ])('refuses the option %j with an OptionsError naming %s', (options, field) => {
    const builder = new WebhookBuilder(websiteType, new WebhookRegistry());
    expect(() => builder.withValidator(validator, options as never)).toThrow(
      expect.objectContaining({ field, code: 'CONVERGE_ERR_OPTIONS_INVALID' }),
    );
  });

  it('refuses a type whose group or kind cannot make a path and a webhook name', () => {
    const registry = new WebhookRegistry();
    expect(() => new WebhookBuilder({ ...websiteType, group: 'a b' }, registry)).toThrow(
      expect.objectContaining({ field: 'type.group' }),
    );
    const long = new WebhookBuilder({ ...websiteType, kind: `K${'x'.repeat(70)}` }, registry);
    expect(() => long.withValidator(validator)).toThrow(
      expect.objectContaining({ field: 'withValidator (name from the type)' }),
    );
    // A name of its own makes it fine.
    long.withValidator(validator, { name: 'vlong.example.com' }).complete();
    expect(registry.registrations[0]?.path).toBe(
      `/validate-examples-converge-dev-v1alpha1-k${'x'.repeat(70)}`,
    );
  });

  it('refuses DELETE and CONNECT for a defaulter, and handlers without their method', () => {
    const builder = new WebhookBuilder(websiteType, new WebhookRegistry());
    expect(() => builder.withDefaulter(defaulter, { operations: ['CREATE', 'DELETE'] })).toThrow(
      OptionsError,
    );
    expect(() => builder.withDefaulter({} as never)).toThrow(/default\(object, request\)/);
    expect(() => builder.withValidator(null as never)).toThrow(OptionsError);
    expect(() => builder.withConverter({ convert: 1 } as never)).toThrow(/hubAndSpoke/);
    // Only custom resources convert through webhooks, and CRD groups hold a dot.
    for (const type of [podType, deploymentType]) {
      expect(() => new WebhookBuilder(type, new WebhookRegistry()).withConverter(converter('x'))).toThrow(
        expect.objectContaining({ field: 'withConverter' }),
      );
    }
    expect(() => new WebhookBuilder({ ...websiteType, kind: 'website' }, new WebhookRegistry())).toThrow(
      OptionsError,
    );
  });

  it('gives every option object a typed error or a registration, nothing else (fuzz)', () => {
    const anything = fc.oneof(
      fc.anything(),
      fc.constantFrom(
        'Fail',
        'Ignore',
        'None',
        'NoneOnDryRun',
        'Never',
        'IfNeeded',
        'CREATE',
        'DELETE',
        '/p',
      ),
      fc.array(fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'PATCH', 3)),
      fc.integer({ min: -5, max: 40 }),
      fc.array(fc.record({ name: fc.string(), expression: fc.string() }, { requiredKeys: [] })),
      fc.record({ matchLabels: fc.dictionary(fc.string(), fc.anything()) }, { requiredKeys: [] }),
    );
    const optionsArbitrary = fc.oneof(
      fc.anything(),
      fc.record(
        {
          sideEffects: anything,
          failurePolicy: anything,
          timeoutSeconds: anything,
          path: anything,
          operations: anything,
          matchConditions: anything,
          namespaceSelector: anything,
          objectSelector: anything,
          reinvocationPolicy: anything,
          name: anything,
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(optionsArbitrary, fc.boolean(), (options, mutating) => {
        const registry = new WebhookRegistry();
        const builder = new WebhookBuilder(websiteType, registry);
        try {
          if (mutating) builder.withDefaulter(defaulter, options as never);
          else builder.withValidator(validator, options as never);
          builder.complete();
        } catch (error) {
          expect(error).toBeInstanceOf(OptionsError);
          expect(registry.registrations).toHaveLength(0);
          return;
        }
        const [registration] = registry.registrations;
        expect(registration?.webhook).toBe(mutating ? 'mutating' : 'validating');
        if (registration?.webhook === 'conversion') return;
        expect(registration?.options.timeoutSeconds).toBeGreaterThanOrEqual(1);
        expect(registration?.options.timeoutSeconds).toBeLessThanOrEqual(30);
        expect(registration?.options.operations.length).toBeGreaterThan(0);
        expect(registration?.path.startsWith('/')).toBe(true);
        expect(registration?.name.split('.').length).toBeGreaterThanOrEqual(3);
      }),
      { numRuns: 500 },
    );
  });
});

describe('WebhookBuilder with arbitrary types and handlers (fuzz)', () => {
  it('gives an OptionsError or a registration, nothing else', () => {
    const typeArbitrary = fc.oneof(
      fc.anything(),
      fc.record(
        {
          group: fc.oneof(
            fc.constantFrom('', 'example.com', 'apps', 'a b', 'Example.com'),
            fc.string(),
            fc.anything(),
          ),
          version: fc.oneof(fc.constantFrom('v1', 'v1beta1', 'V1'), fc.anything()),
          kind: fc.oneof(fc.constantFrom('Website', 'website', 'Pod', `K${'x'.repeat(70)}`), fc.anything()),
          plural: fc.oneof(fc.constantFrom('websites', 'Pods'), fc.anything()),
          namespaced: fc.oneof(fc.boolean(), fc.anything()),
        },
        { requiredKeys: [] },
      ),
    );
    const handler = fc.oneof(
      fc.anything(),
      fc.constant(validator),
      fc.constant(defaulter),
      fc.constant(converter('c')),
    );
    fc.assert(
      fc.property(typeArbitrary, handler, fc.constantFrom('v', 'd', 'c'), (type, h, which) => {
        const registry = new WebhookRegistry();
        try {
          const builder = new WebhookBuilder(type as ResourceType, registry);
          if (which === 'v') builder.withValidator(h as Validator);
          else if (which === 'd') builder.withDefaulter(h as Defaulter);
          else builder.withConverter(h as Converter);
          builder.complete();
        } catch (error) {
          expect(error).toBeInstanceOf(OptionsError);
          expect(registry.registrations).toHaveLength(0);
          return;
        }
        expect(registry.registrations).toHaveLength(1);
        const [registration] = registry.registrations;
        if (registration?.webhook !== 'conversion') {
          expect(() => checkPath('path', registration?.path)).not.toThrow();
          expect(() => checkWebhookName('name', registration?.name)).not.toThrow();
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('WebhookRegistry', () => {
  it('serves what was registered before and after serveWith, conversion once at /convert', () => {
    const registry = new WebhookRegistry();
    new WebhookBuilder(websiteType, registry)
      .withValidator(validator)
      .withConverter(converter('w'))
      .complete();
    const host = recordingHost();
    registry.serveWith(host);
    new WebhookBuilder(podType, registry)
      .withDefaulter(defaulter, { sideEffects: 'NoneOnDryRun' })
      .complete();
    new WebhookBuilder(gadgetType, registry).withConverter(converter('g')).complete();
    new WebhookBuilder(deploymentType, registry).withValidator(validator).complete();
    expect(host.calls).toEqual([
      'validating /validate-examples-converge-dev-v1alpha1-website None',
      'conversion /convert',
      'mutating /mutate--v1-pod NoneOnDryRun',
      'validating /validate-apps-v1-deployment None',
    ]);
  });

  it('dispatches conversion by group and kind, and fails typed for an unknown kind', async () => {
    const registry = new WebhookRegistry();
    new WebhookBuilder(websiteType, registry).withConverter(converter('website')).complete();
    new WebhookBuilder(gadgetType, registry).withConverter(converter('gadget')).complete();
    const site = { apiVersion: 'examples.converge.dev/v1', kind: 'Website', metadata: { name: 'a' } };
    expect(
      registry.converter.convert(site as UnstructuredObject, 'examples.converge.dev/v2', signal),
    ).toMatchObject({
      tag: 'website',
      desired: 'examples.converge.dev/v2',
    });
    const gadget = { apiVersion: 'gadgets.example.com/v1', kind: 'Gadget' } as UnstructuredObject;
    expect(registry.converter.convert(gadget, 'gadgets.example.com/v2', signal)).toMatchObject({
      tag: 'gadget',
    });
    const pod = { apiVersion: 'v1', kind: 'Pod' } as UnstructuredObject;
    expect(() => registry.converter.convert(pod, 'v2', signal)).toThrow(/kind Pod of group ""/);
    const other = { apiVersion: 'other.example.com/v1', kind: 'Website' } as UnstructuredObject;
    expect(() => registry.converter.convert(other, 'other.example.com/v2', signal)).toThrow(
      ConverterNotFoundError,
    );
    expect(() => registry.converter.convert(other, 'x', signal)).toThrow(
      /no converter is registered for kind Website of group "other.example.com" \(registered: examples.converge.dev\/Website, gadgets.example.com\/Gadget\)/,
    );
    expect(() => registry.converter.convert(null as never, 'x', signal)).toThrow(ConverterNotFoundError);
  });

  it('tells listeners about each batch', () => {
    const registry = new WebhookRegistry();
    const seen: string[][] = [];
    const off = registry.onRegistered((batch) => seen.push(batch.map((r) => r.name)));
    new WebhookBuilder(websiteType, registry).withValidator(validator).withDefaulter(defaulter).complete();
    off();
    new WebhookBuilder(podType, registry).withValidator(validator).complete();
    expect(seen).toEqual([
      ['mwebsite-v1alpha1.examples.converge.dev', 'vwebsite-v1alpha1.examples.converge.dev'],
    ]);
  });
});

describe('Manager webhooks', () => {
  it('lists registrations, serves them with its webhook server, and runs it without leadership', async () => {
    const host = recordingHost();
    const started: string[] = [];
    host.start = async (s) => {
      started.push('webhook server');
      await new Promise((resolve) => s.addEventListener('abort', resolve, { once: true }));
    };
    const election = { acquire: () => new Promise<AbortSignal>(() => {}) }; // never leads
    const manager = new Manager({ webhookServer: host, leaderElection: election });
    manager.webhook<KubeObject>(websiteType).withValidator(validator).complete();
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['webhook server']);
    expect(manager.leading).toBe(false);
    manager.webhook(podType).withDefaulter(defaulter).complete(); // after start: served too
    expect(host.calls).toEqual([
      'validating /validate-examples-converge-dev-v1alpha1-website None',
      'mutating /mutate--v1-pod None',
    ]);
    expect(manager.webhooks.map((r) => r.path)).toEqual([
      '/validate-examples-converge-dev-v1alpha1-website',
      '/mutate--v1-pod',
    ]);
    stop.abort();
    await running;
  });

  it('lists registrations without a webhook server, and refuses a server that is not a WebhookHost', () => {
    const manager = new Manager();
    manager.webhook(websiteType).withValidator(validator).complete();
    expect(manager.webhooks).toHaveLength(1);
    expect(() => new Manager({ webhookServer: { start: async () => {} } as never })).toThrow(OptionsError);
  });
});
