import { allowed, OptionsError } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { WebhookListenError, WebhookPathError } from './errors.ts';
import { webhookHostSuite } from './webhook-host-test-support.ts';
import { WebhookServer } from './webhook-server.ts';
import { admissionReview, responseOf, runServer, website } from './webhook-test-support.ts';

describe('WebhookServer lifecycle and registration', () => {
  it('fails start with WebhookListenError when the port is taken', async () => {
    const running = await runServer(() => {});
    try {
      const port = Number(new URL(running.url).port);
      const second = new WebhookServer({ host: '127.0.0.1', port, tls: { generate: {} } });
      await expect(second.start(new AbortController().signal)).rejects.toBeInstanceOf(WebhookListenError);
    } finally {
      await running.stop();
    }
  });

  it('refuses malformed and duplicate paths with WebhookPathError, and lists what it serves', () => {
    const server = new WebhookServer({ tls: { generate: {} } });
    server.validating('/validate', { validate: () => allowed() }, { sideEffects: 'NoneOnDryRun' });
    server.mutating('/default', { default: () => undefined });
    expect(() => server.conversion('/validate', { convert: (o) => o })).toThrow(WebhookPathError);
    expect(() => server.validating('validate', { validate: () => allowed() })).toThrow(WebhookPathError);
    expect(() => server.validating('/a?b', { validate: () => allowed() })).toThrow(WebhookPathError);
    expect(server.webhooks()).toEqual([
      { path: '/validate', type: 'validating', sideEffects: 'NoneOnDryRun' },
      { path: '/default', type: 'mutating', sideEffects: 'None' },
    ]);
  });

  it('rejects invalid options with OptionsError naming the field', () => {
    expect(() => new WebhookServer({ tls: { generate: {} }, port: 70_000 })).toThrow(OptionsError);
    expect(() => new WebhookServer({ tls: { generate: {} }, timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => new WebhookServer({ tls: { certFile: '', keyFile: 'k' } })).toThrow(/tls\.certFile/);
    expect(() => new WebhookServer({ tls: {} as never })).toThrow(/tls/);
  });

  it('cannot be started twice', async () => {
    const running = await runServer(() => {});
    try {
      await expect(running.server.start(new AbortController().signal)).rejects.toMatchObject({
        code: 'CONVERGE_ERR_LIFECYCLE_ALREADY_STARTED',
      });
    } finally {
      await running.stop();
    }
  });
});

describe('WebhookServer shutdown', () => {
  it('lets a request in flight finish and answer after the signal aborts, then resolves start', async () => {
    const clock = new VirtualClock();
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const running = await runServer(
      (server) => {
        server.validating('/wait', {
          validate: () =>
            new Promise((resolve) => {
              release = () => resolve(allowed());
              entered();
            }),
        });
      },
      { clock, shutdownTimeoutMs: 5_000 },
    );
    const pending = running.post('/wait', admissionReview({ uid: 'late', object: website() }));
    await inside;
    const stopped = running.stop();
    release();
    expect(responseOf(await pending)).toEqual({ uid: 'late', allowed: true });
    await stopped;
    expect(running.server.address).toBeUndefined();
  });

  it('aborts a handler still running after shutdownTimeoutMs and cuts its connection', async () => {
    const clock = new VirtualClock();
    let signal: AbortSignal | undefined;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const running = await runServer(
      (server) => {
        server.validating('/stuck', {
          validate(request) {
            signal = request.signal;
            entered();
            return new Promise(() => {});
          },
        });
      },
      { clock, shutdownTimeoutMs: 5_000, timeoutMs: 60_000 },
    );
    const pending = running.post('/stuck', admissionReview({ object: website() }));
    pending.catch(() => {});
    await inside;
    const stopped = running.stop();
    await clock.advance(4_999);
    expect(signal?.aborted).toBe(false);
    await clock.advance(1);
    await stopped;
    expect(signal?.aborted).toBe(true);
    await expect(pending).rejects.toThrow();
    const warned = running.logger.records.find((r) => r.message.startsWith('Webhook requests still running'));
    expect(warned?.fields.inFlight).toBe(1);
  });
});

webhookHostSuite('WebhookServer', () => {
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    tls: { generate: { hosts: ['127.0.0.1'] } },
  });
  return {
    host: server,
    port: async () => (await server.listening()).port,
    ca: () => server.caBundle ?? '',
  };
});
