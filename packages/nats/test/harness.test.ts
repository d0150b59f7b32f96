import { afterAll, describe, expect, it } from 'vitest';
import { type PrivateNats, sharedNatsUrl, startPrivateNats } from '../src/test-harness.ts';

describe('NATS test harness', () => {
  let server: PrivateNats | undefined;
  afterAll(async () => {
    await server?.dispose();
  });

  it('finds a shared server and starts, restarts and stops a private one', async () => {
    expect(await sharedNatsUrl()).toMatch(/^nats:\/\//);
    server = await startPrivateNats();
    expect(server.url).toBe(`nats://127.0.0.1:${server.port}`);
    await server.restart();
    await server.stop();
  });
});
