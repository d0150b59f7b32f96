import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateWebhookCertificates, hubAndSpoke, WebhookServer } from '@converge/kube';
import type { KubeObject } from '@converge/runtime';

/** v1, the storage version (and the hub): a size and a colour. */
export interface WidgetV1 extends KubeObject {
  spec: { size: number; color: string };
}

/** v2, served only: replicas and a nested paint. */
export interface WidgetV2 extends KubeObject {
  spec: { replicas: number; paint: { color: string } };
}

/** v1 ↔ v2 through the hub v1; a v2 colour `unconvertible` cannot go to v1, a v1 one not to v2. */
export const widgetConverter = hubAndSpoke<WidgetV1>({
  hub: 'example.com/v1',
  spokes: {
    'example.com/v2': {
      toHub(v2: KubeObject): WidgetV1 {
        const spec = (v2 as WidgetV2).spec;
        if (spec.paint.color === 'unconvertible') throw new Error('colour unconvertible has no v1 form');
        return { ...v2, spec: { size: spec.replicas, color: spec.paint.color } };
      },
      fromHub(v1: WidgetV1): KubeObject {
        if (v1.spec.color === 'unconvertible-v1') throw new Error('colour unconvertible-v1 has no v2 form');
        return { ...v1, spec: { replicas: v1.spec.size, paint: { color: v1.spec.color } } } as WidgetV2;
      },
    },
  },
});

/** A running conversion WebhookServer: `/convert` converts widgets. */
export interface ConversionHooks {
  readonly url: string;
  readonly port: number;
  /** base64 PEM of the CA, for `caBundle`. */
  readonly caBundle: string;
  /** Every conversion: `<from> -> <desired> <name>`. */
  readonly conversions: string[];
  stop(): Promise<void>;
}

/** Starts a WebhookServer on 127.0.0.1 (certificate also for `widgets.hooks.svc`) serving `/convert`. */
export async function startConversionHooks(): Promise<ConversionHooks> {
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    tls: { generate: { hosts: ['127.0.0.1', 'localhost', 'widgets.hooks.svc'] } },
  });
  const conversions: string[] = [];
  server.conversion('/convert', {
    convert(object, desired, signal) {
      conversions.push(`${String(object.apiVersion)} -> ${desired} ${object.metadata?.name ?? ''}`);
      return widgetConverter.convert(object, desired, signal);
    },
  });
  const controller = new AbortController();
  const started = server.start(controller.signal);
  started.catch(() => undefined);
  const { url, port } = await server.listening();
  return {
    url,
    port,
    caBundle: Buffer.from(server.caBundle ?? '').toString('base64'),
    conversions,
    stop: async () => {
      controller.abort();
      await started;
    },
  };
}

/** The widgets CRD: v1 storage, v2 served, both with status; conversion through `clientConfig`. */
export function widgetCrd(
  clientConfig: Record<string, unknown>,
  reviewVersions = ['v1'],
): Record<string, unknown> {
  const schema = (spec: Record<string, unknown>): Record<string, unknown> => ({
    openAPIV3Schema: {
      type: 'object',
      properties: {
        spec: { type: 'object', properties: spec },
        status: { type: 'object', properties: { ready: { type: 'boolean' }, count: { type: 'integer' } } },
      },
    },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: reviewVersions, clientConfig },
      },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.count' },
          },
          schema: schema({ size: { type: 'integer' }, color: { type: 'string' } }),
          selectableFields: [{ jsonPath: '.spec.color' }],
        },
        {
          name: 'v2',
          served: true,
          storage: false,
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.count' },
          },
          schema: schema({
            replicas: { type: 'integer' },
            paint: { type: 'object', properties: { color: { type: 'string' } } },
          }),
          selectableFields: [{ jsonPath: '.spec.paint.color' }],
        },
      ],
    },
  };
}

/** A v2 widget. */
export function widgetV2(name: string, replicas: number, color: string): WidgetV2 {
  return {
    apiVersion: 'example.com/v2',
    kind: 'Widget',
    metadata: { name, namespace: 'default' },
    spec: { replicas, paint: { color } },
  };
}

/** A v1 widget. */
export function widgetV1(name: string, size: number, color: string): WidgetV1 {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name, namespace: 'default' },
    spec: { size, color },
  };
}

/** A ConversionReview request as the API server sends it. */
export interface ReviewRequest {
  readonly apiVersion: string;
  readonly request: { uid: string; desiredAPIVersion: string; objects: Record<string, unknown>[] };
}

/**
 * A bare HTTPS conversion webhook: `answer` gets each review and returns the body to send (the
 * default converts with {@link widgetConverter} and answers a proper v1 review); every review is kept.
 */
export async function startBareConversion(): Promise<{
  url: string;
  caBundle: string;
  reviews: ReviewRequest[];
  answer: (review: ReviewRequest) => Promise<unknown>;
  setAnswer(answer: (review: ReviewRequest) => Promise<unknown> | unknown): void;
  close(): Promise<void>;
}> {
  const certs = await generateWebhookCertificates({ hosts: ['127.0.0.1'] });
  const reviews: ReviewRequest[] = [];
  const convertAll = async (review: ReviewRequest): Promise<unknown> => {
    const signal = new AbortController().signal;
    const convertedObjects = [];
    for (const object of review.request.objects) {
      const out = (await widgetConverter.convert(
        object as never,
        review.request.desiredAPIVersion,
        signal,
      )) as Record<string, unknown>;
      convertedObjects.push({ ...out, apiVersion: review.request.desiredAPIVersion, kind: object.kind });
    }
    return {
      apiVersion: review.apiVersion,
      kind: 'ConversionReview',
      response: { uid: review.request.uid, result: { status: 'Success' }, convertedObjects },
    };
  };
  let answer: (review: ReviewRequest) => Promise<unknown> | unknown = convertAll;
  const server: Server = createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReviewRequest;
      reviews.push(review);
      void Promise.resolve(answer(review)).then((body) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caBundle: Buffer.from(certs.caCert).toString('base64'),
    reviews,
    answer: convertAll,
    setAnswer(next) {
      answer = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
