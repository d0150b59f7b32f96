import { matchesShard, shardSelectorFor } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { useKubectlServer } from './kubectl-test-support.ts';

const k = useKubectlServer('kubectl-shards');

interface List {
  metadata: { shardInfo?: { selector: string } };
  items: { metadata: { name: string; uid: string } }[];
}

describe('kubectl and shardSelector (KEP-5866)', () => {
  it('kubectl get --raw lists each shard of the ConfigMaps, and a malformed selector is a 400', async () => {
    for (let i = 0; i < 6; i++) await k.ok(['create', 'configmap', `shard-${i}`, '-n', 'default']);
    const all = JSON.parse(await k.ok(['get', '--raw', '/api/v1/namespaces/default/configmaps'])) as List;
    const seen: string[] = [];
    for (let i = 0; i < 2; i++) {
      const selector = shardSelectorFor(i, 2);
      const path = `/api/v1/namespaces/default/configmaps?shardSelector=${encodeURIComponent(selector)}`;
      const shard = JSON.parse(await k.ok(['get', '--raw', path])) as List;
      expect(shard.metadata.shardInfo).toEqual({ selector });
      expect(shard.items.every((o) => matchesShard(o, selector))).toBe(true);
      seen.push(...shard.items.map((o) => o.metadata.name));
    }
    expect(seen.sort()).toEqual(all.items.map((o) => o.metadata.name).sort());
    // as docs/guide/apiserver-endpoints.md writes it: no spaces, only the quotes escaped
    const lower = JSON.parse(
      await k.ok([
        'get',
        '--raw',
        '/api/v1/namespaces/default/configmaps?shardSelector=shardRange(object.metadata.uid,%270x0000000000000000%27,%270x8000000000000000%27)',
      ]),
    ) as List;
    expect(lower.items.every((o) => matchesShard(o, shardSelectorFor(0, 2)))).toBe(true);
    const bad = encodeURIComponent(
      "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
    );
    const stderr = await k.fails([
      'get',
      '--raw',
      `/api/v1/namespaces/default/configmaps?shardSelector=${bad}`,
    ]);
    expect(stderr).toContain('BadRequest');
    expect(stderr).toContain('invalid shard selector: unsupported field path');
  });
});
