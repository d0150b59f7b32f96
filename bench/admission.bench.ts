/**
 * Admission benchmark (issue 15): run with `npm run bench:admission` (see BENCHMARKS.md at the repo
 * root). One process holds the embedded API server (plain HTTP on 127.0.0.1 with a bearer token,
 * as in bench:apiserver), a WebhookServer from @converge/kube (HTTPS on 127.0.0.1 with its
 * generated CA) and the client (BENCH_CONCURRENCY, 8, creates in flight over keep-alive
 * connections), so every time below is read on one clock.
 *
 * A CRD (`widgets.bench.converge.dev`) has one `x-kubernetes-validations` rule on `spec`
 * (`self.replicas <= 10`). Each round runs, in alternating order:
 *
 * - A: BENCH_CREATES (2 000) creates of a Widget with no webhook registered;
 * - B: the same creates with one MutatingWebhookConfiguration (a defaulter setting `spec.tier`)
 *   and one ValidatingWebhookConfiguration (always allows), both for CREATE of widgets.
 *
 * The webhook configurations are installed before B and deleted after it; the created Widgets are
 * deleted after every phase (untimed) so both phases write into the same store. Figures are
 * medians over BENCH_ROUNDS (5) rounds, after one untimed warm-up round of each phase:
 * creates/s for A and B and their ratio (goal: B >= 50 % of A); the per-create latency added by
 * admission (B − A at p50 and p99, and half of it: per webhook call); and a breakdown of B on the
 * same clock: request sent → the defaulter runs, defaulter → validator runs (its response, the
 * patch, schema and CEL, the validator's request), validator → response received.
 *
 * Correctness (exit 1 when one fails): every create answers 201; in B every created Widget, as
 * answered and as listed afterwards, has the defaulted `spec.tier`, and each webhook was called once
 * per create; in A none has it and no webhook is called; in both phases the CEL rule refuses a
 * Widget with 20 replicas (422 with the rule's message). A missed goal prints FAIL and exits 0.
 */
import { Agent, request } from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { type AdmissionRequest, allowed, WebhookServer } from '@converge/kube';
import type { KubeObject } from '@converge/runtime';
import { createApiServer } from '../packages/apiserver/src/server/api-server.ts';
import { collectGarbage, fmt, median, positiveInt } from './harness.ts';

const CREATES = positiveInt('BENCH_CREATES', 2_000);
const ROUNDS = positiveInt('BENCH_ROUNDS', 5);
const CONCURRENCY = positiveInt('BENCH_CONCURRENCY', 8);
const WARMUP = Math.min(CREATES, 500);

const GOAL_RATIO = 0.5;
const GROUP = 'bench.converge.dev';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const WIDGETS = `/apis/${GROUP}/v1/namespaces/default/widgets`;
const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const RULE_MESSAGE = 'replicas must be at most 10';

const correctness: string[] = [];
const verdicts: string[] = [];

function check(ok: boolean, what: string): void {
  if (!ok && correctness.length < 20) correctness.push(what);
}

function verdict(ok: boolean, text: string): void {
  verdicts.push(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
}

function quantile(values: readonly number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? Number.NaN;
}

/** `median (min–max)` */
function show(values: readonly number[], digits = 1): string {
  return `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)})`;
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): void {
  console.log(row(header));
  console.log(row(header.map(() => '---')));
  for (const r of rows) console.log(row(r));
  console.log('');
}

// ---------------------------------------------------------------------------------------------
// HTTP to the API server

interface Answer {
  readonly status: number;
  readonly text: string;
}

function client(
  port: number,
  token: string,
): (method: string, path: string, body?: string) => Promise<Answer> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  return (method, path, body) =>
    new Promise<Answer>((resolve, reject) => {
      const headers: Record<string, string> = {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
      };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(Buffer.byteLength(body));
      }
      const req = request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => parts.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
}

type Send = ReturnType<typeof client>;

function widget(name: string, replicas: number): string {
  return JSON.stringify({
    apiVersion: `${GROUP}/v1`,
    kind: 'Widget',
    metadata: { name, labels: { bench: 'admission' } },
    spec: { replicas, image: 'registry.example/widget:1.0' },
  });
}

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['replicas'],
                properties: {
                  replicas: { type: 'integer', minimum: 0 },
                  image: { type: 'string' },
                  tier: { type: 'string' },
                },
                'x-kubernetes-validations': [{ rule: 'self.replicas <= 10', message: RULE_MESSAGE }],
              },
            },
          },
        },
      },
    ],
  },
};

