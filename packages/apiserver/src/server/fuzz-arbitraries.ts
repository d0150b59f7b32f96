import fc from 'fast-check';

/*
 * Arbitraries of the fuzz test: requests against the HTTP surface — mostly well-formed ones on a
 * few objects (creates, updates, patches of every type, finalizers, deletes, subresources), the
 * same with one part replaced by garbage, and wholly random ones.
 */

const namespaces = fc.constantFrom('default', 'kube-system', 'fuzz', 'missing', '', 'UPPER', '%2e%2e');
const names = fc.oneof(fc.constantFrom('a', 'b', 'c-1', 'x.y', ''), fc.string({ maxLength: 12 }));
const resources = fc.constantFrom(
  ['api/v1', 'configmaps'],
  ['api/v1', 'secrets'],
  ['api/v1', 'pods'],
  ['api/v1', 'events'],
  ['api/v1', 'services'],
  ['apis/apps/v1', 'deployments'],
  ['apis/coordination.k8s.io/v1', 'leases'],
  ['apis/events.k8s.io/v1', 'events'],
  ['apis/example.com/v1', 'widgets'],
  ['apis/batch/v1', 'jobs'],
  ['apis/nope/v1', 'things'],
);
const paths = fc.oneof(
  fc
    .tuple(resources, namespaces, names, fc.constantFrom('', '/status', '/scale', '/bogus'))
    .map(
      ([[prefix, plural], ns, name, sub]) =>
        `/${prefix}${ns === '' ? '' : `/namespaces/${encodeURIComponent(ns)}`}/${plural}${name === '' ? '' : `/${encodeURIComponent(name)}${sub}`}`,
    ),
  fc.constantFrom(
    '/api/v1/namespaces',
    '/api/v1/namespaces/fuzz',
    '/api/v1/namespaces/fuzz/status',
    '/apis',
    '/api',
    '/openapi/v3',
    '/version',
  ),
  fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)),
);
const queries = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        'limit',
        'continue',
        'labelSelector',
        'fieldSelector',
        'resourceVersion',
        'resourceVersionMatch',
        'dryRun',
        'fieldManager',
        'fieldValidation',
        'force',
        'propagationPolicy',
        'gracePeriodSeconds',
        'pretty',
        'timeoutSeconds',
      ),
      fc.oneof(
        fc.constantFrom(
          '1',
          '0',
          '-1',
          'All',
          'Strict',
          'Exact',
          'NotOlderThan',
          'true',
          'a=b',
          'metadata.name=a',
          'x in (',
          'Orphan',
        ),
        fc.string({ maxLength: 8 }),
      ),
    ),
    { maxLength: 3 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${new URLSearchParams(pairs).toString()}`));
const objects = fc.record(
  {
    apiVersion: fc.constantFrom('v1', 'apps/v1', 'example.com/v1', 'bogus'),
    kind: fc.constantFrom('ConfigMap', 'Secret', 'Widget', 'Pod', 'Deployment', 'Lease', 'Nope'),
    metadata: fc.record(
      {
        name: names,
        namespace: namespaces,
        labels: fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 2 }),
        finalizers: fc.array(fc.constantFrom('example.com/x', 'bad finalizer', 'foregroundDeletion'), {
          maxLength: 2,
        }),
        resourceVersion: fc.constantFrom('1', '999999', 'abc'),
        generateName: fc.constantFrom('gen-', ''),
      },
      { requiredKeys: [] },
    ),
    data: fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    spec: fc.jsonValue({ maxDepth: 3 }),
    status: fc.jsonValue({ maxDepth: 2 }),
    stringData: fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
  },
  { requiredKeys: [] },
);
const bodies = fc.oneof(
  objects.map((o) => JSON.stringify(o)),
  fc
    .array(
      fc.record(
        {
          op: fc.constantFrom('add', 'remove', 'replace', 'test', 'move', 'copy', 'bad'),
          path: fc.constantFrom(
            '/data/a',
            '/metadata/labels/x',
            '/metadata/name',
            '',
            '/spec/replicas',
            '/x/-',
          ),
          value: fc.jsonValue({ maxDepth: 1 }),
          from: fc.constantFrom('/data', '/metadata'),
        },
        { requiredKeys: ['op', 'path'] },
      ),
      { maxLength: 3 },
    )
    .map((ops) => JSON.stringify(ops)),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n',
    '{"metadata":',
    'a: &x [*x]',
    '\u0000\u0001',
    '{"kind":"DeleteOptions","propagationPolicy":"Foreground"}',
  ),
);
const contentTypes = fc.constantFrom(
  'application/json',
  'application/yaml',
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
  'application/vnd.kubernetes.protobuf',
  'text/plain',
  '',
);
interface Kind {
  readonly prefix: string;
  readonly plural: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly spec?: unknown;
}

const template = { metadata: { labels: { app: 'f' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
const KINDS: readonly Kind[] = [
  { prefix: 'api/v1', plural: 'configmaps', apiVersion: 'v1', kind: 'ConfigMap', namespaced: true },
  { prefix: 'api/v1', plural: 'secrets', apiVersion: 'v1', kind: 'Secret', namespaced: true },
  { prefix: 'api/v1', plural: 'pods', apiVersion: 'v1', kind: 'Pod', namespaced: true, spec: template.spec },
  { prefix: 'api/v1', plural: 'namespaces', apiVersion: 'v1', kind: 'Namespace', namespaced: false },
  {
    prefix: 'apis/apps/v1',
    plural: 'deployments',
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespaced: true,
    spec: { selector: { matchLabels: { app: 'f' } }, template },
  },
  {
    prefix: 'apis/coordination.k8s.io/v1',
    plural: 'leases',
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    namespaced: true,
    spec: { holderIdentity: 'me' },
  },
  {
    prefix: 'apis/example.com/v1',
    plural: 'widgets',
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    namespaced: true,
    spec: { replicas: 1 },
  },
];
const OPS = [
  'create',
  'get',
  'list',
  'update',
  'merge',
  'json',
  'strategic',
  'apply',
  'delete',
  'deletecollection',
  'status',
  'scale',
] as const;

/** Mostly well-formed requests on a few objects: creates, updates, patches, finalizers, deletes. */
const coherent = fc
  .record({
    k: fc.constantFrom(...KINDS),
    op: fc.constantFrom(...OPS),
    name: fc.constantFrom('a', 'b', 'fuzz-ns'),
    ns: fc.constantFrom('default', 'fuzz'),
    labels: fc.dictionary(fc.constantFrom('app', 'tier', 'x'), fc.constantFrom('f', 'g', ''), { maxKeys: 2 }),
    finalizers: fc.array(fc.constantFrom('example.com/hold', 'foregroundDeletion'), { maxLength: 1 }),
    data: fc.dictionary(fc.constantFrom('a', 'b'), fc.constantFrom('1', '2'), { maxKeys: 2 }),
    dryRun: fc.boolean(),
    policy: fc.constantFrom('', 'Foreground', 'Orphan', 'Background'),
  })
  .map(({ k, op, name, ns, labels, finalizers, data, dryRun, policy }) => {
    const base = `/${k.prefix}${k.namespaced ? `/namespaces/${ns}` : ''}/${k.plural}`;
    const item = `${base}/${name}`;
    const object = {
      apiVersion: k.apiVersion,
      kind: k.kind,
      metadata: { name, labels, finalizers, ...(k.namespaced ? { namespace: ns } : {}) },
      ...(k.kind === 'ConfigMap' || k.kind === 'Secret'
        ? { data: k.kind === 'Secret' ? { a: 'MQ==' } : data }
        : {}),
      ...(k.spec === undefined ? {} : { spec: k.spec }),
    };
    const dry = dryRun ? '?dryRun=All' : '';
    const request = (
      method: string,
      path: string,
      body: unknown,
      contentType = 'application/json',
    ): RawRequest => ({
      method,
      path,
      query: '',
      body: body === undefined ? '' : JSON.stringify(body),
      contentType,
      accept: '',
    });
    const build: Record<(typeof OPS)[number], () => RawRequest> = {
      create: () => request('POST', `${base}${dry}`, object),
      get: () => request('GET', item, undefined),
      list: () => request('GET', `${base}?labelSelector=app%3Df&limit=1`, undefined),
      update: () => request('PUT', `${item}${dry}`, object),
      merge: () =>
        request(
          'PATCH',
          `${item}${dry}`,
          { metadata: { labels, finalizers } },
          'application/merge-patch+json',
        ),
      json: () =>
        request(
          'PATCH',
          item,
          [{ op: 'replace', path: '/metadata/finalizers', value: finalizers }],
          'application/json-patch+json',
        ),
      strategic: () =>
        request('PATCH', item, { metadata: { labels } }, 'application/strategic-merge-patch+json'),
      apply: () =>
        request('PATCH', `${item}?fieldManager=fuzz&force=true`, object, 'application/apply-patch+yaml'),
      delete: () =>
        request('DELETE', `${item}${dry}`, policy === '' ? undefined : { propagationPolicy: policy }),
      deletecollection: () => request('DELETE', `${base}?labelSelector=tier%3Dg`, undefined),
      status: () =>
        request(
          'PATCH',
          `${item}/status`,
          { status: { replicas: 1, phase: 'Running' } },
          'application/merge-patch+json',
        ),
      scale: () =>
        request('PATCH', `${item}/scale`, { spec: { replicas: 2 } }, 'application/merge-patch+json'),
    };
    return build[op]();
  });

/** One fuzzed HTTP request. */
export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly body: string;
  readonly contentType: string;
  readonly accept: string;
}

const random = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
  path: paths,
  query: queries,
  body: bodies,
  contentType: contentTypes,
  accept: fc.constantFrom(
    '',
    'application/json',
    'application/yaml',
    'text/html',
    'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    'application/vnd.kubernetes.protobuf',
  ),
});

/** A mutated request: a coherent one with one part replaced by a random one. */
const mutated = fc
  .tuple(coherent, random, fc.constantFrom('method', 'path', 'query', 'body', 'contentType', 'accept'))
  .map(([good, bad, part]) => ({ ...good, [part]: bad[part as keyof RawRequest] }) as RawRequest);

/** Fuzzed requests: coherent (half), mutated and fully random ones. */
export const requests: fc.Arbitrary<RawRequest> = fc.oneof(
  { arbitrary: coherent, weight: 5 },
  { arbitrary: mutated, weight: 3 },
  { arbitrary: random, weight: 2 },
);
