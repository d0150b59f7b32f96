import { describe, expect, it } from 'vitest';
import { resourceType } from '../backend/index.ts';
import { SourceFailedError } from '../controller/index.ts';
import { AlreadyStartedError } from '../errors.ts';
import { Informer, InformerRegistry } from '../informer/index.ts';
import { FakeBackend, settle, VirtualClock } from '../testing/index.ts';
import { InformerController } from './informer-controller.ts';
import { type Widget, widget } from './informer-controller-test-support.ts';

const widgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

describe('InformerController with real informers', () => {
  it('works over a shared informer an InformerRegistry runs: { start: false }, and a late subscription still sees existing objects', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    backend.set(widgets, widget('existing'));
    const registry = new InformerRegistry({ clock });
    const { informer } = registry.acquire<Widget>({ backend, type: widgets });
    const stop = new AbortController();
    const registryRun = registry.start(stop.signal);
    await registry.waitForSync(stop.signal);
    const controller = new InformerController({ clock });
    const seen: string[] = [];
    controller.addInformer(informer, 'Widget', { start: false });
    controller.addWatcher<Widget>(
      {
        add: (o) => void seen.push(`add ${o.metadata.name}`),
        update: (_old, o) => void seen.push(`update ${o.metadata.name}`),
        delete: (o) => void seen.push(`delete ${o.metadata.name}`),
      },
      'Widget',
    );
    const run = controller.start(stop.signal);
    await settle();
    await backend.create(widgets, widget('fresh'));
    await settle();
    const fresh = await backend.get<Widget>(widgets, { namespace: 'default', name: 'fresh' });
    await backend.update(widgets, { ...fresh, spec: { tag: 'changed' } });
    await settle();
    await backend.delete(widgets, { namespace: 'default', name: 'fresh' });
    await settle();
    expect(seen).toEqual(['add existing', 'add fresh', 'update fresh', 'delete fresh']);
    stop.abort();
    await Promise.all([run, registryRun]);
  });

  it('runs a bare informer itself by default; the same informer also run by a registry fails loudly with a SourceFailedError', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    backend.set(widgets, widget('a'));
    const bare = new Informer<Widget>({ backend, type: widgets, clock });
    const controller = new InformerController({ clock });
    const seen: string[] = [];
    controller.addInformer(bare, 'Widget');
    controller.addWatcher<Widget>({ add: (o) => void seen.push(o.metadata.name ?? '') }, 'Widget');
    const stop = new AbortController();
    const run = controller.start(stop.signal);
    await settle();
    expect(seen).toEqual(['a']);
    stop.abort();
    await run;

    const registry = new InformerRegistry({ clock });
    const { informer } = registry.acquire<Widget>({ backend, type: widgets });
    const both = new InformerController({ clock });
    both.addInformer(informer, 'Widget');
    const stopBoth = new AbortController();
    const registryRun = registry.start(stopBoth.signal);
    const outcome = both.start(stopBoth.signal).then(
      () => undefined,
      (error: unknown) => error,
    );
    await settle();
    const error = await outcome;
    expect(error).toBeInstanceOf(SourceFailedError);
    expect((error as SourceFailedError).cause).toBeInstanceOf(AlreadyStartedError);
    stopBoth.abort();
    await registryRun;
  });
});
