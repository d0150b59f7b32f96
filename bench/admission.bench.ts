/**
 * Admission benchmark (issue 15): run with `npm run bench:admission` (see BENCHMARKS.md at the repo
 * root). This process holds the embedded API server (plain HTTP on 127.0.0.1 with a bearer token,
 * as in bench:apiserver) and the client (BENCH_CONCURRENCY, 8, creates in flight over keep-alive
 * connections). The webhooks (a WebhookServer from @converge/kube, HTTPS on 127.0.0.1 with its
 * generated CA) run twice: on this process's event loop, as `converge dev` runs an operator's
 * webhooks (and, as converge dev does, the API server is given the webhook server's in-process
 * dispatch, `localWebhooks`: its calls to it skip TLS and HTTP), and in a child process of their
 * own, as an operator deployed next to an API server runs them (over HTTPS). Times are epoch milliseconds (`performance.timeOrigin + now()`), comparable across
 * the two processes.
 *
 * A CRD (`widgets.bench.converge.dev`) has one `x-kubernetes-validations` rule on `spec`
 * (`self.replicas <= 10`). Each round runs, in an order rotating from round to round:
 *
 * - A: BENCH_CREATES (2 000) creates of a Widget with no webhook registered;
 * - B: the same creates with one MutatingWebhookConfiguration (a defaulter setting `spec.tier`)
 *   and one ValidatingWebhookConfiguration (always allows), both for CREATE of widgets, served in
 *   this process and called in process;
 * - C: the same as B with the webhooks served by the child process.
 *
 * The webhook configurations are installed before B and C and deleted after them; the created
 * Widgets are deleted after every phase (untimed) so all phases write into the same store. Figures
 * are medians over BENCH_ROUNDS (5) rounds, after one untimed warm-up of each phase: creates/s per
 * phase and the ratios B/A and C/A (goal: >= 50 % of A, judged for each); the per-create latency
 * added by admission (against A at p50 and p99, and half of it: per webhook call); and a breakdown
 * of one create: request sent → the defaulter runs, defaulter → validator runs (its response, the
 * patch, schema and CEL, the validator's request), validator → response received.
 *
 * Correctness (exit 1 when one fails): every create answers 201; in B and C every created Widget,
 * as answered and as listed afterwards, has the defaulted `spec.tier`, and each webhook of that
 * phase's process was called once per create and the other process's never; in A none has it and
 * no webhook is called; in every phase the CEL rule refuses a Widget with 20 replicas (422 with the
 * rule's message). A missed goal prints FAIL and exits 0.
 */
import { fork } from 'node:child_process';
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

/** When (epoch ms, `performance.timeOrigin + performance.now()`) each webhook saw each create, by name. */
interface Seen {
  readonly defaulted: Map<string, number>;
  readonly validated: Map<string, number>;
}

