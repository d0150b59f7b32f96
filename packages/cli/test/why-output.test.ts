/**
 * `converge why` against fake operations servers (node:http on port 0, in this process): the
 * chain and hot loop of a newer server's keys, dynamic controllers' keys, controllers named
 * otherwise, terminal-safe text, and every way of not getting an answer (exit 1, the code named).
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/index.ts';
import { readOperationsRecord, recordOperations } from '../src/operations-record.ts';
import { runWhy } from '../src/why-cmd.ts';

interface Reply {
  status?: number;
  body?: string;
  /** Never answer. */
  hang?: boolean;
}

let server: Server;
let base: string;
let reply: Reply = {};
const queries: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    queries.push(req.url ?? '');
    if (reply.hang === true) return;
    res.statusCode = reply.status ?? 200;
    res.end(reply.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function why(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), stopped: Promise.resolve() };
  const code = await main(['why', ...argv, '--address', base], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const LOOP = {
  since: '2026-12-06T11:59:30.000Z',
  selfCausedRuns: 1350,
  chain: ['website shop/web writes Deployment shop/web', 'Deployment shop/web wakes website shop/web'],
};

const HOT = {
  now: '2026-12-06T12:00:00.000Z',
  controllers: [
    {
      name: 'website',
      truncated: false,
      keys: [
        {
          key: 'shop/web',
          partition: '',
          state: 'running',
          priority: 0,
          attempts: 0,
          causes: ['modified Deployment shop/web@12 via owns:Deployment'],
          droppedCauses: 2,
          runCauses: ['modified Deployment shop/web@11 via owns:Deployment'],
          reconcileId: '7f3c',
          runningSince: '2026-12-06T11:59:59.900Z',
          runningForMs: 100,
          runsAgain: true,
          chain: [
            'modified Deployment shop/web@11, written by reconcile 7f3b of controller website',
            'which ran because modified Deployment shop/web@10, written by reconcile 7f3a of controller website',
          ],
          hotLoop: LOOP,
        },
      ],
    },
    {
      name: 'dynamic',
      truncated: false,
      keys: [
        { key: 'example.com/v1/websites/shop/web', state: 'queued', causes: ['resync'] },
        { key: 'other.io/v1/websites/shop/web', state: 'queued', causes: ['resync'] },
        { key: 'apps/v1/deployments/shop/web', state: 'queued', causes: ['resync'] },
      ],
    },
    { name: 'web-mirror', truncated: false, keys: [{ key: 'shop/web', state: 'waiting', causes: [] }] },
    // A cluster-scoped object of the same name: another object, not shown.
    { name: 'namespace', truncated: false, keys: [{ key: 'web', state: 'queued', causes: [] }] },
  ],
};

describe('converge why, printing', () => {
  it('prints the run in progress, its causes, the chain and the hot loop; asks for the one object', async () => {
    reply = { body: JSON.stringify(HOT) };
    const { code, out, err } = await why('Website/web', '-n', 'shop');
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect(queries.at(-1)).toBe('/debug/keys?key=shop%2Fweb&key=web');
    const lines = out.split('\n');
    expect(lines[0]).toBe(`Website shop/web (asked ${base} at 2026-12-06T12:00:00.000Z)`);
    expect(out).toContain(
      [
        'controller website: running',
        '  running:      reconcile 7f3c since 2026-12-06T11:59:59.900Z (100 ms)',
        '  runs because: modified Deployment shop/web@11 via owns:Deployment',
        '  then:         runs again (changed while running)',
        '  next because: modified Deployment shop/web@12 via owns:Deployment (and 2 more)',
        '  chain:        modified Deployment shop/web@11, written by reconcile 7f3b of controller website',
        '                ← which ran because modified Deployment shop/web@10, written by reconcile 7f3a of controller website',
        '  hot loop:     YES since 2026-12-06T11:59:30.000Z, 1350 self-caused runs: its reconciles are caused by its own writes',
        '  loop:         website shop/web writes Deployment shop/web',
        '                ← Deployment shop/web wakes website shop/web',
      ].join('\n'),
    );
    // The dynamic controller's Website of any group (none given), not its Deployment.
    expect(out).toContain('controller dynamic: queued\n  causes:       resync\n  hot loop:     no');
    expect(out.match(/controller dynamic/g)).toHaveLength(2);
    expect(out).toContain('controller web-mirror: waiting (a controller named otherwise)');
    expect(out).not.toContain('controller namespace');

    const grouped = await why('websites.example.com/web', '-n', 'shop', '--json');
    const answer = JSON.parse(grouped.out) as {
      idle: boolean;
      keys: { controller: string; matchesKind: boolean; key: { key: string; hotLoop?: unknown } }[];
      controllers: string[];
    };
    expect(answer.idle).toBe(false);
    expect(answer.keys.map((k) => [k.controller, k.matchesKind, k.key.key])).toEqual([
      ['website', true, 'shop/web'],
      ['dynamic', true, 'example.com/v1/websites/shop/web'],
      ['web-mirror', false, 'shop/web'],
    ]);
    expect(answer.keys[0]?.key.hotLoop).toEqual(LOOP);
    expect(answer.controllers).toEqual(['website', 'dynamic', 'web-mirror', 'namespace']);
  });

  it('says an object no controller holds is idle, and escapes what the operator sends', async () => {
    reply = {
      body: JSON.stringify({ now: HOT.now, controllers: [{ name: 'website', keys: [], truncated: false }] }),
    };
    const idle = await why('configmaps/settings');
    expect(idle.code).toBe(0);
    expect(idle.out.split('\n')[1]).toBe(
      'No controller has it queued: it is idle (its last reconcile succeeded, nothing changed since), or no controller watches configmaps (controllers: website; none named for configmaps).',
    );
    const WRITTEN = 'written by reconcile r1 of controller namespace (team-a), which ran because: resync';
    const evil = {
      now: HOT.now,
      controllers: [
        {
          name: 'namespace',
          truncated: false,
          keys: [
            {
              key: 'team-a',
              state: 'backoff',
              attempts: 3,
              nextRetryAt: '2026-12-06T12:00:02.500Z',
              nextRetryInMs: 2_500,
              lastError: { message: 'boom\n\u001b[31mred\u001b[0m', name: 'Error', code: 'E_X', at: HOT.now },
              causes: [`modified Namespace team-a@5 via for:Namespace, ${WRITTEN}`],
              chain: ['modified Namespace team-a@5 via for:Namespace', WRITTEN],
              // Since as the runtime has it (clock milliseconds); the same chain as the key's.
              hotLoop: {
                since: Date.parse(HOT.now),
                selfCausedRuns: 10,
                chain: ['modified Namespace team-a@5 via for:Namespace', WRITTEN],
              },
            },
          ],
        },
      ],
    };
    reply = { body: JSON.stringify(evil) };
    const cluster = await why('Namespace/team-a');
    expect(cluster.code).toBe(0);
    expect(cluster.out.split('\n')[0]).toBe(`Namespace team-a (asked ${base} at ${HOT.now})`);
    expect(cluster.out).toContain('controller namespace: backoff (key team-a)');
    expect(cluster.out).toContain('  attempts:     3 failed since it last succeeded');
    expect(cluster.out).toContain(
      '  last error:   boom\\n\\u001b[31mred\\u001b[0m (Error, E_X, at 2026-12-06T12:00:00.000Z)',
    );
    expect(cluster.out).toContain('  next retry:   in 2.5 s (2026-12-06T12:00:02.500Z)');
    expect(cluster.out).toContain(
      [
        '  causes:       modified Namespace team-a@5 via for:Namespace',
        '  chain:        modified Namespace team-a@5 via for:Namespace',
        `                ← ${WRITTEN}`,
      ].join('\n'),
    );
    expect(cluster.out).toContain(
      '  hot loop:     YES since 2026-12-06T12:00:00.000Z, 10 self-caused runs: its reconciles are caused by its own writes\n  loop:         the chain above',
    );
    expect(cluster.out).not.toContain('\u001b');
  });

  it('exits 1 with CONVERGE_ERR_CLI_OPERATOR_UNREACHABLE when nothing, or no operations server, answers', async () => {
    const failures: [Reply, RegExp][] = [
      [
        { status: 404, body: '404 page not found\n' },
        /\/debug\/keys answered 404 \(not found: is this the metrics address/,
      ],
      [
        { status: 400, body: 'unknown parameter "key"\n' },
        /serves a \/debug\/keys without \?key= \(an older Converge\)/,
      ],
      [
        { body: '<html>hello</html>' },
        /did not answer with the keys document of a Converge operations server/,
      ],
      [
        { body: '{"now":"x","controllers":[{"name":"a","keys":[{"key":1}]}]}' },
        /did not answer with the keys document/,
      ],
    ];
    for (const [r, message] of failures) {
      reply = r;
      const { code, out, err } = await why('configmap/x');
      expect({ code, out }).toEqual({ code: 1, out: '' });
      expect(err).toMatch(message);
      expect(err).toContain('(CONVERGE_ERR_CLI_OPERATOR_UNREACHABLE)');
    }
    reply = { hang: true };
    const started = performance.now();
    const io = { out: () => {}, err: () => {}, stopped: Promise.resolve() };
    const args = { resource: 'configmap', group: undefined, name: 'x', namespace: 'default' };
    await expect(runWhy({ ...args, address: base, json: false }, io, { timeoutMs: 200 })).rejects.toThrow(
      `no operator answers at ${base} (no answer within 0.2 s): start the operator`,
    );
    expect(performance.now() - started).toBeLessThan(2_000);
    server.closeAllConnections();
  });

  it('finds the address recorded in .converge/operations.json, and says when its process is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'converge-why-'));
    try {
      const io = { out: () => {}, err: () => {}, stopped: Promise.resolve() };
      const args = { resource: 'configmap', group: undefined, name: 'x', namespace: 'default' };
      const ask = { ...args, address: undefined, json: true };
      await expect(runWhy(ask, io, { cwd: dir })).rejects.toThrow(
        /^no operator to ask: no \.converge\/operations\.json here .*pass --address URL/,
      );
      reply = { body: JSON.stringify({ now: HOT.now, controllers: [] }) };
      const remove = recordOperations(base.replace('127.0.0.1', '0.0.0.0'), 'run', io, dir);
      expect(readOperationsRecord(dir)).toMatchObject({ url: base, pid: process.pid, command: 'run' });
      const out: string[] = [];
      expect(await runWhy(ask, { ...io, out: (l) => out.push(l) }, { cwd: dir })).toBe(0);
      expect(JSON.parse(out.join('\n'))).toMatchObject({ operator: base, idle: true, keys: [] });
      remove();
      expect(readOperationsRecord(dir)).toBeUndefined();
      mkdirSync(join(dir, '.converge'), { recursive: true });
      const gone = { url: base, pid: 2 ** 30, command: 'dev', since: HOT.now };
      writeFileSync(join(dir, '.converge', 'operations.json'), JSON.stringify(gone));
      await expect(runWhy(ask, io, { cwd: dir })).rejects.toThrow(
        `the operator recorded in .converge/operations.json (converge dev, pid ${2 ** 30}, at ${base}) is not running any more`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
