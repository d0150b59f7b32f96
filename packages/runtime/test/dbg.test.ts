import { it } from 'vitest';
import type { Backend, ResourceType, WatchOptions } from '../src/backend/index.ts';
import { Informer } from '../src/informer/index.ts';
import { ReferenceBackend, suiteTypes } from '../src/testing/backend-suite/index.ts';
import { VirtualClock } from '../src/testing/index.ts';

function lagging(inner: Backend, clock: VirtualClock, lagMs: number): Backend {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'watch') {
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      return (type: ResourceType, options?: WatchOptions) => ({
        async *[Symbol.asyncIterator]() {
          let live = options?.sendInitialEvents !== true;
          console.log('watch', JSON.stringify(options));
          for await (const event of target.watch(type, options)) {
            console.log('event', JSON.stringify(event));
            if (live) await clock.sleep(lagMs);
            if (event.type === 'BOOKMARK' && event.initialEventsEnd === true) live = true;
            yield event;
          }
        },
      });
    },
  });
}
it('dbg', async () => {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
  const backend = new ReferenceBackend({ types: [suiteTypes.configMap], clock });
  const inf = new Informer({ backend: lagging(backend, clock, 50), type: suiteTypes.configMap, clock });
  const ac = new AbortController();
  void inf.start(ac.signal);
  const synced = inf.waitForSync(ac.signal).then(() => 'synced');
  console.log(await Promise.race([synced, new Promise((r) => setTimeout(() => r('timeout'), 1000))]));
  ac.abort();
});
