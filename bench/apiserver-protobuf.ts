/**
 * bench:apiserver, part 4 (issue 18): built-in kinds from the Kubernetes 1.32 definitions.
 * - LIST of N Pods as protobuf against JSON, in the same run, alternating.
 * - Pod creates with strict validation (`fieldValidation=Strict`: the schema walk at every depth,
 *   types, formats) against creates without it. The server always walks built-in bodies (Ignore
 *   still drops unknown fields, as kube-apiserver does), so "without" is the measured Strict rate
 *   minus the walk's own in-process cost per Pod: rate_off = 1 / (1/rate_strict − walk).
 */
import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, ResourceType } from '@converge/runtime';
import { checkBuiltinObject } from '../packages/apiserver/src/builtin/index.ts';
import { decodeProtobufObject } from '../packages/apiserver/src/protobuf/index.ts';
import { collectGarbage, fmt, median } from './harness.ts';

const GOAL_STRICT_RATIO = 0.7;

interface Store {
  create(type: ResourceType, object: KubeObject): Promise<KubeObject>;
}

/** A Pod of a typical controller-made shape (~1.3 KB of JSON once stored). */
export function benchPod(i: number, namespace: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `pod-${i.toString().padStart(6, '0')}`,
      namespace,
      labels: { app: `app-${i % 50}`, 'pod-template-hash': '5d8f7c9b4' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z' },
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'nginx:1.27',
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
          env: [{ name: 'MODE', value: 'production' }],
          readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 5 },
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
    },
    status: { phase: 'Running', podIP: `10.0.${(i >> 8) & 255}.${i & 255}` },
  };
}

