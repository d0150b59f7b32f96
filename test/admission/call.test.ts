import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { generateWebhookCertificates } from '@converge/kube';
import { VirtualClock } from '@converge/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { postReview } from '../../packages/apiserver/src/admission/call.ts';

interface Silent {
  readonly url: string;
  readonly caBundle: string;
  /** Sockets the server has accepted and not yet seen closed. */
  readonly open: Set<Socket>;
  readonly server: Server;
}

/** An HTTPS server that reads requests and never answers them. */
async function silentServer(): Promise<Silent> {
  const certs = await generateWebhookCertificates({ hosts: ['127.0.0.1'] });
  const open = new Set<Socket>();
  const server = createServer({ cert: certs.cert, key: certs.key }, () => undefined);
  server.on('secureConnection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caBundle: Buffer.from(certs.caCert).toString('base64'),
    open,
    server,
  };
}

/** Resolves when every socket in `open` has closed (the test's own timeout bounds the wait). */
async function allClosed(open: Set<Socket>): Promise<void> {
  while (open.size > 0) await once([...open][0] as Socket, 'close');
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

describe('postReview', () => {
  it('a call past its deadline fails with context deadline exceeded and closes its connections', async () => {
    const silent = await silentServer();
    servers.push(silent.server);
    const clock = new VirtualClock();
    const url = `${silent.url}/validate?timeout=1s`;
    for (let i = 0; i < 3; i++) {
      const call = postReview({ url }, silent.caBundle, { kind: 'AdmissionReview' }, 1_000, clock);
      const failed = expect(call).rejects.toThrow(
        `failed to call webhook: Post "${url}": context deadline exceeded`,
      );
      // the request reaches the server before the deadline passes
      while (silent.open.size === 0) await once(silent.server, 'secureConnection');
      await clock.advance(1_000);
      await failed;
      // Go's client closes the connection of a cancelled call; none lingers for keep-alive
      await allClosed(silent.open);
    }
  });
});
