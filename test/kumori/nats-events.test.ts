/**
 * An Event about an object that lives in NATS KV, recorded in the Kubernetes API (the "TBD" of
 * Kumori's `Event`: its recorder only took Kubernetes objects). The Event refers to the NATS object
 * by its own apiVersion, kind, namespace, name and uid — Kubernetes does not check that the object
 * exists — so `kubectl get events` lists it as `application/<name>`, and field selectors on
 * `involvedObject.kind` / `involvedObject.name` find it.
 */
import {
  type CoreEvent,
  coreEventType,
  createEventRecorder,
  EventReasons,
  type EventsV1Event,
  eventMessages,
  eventsV1Type,
  type KubeObject,
  resourceType,
} from '@converge/runtime';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Cluster, eventually, startCluster, startNats } from './harness.ts';

const appType = resourceType({
  group: 'kumori.test.converge.dev',
  version: 'v1',
  kind: 'Application',
  plural: 'applications',
  namespaced: true,
});

describe('an Event about a NATS object, in the Kubernetes API', () => {
  let cluster: Cluster;
  let nats: Awaited<ReturnType<typeof startNats>>;

  beforeEach(async () => {
    cluster = await startCluster();
    nats = await startNats([appType]);
  });

  afterEach(async () => {
    await nats.destroy();
    await cluster.close().catch(() => {});
  });

  it('refers to the object by its own identity, and kubectl lists it as application/<name>', async () => {
    const { kube } = cluster;
    const app = await nats.backend.create<KubeObject & { spec: object }>(appType, {
      apiVersion: 'kumori.test.converge.dev/v1',
      kind: 'Application',
      metadata: { name: 'hello', namespace: 'default' },
      spec: {},
    });
    const recorder = createEventRecorder({ backend: kube, component: 'kumori-test' });
    recorder.event(app, 'Normal', EventReasons.synced, 'Reconcile', eventMessages.synced('hello', 'created'));
    recorder.event(
      app,
      'Warning',
      EventReasons.errResourceExists,
      'Reconcile',
      eventMessages.resourceExists('hello-config'),
    );
    expect((await recorder.close({ timeoutMs: 10_000 })).flushed).toBe(true);

    const { items } = await kube.list<EventsV1Event>(eventsV1Type, { namespace: 'default' });
    expect(items.map((e) => [e.type, e.reason, e.note]).sort()).toEqual([
      ['Normal', 'Synced', '"hello" synced successfully (created)'],
      [
        'Warning',
        'ErrResourceExists',
        'Resource "hello-config" already exists and is not managed by this controller',
      ],
    ]);
    for (const event of items) {
      expect(event.regarding).toEqual({
        apiVersion: 'kumori.test.converge.dev/v1',
        kind: 'Application',
        namespace: 'default',
        name: 'hello',
        uid: app.metadata.uid,
        resourceVersion: app.metadata.resourceVersion, // the KV revision
      });
    }
    // The same Events through core/v1, as older tools read them.
    const core = await kube.list<CoreEvent>(coreEventType, { namespace: 'default' });
    expect(core.items.map((e) => e.involvedObject.kind)).toEqual(['Application', 'Application']);

    const table = await eventually('kubectl to list the Events', async () => {
      const out = await cluster.kubectl('get', 'events', '-n', 'default');
      return out.includes('application/hello') ? out : undefined;
    });
    const lines = table.split('\n').filter((line) => line.includes('application/hello'));
    expect(lines).toHaveLength(2);
    expect(
      lines.some((l) =>
        /Normal\s+Synced\s+application\/hello\s+"hello" synced successfully \(created\)/.test(l),
      ),
    ).toBe(true);
    expect(
      lines.some((l) => /Warning\s+ErrResourceExists\s+application\/hello\s+Resource "hello-config"/.test(l)),
    ).toBe(true);
    const selected = await cluster.kubectl(
      'get',
      'events',
      '-n',
      'default',
      '--field-selector',
      'involvedObject.kind=Application,involvedObject.name=hello,type=Warning',
      '-o',
      'jsonpath={.items[*].reason}',
    );
    expect(selected).toBe('ErrResourceExists');
  });
});
