/**
 * The website example's two versions end to end: `converge dev` runs the operator and its
 * conversion webhook as a real process, the real kubectl writes and reads Websites as v1beta1
 * (a list of hostnames) and as v1alpha1 (stored: one domain, the other hostnames in an
 * annotation). Get, list and watch convert; nothing is lost on the way.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXTRA_HOSTNAMES_ANNOTATION } from '../../examples/website/conversion.ts';
import { type Dev, startDev, VALIDATING_WEBHOOK, WEBSITE_V1ALPHA1, WEBSITE_V1BETA1 } from './support.ts';

type Meta = { name: string; annotations?: Record<string, string> };
type Alpha = { apiVersion: string; metadata: Meta; spec: { domain: string; replicas?: number } };
type Beta = {
  apiVersion: string;
  metadata: Meta;
  spec: { hostnames: string[]; replicas?: number; image?: string; content: string };
  status?: { url?: string };
};
type WatchEvent<T> = { type: string; object: T };

let dev: Dev;
const watchers: ChildProcess[] = [];
beforeAll(async () => {
  dev = await startDev();
});
afterAll(async () => {
  for (const watcher of watchers) watcher.kill('SIGKILL');
  if (dev !== undefined) expect(await dev.stop(), dev.output()).toBe(0);
});

const beta = (name: string, hostnames: string[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: 'examples.converge.dev/v1beta1',
    kind: 'Website',
    metadata: { name, namespace: 'default' },
    spec: { hostnames, content: `<h1>${name}</h1>`, ...extra },
  });

/** `kubectl get RESOURCE --watch --output-watch-events -o json`: its events as they come. */
function watch<T>(resource: string): {
  events: WatchEvent<T>[];
  next(match: (e: WatchEvent<T>) => boolean): Promise<WatchEvent<T>>;
} {
  const child = dev.spawnKubectl(['get', resource, '--watch', '--output-watch-events', '-o', 'json']);
  watchers.push(child);
  const events: WatchEvent<T>[] = [];
  let buffer = '';
  let wake: (() => void) | undefined;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    // kubectl prints each event as one line of JSON.
    for (let end = buffer.indexOf('\n'); end !== -1; end = buffer.indexOf('\n')) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (line !== '') events.push(JSON.parse(line) as WatchEvent<T>);
    }
    wake?.();
  });
  return {
    events,
    async next(match) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const found = events.find(match);
        if (found !== undefined) return found;
        if (Date.now() > deadline) throw new Error(`no matching watch event in ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      }
    },
  };
}

describe('Website v1alpha1 ⇄ v1beta1 through the conversion webhook, under converge dev', () => {
  it('a v1beta1 Website is stored as v1alpha1: the first hostname is the domain, the others in an annotation', async () => {
    const created = await dev.kubectl(
      ['apply', '-f', '-'],
      beta('multi', ['multi.example.com', 'www.multi.example.com', 'multi.example.org'], { replicas: 2 }),
    );
    expect(created).toMatchObject({ code: 0, stdout: 'website.examples.converge.dev/multi created\n' });
    const stored = await dev.json<Alpha>([WEBSITE_V1ALPHA1, 'multi']);
    expect(stored.apiVersion).toBe('examples.converge.dev/v1alpha1');
    expect(stored.spec).toMatchObject({ domain: 'multi.example.com', replicas: 2 });
    expect(stored.metadata.annotations?.[EXTRA_HOSTNAMES_ANNOTATION]).toBe(
      '["www.multi.example.com","multi.example.org"]',
    );
  });

  it('get as v1beta1 gives back every hostname, and no annotation of ours', async () => {
    const served = await dev.json<Beta>([WEBSITE_V1BETA1, 'multi']);
    expect(served.apiVersion).toBe('examples.converge.dev/v1beta1');
    expect(served.spec).toMatchObject({
      hostnames: ['multi.example.com', 'www.multi.example.com', 'multi.example.org'],
      replicas: 2,
      content: '<h1>multi</h1>',
    });
    expect(served.metadata.annotations?.[EXTRA_HOSTNAMES_ANNOTATION]).toBeUndefined();
  });

  it('the operator reconciles the stored version: the v1beta1 object reports the first hostname’s URL', async () => {
    await dev.ok(['wait', '--for=condition=Ready', '--timeout=60s', `${WEBSITE_V1BETA1}/multi`]);
    expect((await dev.json<Beta>([WEBSITE_V1BETA1, 'multi'])).status?.url).toBe('http://multi.example.com');
  });

  it('list converts every item, in either version', async () => {
    await dev.ok(['apply', '-f', '-'], beta('single', ['single.example.com']));
    const betas = await dev.json<{ items: Beta[] }>([WEBSITE_V1BETA1]);
    expect(betas.items.map((i) => [i.apiVersion, i.metadata.name, i.spec.hostnames])).toEqual([
      [
        'examples.converge.dev/v1beta1',
        'multi',
        ['multi.example.com', 'www.multi.example.com', 'multi.example.org'],
      ],
      ['examples.converge.dev/v1beta1', 'single', ['single.example.com']],
    ]);
    const alphas = await dev.json<{ items: Alpha[] }>([WEBSITE_V1ALPHA1]);
    expect(alphas.items.map((i) => [i.apiVersion, i.metadata.name, i.spec.domain])).toEqual([
      ['examples.converge.dev/v1alpha1', 'multi', 'multi.example.com'],
      ['examples.converge.dev/v1alpha1', 'single', 'single.example.com'],
    ]);
    // kubectl's table for the preferred version (v1beta1) shows the hostnames column.
    const table = await dev.ok(['get', 'websites', 'single', '--no-headers']);
    expect(table.trim().split(/\s+/).slice(0, 3)).toEqual([
      'single',
      'http://single.example.com',
      '["single.example.com"]',
    ]);
  });

  it('watch converts: a v1alpha1 edit arrives as a v1beta1 MODIFIED event with every hostname', async () => {
    const betaWatch = watch<Beta>(WEBSITE_V1BETA1);
    const alphaWatch = watch<Alpha>(WEBSITE_V1ALPHA1);
    await betaWatch.next((e) => e.type === 'ADDED' && e.object.metadata.name === 'multi');
    await alphaWatch.next((e) => e.type === 'ADDED' && e.object.metadata.name === 'multi');
    // An edit through v1alpha1 keeps the annotation, so v1beta1 readers keep their hostnames.
    await dev.ok(['patch', WEBSITE_V1ALPHA1, 'multi', '--type=merge', '-p', '{"spec":{"replicas":4}}']);
    const modified = await betaWatch.next((e) => e.type === 'MODIFIED' && e.object.spec.replicas === 4);
    expect(modified.object.apiVersion).toBe('examples.converge.dev/v1beta1');
    expect(modified.object.spec.hostnames).toEqual([
      'multi.example.com',
      'www.multi.example.com',
      'multi.example.org',
    ]);
    const stored = await alphaWatch.next((e) => e.type === 'MODIFIED' && e.object.spec.replicas === 4);
    expect(stored.object.apiVersion).toBe('examples.converge.dev/v1alpha1');
    expect(stored.object.spec.domain).toBe('multi.example.com');
    expect(betaWatch.events.every((e) => e.object.apiVersion === 'examples.converge.dev/v1beta1')).toBe(true);
  });

  it('v1beta1’s CEL transition rule: the first hostname is immutable, the others may change', async () => {
    const moved = await dev.kubectl([
      'patch',
      WEBSITE_V1BETA1,
      'multi',
      '--type=merge',
      '-p',
      '{"spec":{"hostnames":["www.multi.example.com"]}}',
    ]);
    expect(moved.code).toBe(1);
    expect(moved.stderr).toBe(
      'The Website "multi" is invalid: spec.hostnames: Forbidden: the first hostname is immutable: ' +
        'it was multi.example.com, create a new Website for www.multi.example.com\n',
    );
    await dev.ok([
      'patch',
      WEBSITE_V1BETA1,
      'multi',
      '--type=merge',
      '-p',
      '{"spec":{"hostnames":["multi.example.com","shop.multi.example.com"]}}',
    ]);
    const stored = await dev.json<Alpha>([WEBSITE_V1ALPHA1, 'multi']);
    expect(stored.metadata.annotations?.[EXTRA_HOSTNAMES_ANNOTATION]).toBe('["shop.multi.example.com"]');
    expect((await dev.json<Beta>([WEBSITE_V1BETA1, 'multi'])).spec.hostnames).toEqual([
      'multi.example.com',
      'shop.multi.example.com',
    ]);
  });

  it('the webhooks registered for v1alpha1 also admit v1beta1 writes (matchPolicy Equivalent): defaults and denials', async () => {
    await dev.ok(['apply', '-f', '-'], beta('plain', ['plain.example.com']));
    expect((await dev.json<Beta>([WEBSITE_V1BETA1, 'plain'])).spec).toMatchObject({
      hostnames: ['plain.example.com'],
      replicas: 1,
      image: 'nginx:1.27',
    });
    const refused = await dev.kubectl(['apply', '-f', '-'], beta('spaces', ['my shop']));
    expect(refused.code).toBe(1);
    // The validator sees the object as v1alpha1 (converted), so it speaks of spec.domain.
    expect(refused.stderr).toBe(
      'Error from server (Forbidden): error when creating "STDIN": admission webhook ' +
        `"${VALIDATING_WEBHOOK}" denied the request: spec.domain "my shop" is not a valid domain name: ` +
        'its label "my shop" is not lowercase letters, digits and \'-\' starting and ending with a letter or digit ' +
        '(for example hello.example.com)\n',
    );
  });
});