function configuration(
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration',
  name: string,
  url: string,
  caBundle: string,
): string {
  return JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name },
    webhooks: [
      {
        name: `${name}.${GROUP}`,
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        failurePolicy: 'Fail',
        rules: [{ operations: ['CREATE'], apiGroups: [GROUP], apiVersions: ['v1'], resources: ['widgets'] }],
        clientConfig: { url, caBundle },
      },
    ],
  });
}

// ---------------------------------------------------------------------------------------------
// The webhooks

type Widget = KubeObject & { spec?: { replicas?: number; image?: string; tier?: string } };

/** When (performance.now()) each webhook saw each create, by object name. */
interface Seen {
  readonly defaulted: Map<string, number>;
  readonly validated: Map<string, number>;
}

async function startHooks(seen: Seen): Promise<{ url: string; caBundle: string; stop(): Promise<void> }> {
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    tls: { generate: { hosts: ['127.0.0.1'] } },
  });
  server.mutating<Widget>('/default', {
    default(object) {
      seen.defaulted.set(object.metadata.name ?? '', performance.now());
      return { ...object, spec: { ...object.spec, tier: object.spec?.tier ?? 'standard' } };
    },
  });
  server.validating<Widget>('/validate', {
    validate(review: AdmissionRequest<Widget>) {
      seen.validated.set(review.name ?? '', performance.now());
      return allowed();
    },
  });
  const controller = new AbortController();
  const started = server.start(controller.signal);
  started.catch(() => undefined);
  const { url } = await server.listening();
  return {
    url,
    caBundle: Buffer.from(server.caBundle ?? '').toString('base64'),
    stop: async () => {
      controller.abort();
      await started;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// One phase

interface Phase {
  readonly perSecond: number;
  /** Per-create latency, ms, in send order. */
  readonly latencies: number[];
  /** B only: sent → defaulter, defaulter → validator, validator → answer (ms). */
  readonly toDefault: number[];
  readonly toValidate: number[];
  readonly toAnswer: number[];
}

async function phase(
  send: Send,
  prefix: string,
  count: number,
  admitted: boolean,
  seen: Seen,
): Promise<Phase> {
  seen.defaulted.clear();
  seen.validated.clear();
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const bodies = names.map((name, i) => widget(name, i % 11));
  const latencies = new Array<number>(count).fill(0);
  const sentAt = new Array<number>(count).fill(0);
  const answeredAt = new Array<number>(count).fill(0);
  let next = 0;
  collectGarbage(2);
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const at = performance.now();
      sentAt[i] = at;
      const answer = await send('POST', WIDGETS, bodies[i]);
      const done = performance.now();
      answeredAt[i] = done;
      latencies[i] = done - at;
      check(
        answer.status === 201,
        `${prefix}: create ${i} answered ${answer.status} ${answer.text.slice(0, 300)}`,
      );
      if (answer.status !== 201) continue;
      const tier = (JSON.parse(answer.text) as Widget).spec?.tier;
      check(
        admitted ? tier === 'standard' : tier === undefined,
        `${prefix}: create ${i} answered spec.tier ${String(tier)}`,
      );
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const ms = performance.now() - started;

  const expectedCalls = admitted ? count : 0;
  check(
    seen.defaulted.size === expectedCalls,
    `${prefix}: defaulter called for ${seen.defaulted.size} objects`,
  );
  check(
    seen.validated.size === expectedCalls,
    `${prefix}: validator called for ${seen.validated.size} objects`,
  );
  const toDefault: number[] = [];
  const toValidate: number[] = [];
  const toAnswer: number[] = [];
  if (admitted) {
    names.forEach((name, i) => {
      const d = seen.defaulted.get(name);
      const v = seen.validated.get(name);
      if (d === undefined || v === undefined) return;
      toDefault.push(d - (sentAt[i] as number));
      toValidate.push(v - d);
      toAnswer.push((answeredAt[i] as number) - v);
    });
  }

  // Listed afterwards (untimed): every object is there, defaulted exactly when admitted.
  const listed = await send('GET', `${WIDGETS}?labelSelector=bench%3Dadmission`);
  const items = (JSON.parse(listed.text) as { items?: Widget[] }).items ?? [];
  const ours = items.filter((item) => item.metadata.name?.startsWith(`${prefix}-`));
  check(ours.length === count, `${prefix}: listed ${ours.length} of ${count} widgets`);
  const wrong = ours.filter((item) =>
    admitted ? item.spec?.tier !== 'standard' : item.spec?.tier !== undefined,
  );
  check(wrong.length === 0, `${prefix}: ${wrong.length} listed widgets with the wrong spec.tier`);
  const cleared = await send('DELETE', WIDGETS);
  check(cleared.status === 200, `${prefix}: delete collection answered ${cleared.status}`);
  return { perSecond: (count / ms) * 1000, latencies, toDefault, toValidate, toAnswer };
}

/** The CEL rule refuses 20 replicas with its message, whatever webhooks are registered. */
async function refusesInvalid(send: Send, name: string): Promise<void> {
  const answer = await send('POST', WIDGETS, widget(name, 20));
  check(
    answer.status === 422 && answer.text.includes(RULE_MESSAGE),
    `${name}: 20 replicas answered ${answer.status} ${answer.text.slice(0, 300)}`,
  );
}

async function install(send: Send, hooks: { url: string; caBundle: string }): Promise<void> {
  const m = await send(
    'POST',
    MWC,
    configuration('MutatingWebhookConfiguration', 'defaulter', `${hooks.url}/default`, hooks.caBundle),
  );
  const v = await send(
    'POST',
    VWC,
    configuration('ValidatingWebhookConfiguration', 'validator', `${hooks.url}/validate`, hooks.caBundle),
  );
  if (m.status !== 201 || v.status !== 201) throw new Error(`webhook configurations: ${m.text} ${v.text}`);
}

async function uninstall(send: Send): Promise<void> {
  const m = await send('DELETE', `${MWC}/defaulter`);
  const v = await send('DELETE', `${VWC}/validator`);
  if (m.status !== 200 || v.status !== 200) throw new Error(`webhook configurations: ${m.text} ${v.text}`);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const token = 'bench-admission';
  const server = createApiServer({ tls: false, token });
  const { url } = await server.listen();
  const send = client(Number(new URL(url).port), token);
  const seen: Seen = { defaulted: new Map(), validated: new Map() };
  const hooks = await startHooks(seen);
  const loadBefore = os.loadavg();
  const a: Phase[] = [];
  const b: Phase[] = [];
  try {
    const created = await send('POST', CRDS, JSON.stringify(crd));
    if (created.status !== 201) throw new Error(`CRD: ${created.status} ${created.text}`);

    const runA = async (prefix: string, count: number): Promise<Phase> => {
      const result = await phase(send, prefix, count, false, seen);
      await refusesInvalid(send, `${prefix}-invalid`);
      return result;
    };
    const runB = async (prefix: string, count: number): Promise<Phase> => {
      await install(send, hooks);
      try {
        const result = await phase(send, prefix, count, true, seen);
        await refusesInvalid(send, `${prefix}-invalid`);
        return result;
      } finally {
        await uninstall(send);
      }
    };

    await runA('warm-a', WARMUP);
    await runB('warm-b', WARMUP);
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating order, so neither phase always runs on a warmer process.
      if (round % 2 === 0) {
        a.push(await runA(`a${round}`, CREATES));
        b.push(await runB(`b${round}`, CREATES));
      } else {
        b.push(await runB(`b${round}`, CREATES));
        a.push(await runA(`a${round}`, CREATES));
      }
    }
  } finally {
    await hooks.stop();
    await server.close();
  }
  const loadAfter = os.loadavg();

  const cpus = os.cpus();
  console.log(`# bench:admission`);
  console.log('');
  console.log(
    `Node ${process.version}, ${cpus.length} CPUs (${cpus[0]?.model ?? 'unknown'}), load average before ${loadBefore.map((l) => l.toFixed(2)).join(' / ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' / ')}.`,
  );
  console.log(
    `${CREATES} creates per phase, ${CONCURRENCY} in flight, ${ROUNDS} rounds (A/B alternating), median (min–max) over rounds.`,
  );
  console.log('');

  const ratios = a.map((x, i) => (b[i] as Phase).perSecond / x.perSecond);
  const pA = (q: number): number[] => a.map((x) => quantile(x.latencies, q));
  const pB = (q: number): number[] => b.map((x) => quantile(x.latencies, q));
  const added = (q: number): number[] =>
    a.map((_, i) => quantile((b[i] as Phase).latencies, q) - quantile((a[i] as Phase).latencies, q));
  table(
    ['phase', 'creates/s', 'latency p50 (ms)', 'latency p99 (ms)'],
    [
      [
        'A: no admission webhooks (CEL rule only)',
        show(
          a.map((x) => x.perSecond),
          0,
        ),
        show(pA(0.5), 2),
        show(pA(0.99), 2),
      ],
      [
        'B: 1 mutating + 1 validating webhook',
        show(
          b.map((x) => x.perSecond),
          0,
        ),
        show(pB(0.5), 2),
        show(pB(0.99), 2),
      ],
    ],
  );
  table(
    ['added by admission (B − A, per round)', 'p50 (ms)', 'p99 (ms)'],
    [
      ['per create (2 webhook calls)', show(added(0.5), 2), show(added(0.99), 2)],
      [
        'per webhook call (half)',
        show(
          added(0.5).map((x) => x / 2),
          2,
        ),
        show(
          added(0.99).map((x) => x / 2),
          2,
        ),
      ],
    ],
  );
  const segment = (pick: (p: Phase) => number[], q: number): string =>
    show(
      b.map((p) => quantile(pick(p), q)),
      2,
    );
  table(
    ['B, one create on one clock', 'p50 (ms)', 'p99 (ms)'],
    [
      ['sent → defaulter runs', segment((p) => p.toDefault, 0.5), segment((p) => p.toDefault, 0.99)],
      ['defaulter → validator runs', segment((p) => p.toValidate, 0.5), segment((p) => p.toValidate, 0.99)],
      ['validator → answer received', segment((p) => p.toAnswer, 0.5), segment((p) => p.toAnswer, 0.99)],
    ],
  );

  const ratio = median(ratios);
  verdict(
    ratio >= GOAL_RATIO,
    `admission throughput: B at ${fmt(ratio * 100)} % of A (goal >= ${GOAL_RATIO * 100} %; per round ${ratios.map((r) => fmt(r * 100)).join(', ')})`,
  );
  for (const line of verdicts) console.log(line);
  console.log('');
  if (correctness.length > 0) {
    console.log('Correctness checks FAILED:');
    for (const problem of correctness) console.log(`  ${problem}`);
    process.exitCode = 1;
  } else {
    console.log(
      'Correctness: every create 201; B: every widget defaulted (answer and list), each webhook called once per create; A: none defaulted, no calls; the CEL rule refused 20 replicas in both phases.',
    );
  }
}

await main();
