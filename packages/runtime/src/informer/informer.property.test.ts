import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExpiredError, InternalError, UnavailableError } from '../backend/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { configMap, configMaps, startInformer } from './test-harness.ts';
import { settle } from './testing/index.ts';

type Action =
  | { readonly kind: 'set'; readonly name: string; readonly namespace: string; readonly v: string }
  | { readonly kind: 'delete'; readonly name: string; readonly namespace: string }
  | { readonly kind: 'drop'; readonly discardQueued: boolean }
  | { readonly kind: 'break'; readonly expired: boolean }
  | { readonly kind: 'compact' }
  | { readonly kind: 'compactMidList' }
  | { readonly kind: 'failList'; readonly times: number }
  | { readonly kind: 'failWatch' }
  | { readonly kind: 'closeWatch' }
  | { readonly kind: 'bookmark' }
  | { readonly kind: 'inject'; readonly what: 'stale' | 'duplicate' | 'ghost' | 'malformed' }
  | { readonly kind: 'holdEnd' }
  | { readonly kind: 'releaseEnd' }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'settle' };

const name = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const namespace = fc.constantFrom('n1', 'n2');
const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('set' as const),
      name,
      namespace,
      v: fc.constantFrom('1', '2', '3'),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), name, namespace }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), discardQueued: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('break' as const), expired: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'compact' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'compactMidList' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('failList' as const), times: fc.integer({ min: 1, max: 3 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'failWatch' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'closeWatch' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'bookmark' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'holdEnd' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'releaseEnd' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('inject' as const),
      what: fc.constantFrom('stale' as const, 'duplicate' as const, 'ghost' as const, 'malformed' as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 70_000 }) }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: 'settle' as const }) },
);

describe.each(['paginated', 'watch-list', 'auto'] as const)(
  'Informer convergence with %s lists',
  (initialList) => {
    it('for random changes interleaved with random faults, the cache converges to the backend and replayed events equal the cache', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(action, { minLength: 10, maxLength: 60, size: 'max' }),
          fc.integer({ min: 1, max: 3 }),
          fc.option(fc.integer({ min: 2, max: 8 }), { nil: undefined }),
          fc.integer({ min: 1, max: 1_000 }),
          async (actions, pageSize, historyLimit, seed) => {
            const clock = new VirtualClock({ seed });
            let compactOnContinue = false;
            const h = await startInformer(
              [
                configMap('a', { namespace: 'n1' }),
                configMap('b', { namespace: 'n2' }),
                configMap('c', { namespace: 'n1' }),
              ],
              { clock, pageSize, initialList },
              {
                ...(historyLimit === undefined ? {} : { historyLimit }),
                prepare: (backend) => {
                  backend.beforeList = (options) => {
                    if (options.continue !== undefined && compactOnContinue) {
                      compactOnContinue = false;
                      backend.compact();
                    }
                  };
                },
              },
            );
            const { backend } = h;
            for (const step of actions) {
              switch (step.kind) {
                case 'set':
                  backend.set(
                    configMaps,
                    configMap(step.name, { namespace: step.namespace, data: { v: step.v } }),
                  );
                  break;
                case 'delete':
                  backend.remove(configMaps, { namespace: step.namespace, name: step.name });
                  break;
                case 'drop':
                  backend.dropWatches({ discardQueued: step.discardQueued });
                  break;
                case 'break':
                  backend.breakWatches(
                    step.expired ? new ExpiredError('too old') : new UnavailableError('reset'),
                  );
                  break;
                case 'compact':
                  backend.compact();
                  break;
                case 'compactMidList':
                  compactOnContinue = true;
                  break;
                case 'failList':
                  backend.failNext('list', new InternalError('boom'), step.times);
                  break;
                case 'failWatch':
                  backend.failNext('watch', new UnavailableError('refused'));
                  break;
                case 'closeWatch':
                  backend.closeNextWatches();
                  break;
                case 'bookmark':
                  backend.bookmark();
                  break;
                case 'holdEnd':
                  backend.holdInitialEventsEnd();
                  break;
                case 'releaseEnd':
                  backend.releaseInitialEventsEnd();
                  break;
                case 'inject':
                  inject(h.backend, step.what);
                  break;
                case 'advance':
                  await clock.advance(step.ms);
                  break;
                case 'settle':
                  await settle(3);
                  break;
              }
            }
            // Heal: let every queued fault and backoff (at most 60 s each) play out.
            backend.releaseInitialEventsEnd();
            for (let i = 0, watching = 0; i < 80 && watching < 3; i++) {
              await clock.advance(30_000);
              await settle(4);
              watching = h.informer.state.phase === 'watching' ? watching + 1 : 0;
            }
            expect(h.informer.state.phase).toBe('watching');
            expect(h.cacheObjects()).toEqual(h.backendObjects());
            expect(h.replay.violations).toEqual([]);
            expect(h.replay.objects()).toEqual(h.cacheObjects());
            expect(h.informer.hasSynced()).toBe(true);
            await h.stop();
          },
        ),
        { numRuns: 300 },
      );
    }, 120_000);
  },
);

function inject(
  backend: import('./testing/index.ts').FakeBackend,
  what: 'stale' | 'duplicate' | 'ghost' | 'malformed',
): void {
  const current = backend.objects(configMaps);
  const revision = String(backend.revision);
  switch (what) {
    case 'stale': {
      const victim = current[0];
      if (victim !== undefined) {
        backend.inject(configMaps, {
          type: 'MODIFIED',
          object: { ...victim, data: { v: 'stale' }, metadata: { ...victim.metadata, resourceVersion: '1' } },
        });
      }
      return;
    }
    case 'duplicate': {
      const last = current.find((o) => o.metadata.resourceVersion === revision);
      if (last !== undefined) backend.inject(configMaps, { type: 'ADDED', object: last });
      return;
    }
    case 'ghost':
      backend.inject(configMaps, {
        type: 'DELETED',
        object: {
          ...configMap('ghost', { namespace: 'n1' }),
          metadata: { name: 'ghost', namespace: 'n1', resourceVersion: revision },
        },
      });
      return;
    case 'malformed':
      backend.inject(configMaps, { type: 'MODIFIED', object: { metadata: { namespace: 'n1' } } });
      return;
  }
}