async function timed(url: string, accept: string, token: string): Promise<{ ms: number; bytes: Uint8Array }> {
  collectGarbage(2);
  // A connection of its own: client and server share this process's event loop, so after the bench
  // blocks it (parsing 84 MB of JSON) the server's keep-alive timer and the client's fire together and
  // a reused idle connection can be closed under the next request (ECONNRESET at 100 000 Pods).
  const started = performance.now();
  const response = await fetch(url, {
    headers: { accept, authorization: `Bearer ${token}`, connection: 'close' },
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`LIST ${accept}: ${response.status}`);
  return { ms: performance.now() - started, bytes };
}

/** Runs part 4; `check` records correctness failures, `verdict` goal lines. */
export async function benchPods(options: {
  readonly store: Store;
  readonly pods: ResourceType;
  readonly url: string;
  readonly token: string;
  readonly count: number;
  readonly runs: number;
  readonly creates: number;
  readonly check: (ok: boolean, what: string) => void;
  readonly verdict: (ok: boolean, text: string) => void;
  readonly table: (header: readonly string[], rows: readonly (readonly string[])[]) => void;
}): Promise<void> {
  const { store, pods, url, token, count, runs, check, verdict, table } = options;
  let started = performance.now();
  for (let i = 0; i < count; i++)
    await store.create(pods, benchPod(i, 'bench-pods') as unknown as KubeObject);
  console.log(
    `${count.toLocaleString('en-US')} Pods stored in ${fmt((performance.now() - started) / 1000, 2)} s`,
  );

  const path = `${url}/api/v1/namespaces/bench-pods/pods`;
  const json = await timed(path, 'application/json', token);
  const proto = await timed(path, 'application/vnd.kubernetes.protobuf', token);
  const fromJson = JSON.parse(new TextDecoder().decode(json.bytes)) as { items: unknown[] };
  const fromProto = decodeProtobufObject(proto.bytes).object as unknown as { items: unknown[] };
  check(fromJson.items.length === count, `JSON LIST: ${fromJson.items.length} Pods, expected ${count}`);
  check(fromProto.items.length === count, `protobuf LIST: ${fromProto.items.length} Pods, expected ${count}`);
  check(
    // list items carry no apiVersion/kind in protobuf (client-go sets them from the list)
    isDeepStrictEqual(
      fromProto.items[count - 1],
      Object.fromEntries(
        Object.entries(fromJson.items[count - 1] as object).filter(
          ([k]) => k !== 'apiVersion' && k !== 'kind',
        ),
      ),
    ),
    'the last Pod decoded from protobuf differs from its JSON',
  );
  const jsonMs: number[] = [];
  const protoMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    const order = run % 2 === 0 ? ['json', 'proto'] : ['proto', 'json'];
    for (const which of order) {
      if (which === 'json') jsonMs.push((await timed(path, 'application/json', token)).ms);
      else protoMs.push((await timed(path, 'application/vnd.kubernetes.protobuf', token)).ms);
    }
  }
  const mb = (bytes: number, ms: readonly number[]): string => fmt(bytes / 1e6 / (median(ms) / 1000));
  table(
    ['figure', 'JSON', 'protobuf'],
    [
      ['body, MB', fmt(json.bytes.length / 1e6, 2), fmt(proto.bytes.length / 1e6, 2)],
      ['LIST time, ms (median)', fmt(median(jsonMs)), fmt(median(protoMs))],
      [
        'LIST time, ms (min–max)',
        `${fmt(Math.min(...jsonMs))}–${fmt(Math.max(...jsonMs))}`,
        `${fmt(Math.min(...protoMs))}–${fmt(Math.max(...protoMs))}`,
      ],
      ['MB/s', mb(json.bytes.length, jsonMs), mb(proto.bytes.length, protoMs)],
      ['Pods/s (thousands)', fmt(count / median(jsonMs)), fmt(count / median(protoMs))],
    ],
  );
  console.log(
    `protobuf LIST: ${fmt((median(jsonMs) / median(protoMs)) * 100)} % of JSON's speed, ${fmt((proto.bytes.length / json.bytes.length) * 100)} % of its bytes (no goal set)\n`,
  );

  // Creates with strict validation: sequential POSTs over one keep-alive connection.
  const create = async (prefix: string, validation: string): Promise<number> => {
    collectGarbage(2);
    const begin = performance.now();
    for (let i = 0; i < options.creates; i++) {
      const body = benchPod(i, 'bench-pods');
      (body.metadata as { name: string }).name = `${prefix}-${i}`;
      const response = await fetch(`${url}/api/v1/namespaces/bench-pods/pods?fieldValidation=${validation}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      await response.arrayBuffer();
      check(response.status === 201, `create ${prefix}-${i}: ${response.status}`);
    }
    return options.creates / ((performance.now() - begin) / 1000);
  };
  await create('warm', 'Strict');
  const strictRates: number[] = [];
  const ignoreRates: number[] = [];
  for (let run = 0; run < runs; run++) {
    if (run % 2 === 1) ignoreRates.push(await create(`ignore${run}`, 'Ignore'));
    strictRates.push(await create(`strict${run}`, 'Strict'));
    if (run % 2 === 0) ignoreRates.push(await create(`ignore${run}`, 'Ignore'));
  }
  // The walk's own cost per Pod, in process (what "validation off" would save).
  const samples = Array.from({ length: 2000 }, (_, i) => benchPod(i, 'bench-pods'));
  started = performance.now();
  for (const pod of samples) checkBuiltinObject('io.k8s.api.core.v1.Pod', pod);
  const walkMs = (performance.now() - started) / samples.length;
  const strict = median(strictRates);
  const off = 1 / (1 / strict - walkMs / 1000);
  table(
    ['figure', 'creates/s'],
    [
      ['fieldValidation=Strict (median)', fmt(strict, 0)],
      ['fieldValidation=Ignore (median; still walks, drops unknown fields)', fmt(median(ignoreRates), 0)],
      [`validation off (Strict rate minus the walk: ${fmt(walkMs * 1000, 1)} µs per Pod)`, fmt(off, 0)],
    ],
  );
  verdict(
    strict / off >= GOAL_STRICT_RATIO,
    `Pod creates with strict validation >= ${GOAL_STRICT_RATIO * 100} % of the rate without it (${fmt((strict / off) * 100)} %)`,
  );
}
