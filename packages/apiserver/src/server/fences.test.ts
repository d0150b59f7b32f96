import { FENCE_HEADER, formatFenceHeader } from '@converge/runtime';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestResponse, type TestServer } from './test-support.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ secure: true });
});
afterAll(async () => {
  await t.close();
});

const CMS = '/api/v1/namespaces/default/configmaps';
const fenced = (epoch: number, holder: string, name = 'default/op') => ({
  [FENCE_HEADER]: formatFenceHeader({ name, holder, epoch }),
});
const announce = (body: unknown): Promise<TestResponse> =>
  t.request('/converge/fences', { method: 'POST', body });
const status = (r: TestResponse) => r.json as { code: number; reason: string; message: string };

describe('fenced writes on the embedded API server', () => {
  it('refuses every kind of write carrying an epoch below the announced one, and accepts the current holder', async () => {
    expect((await t.request(CMS, { method: 'POST', body: { metadata: { name: 'f1' } } })).status).toBe(201);
    const up = await announce({ name: 'default/op', holder: 'a', epoch: 1 });
    expect(up.status, up.text).toBe(200);
    expect(up.json).toEqual({
      kind: 'Fence',
      apiVersion: 'converge.dev/v1',
      name: 'default/op',
      holder: 'a',
      epoch: 1,
    });

    const ok = await t.request(`${CMS}/f1`, {
      method: 'PATCH',
      body: { data: { by: 'a' } },
      headers: { ...fenced(1, 'a'), 'content-type': 'application/merge-patch+json' },
    });
    expect(ok.status, ok.text).toBe(200);

    expect((await announce({ name: 'default/op', holder: 'b', epoch: 2 })).status).toBe(200);
    const stale = [
      await t.request(CMS, { method: 'POST', body: { metadata: { name: 'f2' } }, headers: fenced(1, 'a') }),
      await t.request(`${CMS}/f1`, {
        method: 'PUT',
        body: { metadata: { name: 'f1' }, data: { by: 'a' } },
        headers: fenced(1, 'a'),
      }),
      await t.request(`${CMS}/f1`, {
        method: 'PATCH',
        body: { data: { by: 'a' } },
        headers: { ...fenced(1, 'a'), 'content-type': 'application/merge-patch+json' },
      }),
      await t.request(`${CMS}/f1`, { method: 'DELETE', headers: fenced(1, 'a') }),
      // the same epoch from another holder is as stale
      await t.request(`${CMS}/f1`, { method: 'DELETE', headers: fenced(2, 'a') }),
    ];
    for (const r of stale) {
      expect(r.status, r.text).toBe(403);
      expect(status(r).reason).toBe('Forbidden');
      expect(status(r).message).toContain('stale fencing epoch');
    }
    const f1 = await t.request(`${CMS}/f1`);
    expect((f1.json as { data: unknown }).data).toEqual({ by: 'a' });
    expect((await t.request(`${CMS}/f2`)).status).toBe(404);
    // the new holder writes; unfenced writes and other names are not affected
    expect((await t.request(`${CMS}/f1`, { method: 'DELETE', headers: fenced(2, 'b') })).status).toBe(200);
    expect((await t.request(CMS, { method: 'POST', body: { metadata: { name: 'f3' } } })).status).toBe(201);
    expect(
      (
        await t.request(CMS, {
          method: 'POST',
          body: { metadata: { name: 'f4' } },
          headers: fenced(0, 'z', 'other'),
        })
      ).status,
    ).toBe(201);
  });

  it('a stale announcement is refused and names the current mark; GET lists the marks', async () => {
    expect((await announce({ name: 'ns/x', holder: 'b', epoch: 5 })).status).toBe(200);
    const r = await announce({ name: 'ns/x', holder: 'a', epoch: 4 });
    expect(r.status).toBe(403);
    expect(status(r).message).toBe(
      'stale fencing epoch: fence "ns/x" is at epoch 5 (holder "b"); the write carried epoch 4 from "a"',
    );
    expect((await announce({ name: 'ns/x', holder: 'b', epoch: 5 })).status).toBe(200);
    const list = (await t.request('/converge/fences')).json as { items: { name: string; epoch: number }[] };
    expect(list.items.find((i) => i.name === 'ns/x')?.epoch).toBe(5);
  });

  it('a dry run checks the fence but does not raise the mark', async () => {
    await announce({ name: 'dry', holder: 'a', epoch: 1 });
    const dry = await t.request(`${CMS}?dryRun=All`, {
      method: 'POST',
      body: { metadata: { name: 'd1' } },
      headers: fenced(9, 'z', 'dry'),
    });
    expect(dry.status, dry.text).toBe(201);
    expect(
      (
        await t.request(CMS, {
          method: 'POST',
          body: { metadata: { name: 'd2' } },
          headers: fenced(1, 'a', 'dry'),
        })
      ).status,
    ).toBe(201);
    const staleDry = await t.request(`${CMS}?dryRun=All`, {
      method: 'POST',
      body: { metadata: { name: 'd3' } },
      headers: fenced(0, 'a', 'dry'),
    });
    expect(staleDry.status).toBe(403);
  });

  it('malformed fence headers and bodies are 400s, never a write', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), async (header) => {
        const r = await t.request(CMS, {
          method: 'POST',
          body: { metadata: { generateName: 'm-' } },
          headers: { [FENCE_HEADER]: header },
        });
        expect([201, 400], r.text).toContain(r.status);
        if (r.status === 400) expect(status(r).reason).toBe('BadRequest');
      }),
      { numRuns: 40 },
    );
    for (const body of [
      { name: '', holder: 'a', epoch: 1 },
      { name: 'n', holder: 'a', epoch: -1 },
      { name: 'n', holder: 'a', epoch: 1.5 },
      { name: 'n', epoch: 1 },
      { name: 'n', holder: 'a', epoch: 1, extra: true },
    ]) {
      const r = await announce(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    for (const header of [
      'epoch=1; holder=a',
      'epoch=x; holder=a; name=n',
      'epoch=1; holder=%zz; name=n',
      'epoch=1;holder=a;name=n;epoch=2',
    ]) {
      const r = await t.request(CMS, {
        method: 'POST',
        body: { metadata: { name: 'never' } },
        headers: { [FENCE_HEADER]: header },
      });
      expect(r.status, header).toBe(400);
    }
    expect((await t.request(`${CMS}/never`)).status).toBe(404);
    expect((await t.request('/converge/fences', { method: 'PUT', body: {} })).status).toBe(405);
  });

  it('a service account without RBAC for /converge/fences cannot announce', async () => {
    const r = await t.request('/converge/fences', {
      method: 'POST',
      body: { name: 'n', holder: 'a', epoch: 1 },
      anonymous: true,
    });
    expect([401, 403]).toContain(r.status);
  });
});
