import { describe, expect, it } from 'vitest';
import type { Cause } from './cause.ts';
import { formatCause } from './cause.ts';
import { causeChain, chainOf, chainReaches, followedEcho, limitLinks } from './cause-chain.ts';

const root: Cause = {
  type: 'modified',
  source: 'for:Website',
  object: { kind: 'Website', namespace: 'default', name: 'web', resourceVersion: '10' },
};
const echo = (by: string, key: string, causes: readonly Cause[], rv: string): Cause => ({
  type: 'modified',
  source: 'owns:Deployment',
  secondary: true,
  object: { kind: 'Deployment', namespace: 'default', name: 'web', resourceVersion: rv },
  writtenBy: { controller: by, reconcileId: `${by}-${rv}`, key, causes },
});

describe('cause chains', () => {
  it('formatCause prints the writer and why it ran; causeChain gives one line per link', () => {
    const cause = echo('website', 'default/web', [root], '12');
    expect(formatCause(cause)).toBe(
      'modified secondary Deployment default/web@12 via owns:Deployment, written by reconcile website-12 of controller website (default/web), which ran because: modified Website default/web@10 via for:Website',
    );
    expect(causeChain(cause)).toEqual([
      'modified secondary Deployment default/web@12 via owns:Deployment',
      'written by reconcile website-12 of controller website (default/web), which ran because: modified Website default/web@10 via for:Website',
    ]);
    expect(chainOf([root, cause])).toEqual(causeChain(cause));
    expect(chainOf([root])).toBeUndefined();
  });

  it('a chain follows the echo of another writer where a run had one: a ping-pong shows both controllers', () => {
    // b's run saw a's write and its own echo, its own last: the chain still names a.
    const byA = echo('a', 'ns/w', [root], '5');
    const bRun = echo('b', 'ns/w', [byA, echo('b', 'ns/w', [root], '6')], '7');
    expect(followedEcho(bRun.writtenBy?.causes ?? [], 'b', 'ns/w')).toBe(byA);
    expect(causeChain(bRun)[2]).toMatch(/^written by reconcile a-5 of controller a \(ns\/w\)/);
    // Only its own echoes: the newest of them; no echo at all: none.
    const own1 = echo('b', 'ns/w', [root], '1');
    const own2 = echo('b', 'ns/w', [root], '2');
    expect(followedEcho([own1, own2], 'b', 'ns/w')).toBe(own2);
    expect(followedEcho([root], 'b', 'ns/w')).toBeUndefined();
    // Another key of the same controller counts as another writer.
    const otherKey = echo('b', 'ns/v', [root], '3');
    expect(followedEcho([otherKey, own2], 'b', 'ns/w')).toBe(otherKey);
  });

  it('chainReaches finds the key of the controller up to three links up', () => {
    const one = echo('a', 'ns/x', [root], '1');
    const two = echo('b', 'ns/y', [one], '2');
    const three = echo('c', 'ns/z', [two], '3');
    const four = echo('d', 'ns/w', [three], '4');
    expect(chainReaches(one, 'a', 'ns/x')).toBe(true);
    expect(chainReaches(one, 'a', 'ns/other')).toBe(false);
    expect(chainReaches(three, 'a', 'ns/x')).toBe(true);
    expect(chainReaches(four, 'a', 'ns/x')).toBe(false);
    expect(chainReaches(root, 'a', 'ns/x')).toBe(false);
  });

  it('limitLinks cuts writers past the limit and returns what needs no cut as it is', () => {
    const deep = echo('c', 'k', [echo('b', 'k', [echo('a', 'k', [root], '1')], '2')], '3');
    const causes = [root, deep];
    expect(limitLinks(causes, 3)).toBe(causes);
    const cut = limitLinks(causes, 2);
    expect(cut[0]).toBe(root);
    expect(cut[1]?.writtenBy?.causes[0]?.writtenBy?.causes[0]?.writtenBy).toBeUndefined();
    expect(cut[1]?.writtenBy?.causes[0]?.writtenBy?.causes[0]?.object?.resourceVersion).toBe('1');
    expect(causeChain(cut[1] as Cause)).toHaveLength(3);
  });

  it('formatCause and causeChain show three links of a longer chain; chainDepth counts them', async () => {
    const { chainDepth } = await import('./cause-chain.ts');
    let c: Cause = root;
    for (let i = 1; i <= 5; i++) c = echo(`c${i}`, 'k', [c], String(i));
    expect(chainDepth([c], 10)).toBe(5);
    expect(chainDepth([c], 2)).toBe(2);
    expect(formatCause(c).match(/written by/g)).toHaveLength(3);
    expect(causeChain(c)).toHaveLength(4);
  });
});

describe('the chain a loop of writes builds', () => {
  it('stays bounded: a writer cuts its causes back once their chain reaches 12 links', async () => {
    const { ReconcileWriter } = await import('../controller/reconcile-writer.ts');
    const { WriteLedger } = await import('../client/write-ledger.ts');
    const { chainDepth } = await import('./cause-chain.ts');
    const ledger = new WriteLedger();
    let causes: readonly Cause[] = [root];
    const depths: number[] = [];
    for (let i = 1; i <= 40; i++) {
      const writer = new ReconcileWriter(ledger, 'c', `c-${i}`, 'k', { causes, dropped: 0 }).writer();
      causes = [echo(writer.controller, writer.key, writer.causes, String(i))];
      depths.push(chainDepth(causes, 100));
    }
    expect(Math.max(...depths)).toBe(12);
    expect(Math.min(...depths.slice(12))).toBe(3);
    expect(causeChain(causes[0] as Cause)).toHaveLength(4);
  });
});