/** A running pair of webhooks (a defaulter and a validator), in this process or in another one. */
interface Hooks {
  readonly url: string;
  readonly caBundle: string;
  /** Forgets what the webhooks saw. */
  clear(): Promise<void>;
  /** What the webhooks saw since `clear`. */
  seen(): Promise<Seen>;
  /** CPU time (µs, user + system) used by the webhooks' process when it is not this one, else 0. */
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

/** Epoch milliseconds with sub-millisecond precision, comparable across processes of one machine. */
const now = (): number => performance.timeOrigin + performance.now();

async function serveHooks(
  seen: Seen,
): Promise<{ url: string; caBundle: string; server: WebhookServer; stop(): Promise<void> }> {
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    tls: { generate: { hosts: ['127.0.0.1'] } },
  });
  server.mutating<Widget>('/default', {
    default(object) {
      seen.defaulted.set(object.metadata.name ?? '', now());
      return { ...object, spec: { ...object.spec, tier: object.spec?.tier ?? 'standard' } };
    },
  });
  server.validating<Widget>('/validate', {
    validate(review: AdmissionRequest<Widget>) {
      seen.validated.set(review.name ?? '', now());
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
    server,
    stop: async () => {
      controller.abort();
      await started;
    },
  };
}

/** The webhooks on the API server's event loop, as `converge dev` runs an operator's webhooks. */
async function hooksInProcess(serving: (server: WebhookServer) => void): Promise<Hooks> {
  const seen: Seen = { defaulted: new Map(), validated: new Map() };
  const served = await serveHooks(seen);
  serving(served.server);
  return {
    ...served,
    clear: async () => {
      seen.defaulted.clear();
      seen.validated.clear();
    },
    seen: async () => seen,
    cpu: async () => 0,
  };
}

type ChildMessage =
  | { readonly type: 'listening'; readonly url: string; readonly caBundle: string }
  | { readonly type: 'seen'; readonly defaulted: [string, number][]; readonly validated: [string, number][] }
  | { readonly type: 'cleared' }
  | { readonly type: 'cpu'; readonly micros: number };

/** The webhooks in a process of their own, as an operator deployed next to an API server runs them. */
async function hooksInChild(): Promise<Hooks> {
  const child = fork(process.argv[1] as string, [], {
    execArgv: process.execArgv,
    env: { ...process.env, BENCH_ADMISSION_WEBHOOKS: '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = (type: ChildMessage['type']): Promise<ChildMessage> =>
    new Promise((resolve, reject) => {
      const onMessage = (message: ChildMessage): void => {
        if (message.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message);
      };
      const onExit = (code: number | null): void => reject(new Error(`webhook process exited (${code})`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const listening = (await next('listening')) as Extract<ChildMessage, { type: 'listening' }>;
  return {
    url: listening.url,
    caBundle: listening.caBundle,
    clear: async () => {
      const cleared = next('cleared');
      child.send({ type: 'clear' });
      await cleared;
    },
    seen: async () => {
      const answer = next('seen');
      child.send({ type: 'seen' });
      const seen = (await answer) as Extract<ChildMessage, { type: 'seen' }>;
      return { defaulted: new Map(seen.defaulted), validated: new Map(seen.validated) };
    },
    cpu: async () => {
      const answer = next('cpu');
      child.send({ type: 'cpu' });
      return ((await answer) as Extract<ChildMessage, { type: 'cpu' }>).micros;
    },
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'stop' });
      await exited;
    },
  };
}

/** The child process's side of {@link hooksInChild}. */
async function webhookProcess(): Promise<void> {
  const seen: Seen = { defaulted: new Map(), validated: new Map() };
  const served = await serveHooks(seen);
  process.on('message', (message: { type: string }) => {
    if (message.type === 'clear') {
      seen.defaulted.clear();
      seen.validated.clear();
      process.send?.({ type: 'cleared' });
    } else if (message.type === 'seen') {
      process.send?.({ type: 'seen', defaulted: [...seen.defaulted], validated: [...seen.validated] });
    } else if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send?.({ type: 'cpu', micros: user + system });
    } else if (message.type === 'stop') {
      void served.stop().then(() => process.exit(0));
    }
  });
  process.send?.({ type: 'listening', url: served.url, caBundle: served.caBundle });
}

// ---------------------------------------------------------------------------------------------
// One phase

interface Phase {
  readonly perSecond: number;
  /** CPU µs per create used by this process (API server and client; B: the webhooks too). */
  readonly serverCpu: number;
  /** CPU µs per create used by the webhooks' own process (C), else 0. */
  readonly hooksCpu: number;
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
  called: Hooks | undefined,
  all: readonly Hooks[],
): Promise<Phase> {
  const admitted = called !== undefined;
  for (const hooks of all) await hooks.clear();
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
      const at = now();
      sentAt[i] = at;
      const answer = await send('POST', WIDGETS, bodies[i]);
      const done = now();
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
  const hooksCpuBefore = called === undefined ? 0 : await called.cpu();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const ms = performance.now() - started;
  const cpuUsed = process.cpuUsage(cpuBefore);
  const hooksCpu = called === undefined ? 0 : (await called.cpu()) - hooksCpuBefore;

  for (const hooks of all) {
    const { defaulted, validated } = await hooks.seen();
    const expectedCalls = hooks === called ? count : 0;
    const where = hooks === all[0] ? 'in-process' : 'other-process';
    check(
      defaulted.size === expectedCalls,
      `${prefix}: ${where} defaulter called for ${defaulted.size} objects`,
    );
    check(
      validated.size === expectedCalls,
      `${prefix}: ${where} validator called for ${validated.size} objects`,
    );
  }
  const seen = called === undefined ? undefined : await called.seen();
  const toDefault: number[] = [];
  const toValidate: number[] = [];
  const toAnswer: number[] = [];
  if (seen !== undefined) {
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
  return {
    perSecond: (count / ms) * 1000,
    serverCpu: (cpuUsed.user + cpuUsed.system) / count,
    hooksCpu: hooksCpu / count,
    latencies,
    toDefault,
    toValidate,
    toAnswer,
  };
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
  let inProcess: WebhookServer | undefined;
  // As converge dev wires its webhook server: calls to it are answered in process (no TLS, no HTTP).
  const server = createApiServer({
    tls: false,
    token,
    localWebhooks: { dispatcher: (u, ca, name) => inProcess?.localDispatcher(u, ca, name) },
  });
  const { url } = await server.listen();
  const send = client(Number(new URL(url).port), token);
  const local = await hooksInProcess((s) => {
    inProcess = s;
  });
  const remote = await hooksInChild();
  const all = [local, remote];
  const loadBefore = os.loadavg();
  const a: Phase[] = [];
  const b: Phase[] = [];
  const c: Phase[] = [];
  try {
    const created = await send('POST', CRDS, JSON.stringify(crd));
    if (created.status !== 201) throw new Error(`CRD: ${created.status} ${created.text}`);

    const run = async (prefix: string, count: number, hooks: Hooks | undefined): Promise<Phase> => {
      if (hooks !== undefined) await install(send, hooks);
      try {
        const result = await phase(send, prefix, count, hooks, all);
        await refusesInvalid(send, `${prefix}-invalid`);
        return result;
      } finally {
        if (hooks !== undefined) await uninstall(send);
      }
    };
    const phases: [Phase[], string, Hooks | undefined][] = [
      [a, 'a', undefined],
      [b, 'b', local],
      [c, 'c', remote],
    ];
    for (const [, name, hooks] of phases) await run(`warm-${name}`, WARMUP, hooks);
    for (let round = 0; round < ROUNDS; round++) {
      // A different order each round, so no phase always runs on a warmer process.
      const order = [...phases.slice(round % 3), ...phases.slice(0, round % 3)];
      for (const [into, name, hooks] of round % 2 === 0 ? order : order.reverse()) {
        into.push(await run(`${name}${round}`, CREATES, hooks));
      }
    }
  } finally {
    await local.stop();
    await remote.stop();
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
    `${CREATES} creates per phase, ${CONCURRENCY} in flight, ${ROUNDS} rounds (phase order rotating), median (min–max) over rounds.`,
  );
  console.log('');

  const p = (phases: readonly Phase[], q: number): number[] => phases.map((x) => quantile(x.latencies, q));
  const rate = (phases: readonly Phase[]): string =>
    show(
      phases.map((x) => x.perSecond),
      0,
    );
  table(
    ['phase', 'creates/s', 'latency p50 (ms)', 'latency p99 (ms)'],
    [
      ['A: no admission webhooks (CEL rule only)', rate(a), show(p(a, 0.5), 2), show(p(a, 0.99), 2)],
      [
        'B: 1 mutating + 1 validating webhook, in the API server process (called in process)',
        rate(b),
        show(p(b, 0.5), 2),
        show(p(b, 0.99), 2),
      ],
      ['C: the same webhooks in a process of their own', rate(c), show(p(c, 0.5), 2), show(p(c, 0.99), 2)],
    ],
  );
  const cpu = (phases: readonly Phase[], pick: (x: Phase) => number): string => show(phases.map(pick), 0);
  table(
    [
      'CPU per create (µs, user + system; less sensitive to other load than creates/s)',
      'API server process',
      'webhook process',
    ],
    [
      ['A', cpu(a, (x) => x.serverCpu), '–'],
      ['B (webhooks in the API server process)', cpu(b, (x) => x.serverCpu), '(included)'],
      ['C', cpu(c, (x) => x.serverCpu), cpu(c, (x) => x.hooksCpu)],
    ],
  );
  const added = (phases: readonly Phase[], q: number, per = 1): string =>
    show(
      a.map(
        (_, i) =>
          (quantile((phases[i] as Phase).latencies, q) - quantile((a[i] as Phase).latencies, q)) / per,
      ),
      2,
    );
  table(
    ['added by admission (against A, per round)', 'p50 (ms)', 'p99 (ms)'],
    [
      ['B: per create (2 webhook calls)', added(b, 0.5), added(b, 0.99)],
      ['B: per webhook call (half)', added(b, 0.5, 2), added(b, 0.99, 2)],
      ['C: per create (2 webhook calls)', added(c, 0.5), added(c, 0.99)],
      ['C: per webhook call (half)', added(c, 0.5, 2), added(c, 0.99, 2)],
    ],
  );
  const segment = (phases: readonly Phase[], pick: (p: Phase) => number[], q: number): string =>
    show(
      phases.map((x) => quantile(pick(x), q)),
      2,
    );
  table(
    [
      'one create, B (one clock) / C (epoch clocks of two processes)',
      'B p50 (ms)',
      'B p99 (ms)',
      'C p50 (ms)',
      'C p99 (ms)',
    ],
    (
      [
        ['sent → defaulter runs', (x: Phase) => x.toDefault],
        ['defaulter → validator runs', (x: Phase) => x.toValidate],
        ['validator → answer received', (x: Phase) => x.toAnswer],
      ] as const
    ).map(([label, pick]) => [
      label,
      segment(b, pick, 0.5),
      segment(b, pick, 0.99),
      segment(c, pick, 0.5),
      segment(c, pick, 0.99),
    ]),
  );

  const ratios = (phases: readonly Phase[]): number[] =>
    a.map((x, i) => (phases[i] as Phase).perSecond / x.perSecond);
  for (const [phases, text] of [
    [c, 'webhooks in their own process (as deployed): C'],
    [b, 'webhooks in the API server process (converge dev): B'],
  ] as const) {
    const r = ratios(phases);
    verdict(
      median(r) >= GOAL_RATIO,
      `admission throughput, ${text} at ${fmt(median(r) * 100)} % of A (goal >= ${GOAL_RATIO * 100} %; per round ${r.map((x) => fmt(x * 100)).join(', ')})`,
    );
  }
  for (const line of verdicts) console.log(line);
  console.log('');
  if (correctness.length > 0) {
    console.log('Correctness checks FAILED:');
    for (const problem of correctness) console.log(`  ${problem}`);
    process.exitCode = 1;
  } else {
    console.log(
      "Correctness: every create 201; B and C: every widget defaulted (answer and list), each webhook (of the phase's process) called once per create, the other one never; A: none defaulted, no calls; the CEL rule refused 20 replicas in every phase.",
    );
  }
}

if (process.env.BENCH_ADMISSION_WEBHOOKS === '1') await webhookProcess();
else await main();
