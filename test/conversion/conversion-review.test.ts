/**
 * The ConversionReview exchange as kube-apiserver 1.32 makes it, against a bare HTTPS webhook that
 * records every review and answers what each test sets: one review per list, the first supported
 * review version, upstream's checks of the answer (uid, count, group/version, kind, identity,
 * metadata), and a webhook that is down.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../packages/apiserver/src/server/test-support.ts';
import { type ReviewRequest, startBareConversion, widgetCrd, widgetV1 } from './support.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CRD = `${CRDS}/widgets.example.com`;
const V1 = '/apis/example.com/v1/namespaces/default/widgets';
const V2 = '/apis/example.com/v2/namespaces/default/widgets';

let api: TestServer;
let hook: Awaited<ReturnType<typeof startBareConversion>>;

beforeAll(async () => {
  api = await startTestServer();
  hook = await startBareConversion();
  const created = await api.request(CRDS, {
    method: 'POST',
    body: widgetCrd({ url: `${hook.url}/convert`, caBundle: hook.caBundle }),
  });
  expect(created.status).toBe(201);
  for (const [name, size] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ] as const) {
    expect((await api.request(V1, { method: 'POST', body: widgetV1(name, size, 'red') })).status).toBe(201);
  }
});

afterAll(async () => {
  await hook.close();
  await api.close();
});

beforeEach(() => {
  hook.reviews.length = 0;
  hook.setAnswer(hook.answer);
});

/** The converted answer for `review`, then changed by `edit`. */
async function answered(
  review: ReviewRequest,
  edit: (response: {
    uid: string;
    convertedObjects: Record<string, unknown>[];
    result: Record<string, unknown>;
  }) => void,
): Promise<unknown> {
  const body = (await hook.answer(review)) as { response: Parameters<typeof edit>[0] };
  edit(body.response);
  return body;
}

async function message(path: string): Promise<string> {
  const answer = await api.request(path);
  expect(answer.status).toBe(500);
  return (answer.json as { message: string }).message;
}

