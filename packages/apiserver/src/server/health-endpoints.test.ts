import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ token: 'admin-token' });
});
afterAll(async () => {
  await server.close();
});

describe('/livez and /readyz as kube-apiserver’s healthz package answers them', () => {
  it('list their checks with ?verbose, headers text/plain and nosniff', async () => {
    const live = await server.request('/livez?verbose', { anonymous: true });
    expect([live.status, live.text]).toEqual([200, '[+]ping ok\n[+]store-writable ok\nlivez check passed\n']);
    expect(live.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(live.headers['x-content-type-options']).toBe('nosniff');
    const ready = await server.request('/readyz?verbose=false');
    expect(ready.text).toBe('[+]ping ok\n[+]shutdown ok\n[+]store ok\nreadyz check passed\n'); // presence, not value
    expect((await server.request('/readyz')).text).toBe('ok');
  });

  it('run one check at /livez/<check> and /readyz/<check>; an unknown one is a 404', async () => {
    expect((await server.request('/livez/ping', { anonymous: true })).text).toBe('ok');
    expect((await server.request('/readyz/store')).text).toBe('ok');
    const missing = await server.request('/livez/etcd', { anonymous: true });
    expect([missing.status, missing.text]).toEqual([404, '404 page not found\n']);
  });

  it('exclude= skips a check (listed as excluded) and warns about names that match nothing', async () => {
    const res = await server.request('/readyz?verbose&exclude=store&exclude=etcd', { anonymous: true });
    expect(res.text).toBe(
      '[+]ping ok\n[+]shutdown ok\n[+]store excluded: ok\nwarn: some health checks cannot be excluded: no matches for "etcd"\nreadyz check passed\n',
    );
    expect((await server.request('/livez?exclude=nothing', { anonymous: true })).text).toBe('ok');
  });

  it('a ServiceAccount token reads the health endpoints, but not one check (upstream’s system:discovery)', async () => {
    await server.request('/api/v1/namespaces/default/serviceaccounts', {
      method: 'POST',
      body: { metadata: { name: 'probe' } },
    });
    const issued = await server.request('/api/v1/namespaces/default/serviceaccounts/probe/token', {
      method: 'POST',
      body: {},
    });
    const token = (issued.json as { status: { token: string } }).status.token;
    expect((await server.request('/livez', { token })).text).toBe('ok');
    const one = await server.request('/livez/ping', { token });
    expect([one.status, (one.json as { message: string }).message]).toEqual([
      403,
      'forbidden: User "system:serviceaccount:default:probe" cannot get path "/livez/ping"',
    ]);
  });
});
