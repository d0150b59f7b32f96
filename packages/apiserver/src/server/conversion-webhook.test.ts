import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { generateWebhookCertificates } from '@converge/kube';
import { VirtualClock } from '@converge/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONVERSION_TIMEOUT_MS,
  ConversionErrorCodes,
  ConversionWebhookError,
  noneConversion,
  webhookConversion,
} from './conversion-webhook.ts';

const widget = (name: string, apiVersion = 'example.com/v1') => ({
  apiVersion,
  kind: 'Widget',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { size: 1 },
});

let server: Server;
let url: string;
let caBundle: string;
const received: unknown[] = [];
const sockets = new Set<Socket>();

beforeAll(async () => {
  const certs = await generateWebhookCertificates({ hosts: ['127.0.0.1'] });
  // never answers: only the caller's timeout ends a call
  server = createServer({ cert: certs.cert, key: certs.key }, (req) => {
    req.on('data', () => undefined);
    req.on('end', () => received.push(req.url));
  });
  server.on('connection', (socket: Socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  caBundle = Buffer.from(certs.caCert).toString('base64');
});

afterAll(
  () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
);

describe('webhookConversion', () => {
  it('times out after 30 s on the given clock, with kube-apiserver wording', async () => {
    const clock = new VirtualClock();
    const conversion = webhookConversion(
      'widgets.example.com',
      { conversionReviewVersions: ['v1'], clientConfig: { url: `${url}/convert`, caBundle } },
      { clock },
    );
    const pending = conversion.convert([widget('a')], 'example.com/v2');
    const outcome = pending.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    while (received.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(received).toEqual(['/convert?timeout=30s']);
    await clock.advance(CONVERSION_TIMEOUT_MS - 1);
    await clock.advance(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(ConversionWebhookError);
    expect((error as ConversionWebhookError).code).toBe(ConversionErrorCodes.WEBHOOK_FAILED);
    expect((error as Error).message).toBe(
      `conversion webhook for example.com/v1, Kind=Widget failed: Post "${url}/convert?timeout=30s": context deadline exceeded`,
    );
  });

  it('makes no call when every object is already in the desired version', async () => {
    const before = received.length;
    const conversion = webhookConversion('widgets.example.com', {
      conversionReviewVersions: ['v1'],
      clientConfig: { url: `${url}/convert`, caBundle },
    });
    const objects = [widget('a', 'example.com/v2'), widget('b', 'example.com/v2')];
    expect(await conversion.convert(objects, 'example.com/v2', 'WidgetList')).toEqual(objects);
    expect(received.length).toBe(before);
  });

  it('a review version this server does not speak is an error, not a call', async () => {
    const conversion = webhookConversion('widgets.example.com', {
      conversionReviewVersions: ['v9'],
      clientConfig: { url: `${url}/convert` },
    });
    await expect(conversion.convert([widget('a')], 'example.com/v2')).rejects.toThrow(
      'no supported conversion review versions',
    );
  });
});

describe('noneConversion', () => {
  it('rewrites apiVersion only, leaving objects in the desired version as they are', async () => {
    const same = widget('s', 'example.com/v2');
    const [converted, kept] = await noneConversion.convert([widget('a'), same], 'example.com/v2');
    expect(converted).toEqual({ ...widget('a'), apiVersion: 'example.com/v2' });
    expect(kept).toBe(same);
  });
});