describe('requests', () => {
  it('a list is converted in one review; the storage version needs none', async () => {
    const list = (await api.request(V2)).json as { items: { spec: { replicas: number } }[] };
    expect(list.items.map((i) => i.spec.replicas)).toEqual([1, 2, 3]);
    expect(hook.reviews).toHaveLength(1);
    const [review] = hook.reviews;
    expect(review?.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(review?.request.desiredAPIVersion).toBe('example.com/v2');
    expect(review?.request.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(review?.request.objects.map((o) => o.apiVersion)).toEqual(Array(3).fill('example.com/v1'));
    await api.request(V1);
    await api.request(`${V1}/a`);
    expect(hook.reviews).toHaveLength(1);
  });

  it('the first review version this server speaks is used (v1beta1 before v1 when listed first)', async () => {
    const patch = (versions: string[]) =>
      api.request(CRD, {
        method: 'PATCH',
        headers: { 'content-type': 'application/merge-patch+json' },
        body: { spec: { conversion: { webhook: { conversionReviewVersions: versions } } } },
      });
    expect((await patch(['v9', 'v1beta1', 'v1'])).status).toBe(200);
    try {
      expect((await api.request(`${V2}/a`)).status).toBe(200);
      expect(hook.reviews[0]?.apiVersion).toBe('apiextensions.k8s.io/v1beta1');
    } finally {
      expect((await patch(['v1'])).status).toBe(200);
    }
  });
});

describe('answers checked as upstream', () => {
  const cases: [string, (review: ReviewRequest) => Promise<unknown> | unknown, string, RegExp | string][] = [
    [
      'a uid that is not the request uid',
      (r) => answered(r, (res) => Object.assign(res, { uid: 'other' })),
      `${V2}/a`,
      /^conversion webhook for example\.com\/v1, Kind=Widget failed: expected response\.uid="[0-9a-f-]{36}", got "other"$/,
    ],
    [
      'a review of another kind',
      (r) => ({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: r.request.uid },
      }),
      `${V2}/a`,
      'conversion webhook for example.com/v1, Kind=Widget failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got admission.k8s.io/v1, Kind=AdmissionReview',
    ],
    [
      'a Failure with its message',
      (r) =>
        answered(r, (res) => Object.assign(res, { result: { status: 'Failure', message: 'v2 is retired' } })),
      `${V2}/a`,
      'conversion webhook for example.com/v1, Kind=Widget failed: v2 is retired',
    ],
    [
      'a Failure without message',
      (r) => answered(r, (res) => Object.assign(res, { result: { status: 'Failure' } })),
      `${V2}/a`,
      "conversion webhook for example.com/v1, Kind=Widget failed: response.result.status was 'Failure', not 'Success'",
    ],
    [
      'fewer objects than sent',
      (r) => answered(r, (res) => res.convertedObjects.pop()),
      V2,
      'conversion webhook for example.com/v2, Kind=WidgetList returned 2 objects, expected 3',
    ],
    [
      'an object left in the old version',
      (r) =>
        answered(r, (res) => Object.assign(res.convertedObjects[0] ?? {}, { apiVersion: 'example.com/v1' })),
      `${V2}/a`,
      'conversion webhook for example.com/v1, Kind=Widget returned invalid object at index 0: invalid groupVersion (expected example.com/v2, received example.com/v1)',
    ],
    [
      'another kind',
      (r) => answered(r, (res) => Object.assign(res.convertedObjects[0] ?? {}, { kind: 'Gadget' })),
      `${V2}/a`,
      'conversion webhook for example.com/v1, Kind=Widget returned invalid object at index 0: invalid kind (expected Widget, received Gadget)',
    ],
    [
      'a renamed object',
      (r) =>
        answered(r, (res) => {
          const meta = res.convertedObjects[0]?.metadata as Record<string, unknown>;
          meta.name = 'renamed';
        }),
      `${V2}/a`,
      'conversion webhook for example.com/v1, Kind=Widget returned invalid object: must have the same name: a != renamed',
    ],
    [
      'a changed uid in a list',
      (r) =>
        answered(r, (res) => {
          const meta = res.convertedObjects[1]?.metadata as Record<string, unknown>;
          meta.uid = 'another-uid';
        }),
      V2,
      /^conversion webhook for example\.com\/v2, Kind=WidgetList returned invalid converted object at index 1: must have the same UID: [0-9a-f-]{36} != another-uid$/,
    ],
    [
      'a label that is not a string',
      (r) =>
        answered(r, (res) => {
          const meta = res.convertedObjects[0]?.metadata as Record<string, unknown>;
          meta.labels = { tier: 3 };
        }),
      `${V2}/a`,
      'conversion webhook for example.com/v1, Kind=Widget returned invalid metadata: metadata.labels[tier] must be a string, but is int64 in converted object',
    ],
    [
      // as upstream, the identity check comes first: a string has no name
      'metadata that is not an object',
      (r) => answered(r, (res) => Object.assign(res.convertedObjects[0] ?? {}, { metadata: 'x' })),
      `${V2}/a`,
      'conversion webhook for example.com/v1, Kind=Widget returned invalid object: must have the same name: a != ',
    ],
  ];
  for (const [what, answer, path, expected] of cases) {
    it(`${what} is a 500`, async () => {
      hook.setAnswer(answer);
      const text = await message(path);
      if (typeof expected === 'string') expect(text).toBe(expected);
      else expect(text).toMatch(expected);
    });
  }

  it('other metadata the webhook changed is restored; labels and annotations are kept', async () => {
    hook.setAnswer((r) =>
      answered(r, (res) => {
        const meta = res.convertedObjects[0]?.metadata as Record<string, unknown>;
        Object.assign(meta, {
          generation: 42,
          resourceVersion: '999999',
          finalizers: ['x/y'],
          labels: { converted: 'yes' },
          annotations: { note: 'v2' },
        });
      }),
    );
    const got = (await api.request(`${V2}/a`)).json as { metadata: Record<string, unknown> };
    const original = ((await api.request(`${V1}/a`)).json as { metadata: Record<string, unknown> }).metadata;
    expect(got.metadata).toEqual({ ...original, labels: { converted: 'yes' }, annotations: { note: 'v2' } });
  });
});

describe('converted objects', () => {
  it('are pruned to the schema of the version they were converted to', async () => {
    hook.setAnswer((r) =>
      answered(r, (res) => {
        const object = res.convertedObjects[0] as Record<string, unknown> & { spec: Record<string, unknown> };
        object.junk = true;
        object.spec.extra = 'dropped';
      }),
    );
    const got = (await api.request(`${V2}/a`)).json as Record<string, unknown>;
    expect(got).not.toHaveProperty('junk');
    expect(got.spec).toEqual({ replicas: 1, paint: { color: 'red' } });
  });
});

describe('the webhook down', () => {
  it('reads and writes of the other version fail; the storage version still works', async () => {
    await hook.close();
    const read = await message(`${V2}/a`);
    expect(read).toMatch(
      /^conversion webhook for example\.com\/v1, Kind=Widget failed: Post "https:\/\/127\.0\.0\.1:\d+\/convert\?timeout=30s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/,
    );
    expect(await message(V2)).toMatch(
      /^conversion webhook for example\.com\/v2, Kind=WidgetList failed: Post /,
    );
    const write = await api.request(V2, {
      method: 'POST',
      body: { apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'd' }, spec: { replicas: 1 } },
    });
    expect(write.status).toBe(500);
    expect((await api.request(`${V1}/a`)).status).toBe(200);
    expect(((await api.request(V1)).json as { items: unknown[] }).items).toHaveLength(3);
    expect((await api.request(V1, { method: 'POST', body: widgetV1('e', 5, 'red') })).status).toBe(201);
  });
});
