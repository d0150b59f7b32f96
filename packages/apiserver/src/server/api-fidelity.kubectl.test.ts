import { describe, expect, it } from 'vitest';
import { useKubectlServer } from './kubectl-test-support.ts';

const { fails, ok } = useKubectlServer('fidelity-kubectl');

const POD = `apiVersion: v1
kind: Pod
metadata: { name: web }
spec:
  containers:
    - { name: app, image: "nginx:1.27" }
`;

describe('kubectl against kube-apiserver’s Secret, ConfigMap and Pod rules', () => {
  it('kubectl apply of a kubernetes.io/tls Secret without tls.key fails with the server’s field error', async () => {
    const stderr = await fails(['apply', '-f', '-'], {
      input: `apiVersion: v1
kind: Secret
metadata: { name: tls }
type: kubernetes.io/tls
stringData: { tls.crt: cert }
`,
    });
    expect(stderr).toContain('Secret "tls" is invalid: data[tls.key]: Required value');
  });

  it('kubectl apply of a ConfigMap with a bad key names data[<key>] and the config key rule', async () => {
    const stderr = await fails(['apply', '-f', '-'], {
      input: `apiVersion: v1
kind: ConfigMap
metadata: { name: cm }
data: { "bad key!": v }
`,
    });
    expect(stderr).toContain(
      `ConfigMap "cm" is invalid: data[bad key!]: Invalid value: "bad key!": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
    );
  });

  it('kubectl apply of a Pod shows the admission defaults, and adding a container is refused', async () => {
    await ok(['apply', '-f', '-'], { input: POD });
    const fields = await ok([
      'get',
      'pod',
      'web',
      '-o',
      'jsonpath={.spec.serviceAccountName} {.spec.priority} {.spec.enableServiceLinks} {.spec.tolerations[*].key} {.spec.containers[0].volumeMounts[0].mountPath}',
    ]);
    expect(fields).toBe(
      'default 0 true node.kubernetes.io/not-ready node.kubernetes.io/unreachable /var/run/secrets/kubernetes.io/serviceaccount',
    );
    await ok(['set', 'image', 'pod/web', 'app=nginx:1.28']);
    const stderr = await fails(['apply', '-f', '-'], {
      input: `${POD}    - { name: sidecar, image: "busybox:1.36" }\n`,
    });
    expect(stderr).toContain(
      'Pod "web" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers',
    );
  });
});

describe('kubectl against kube-apiserver’s encoding of Events', () => {
  it('kubectl get events -o json shows firstTimestamp: null and source: {} for an Event created through events.k8s.io/v1', async () => {
    await ok(['create', '-f', '-'], {
      input: `apiVersion: events.k8s.io/v1
kind: Event
metadata: { name: synced }
eventTime: "2026-11-26T10:00:00.000000Z"
reportingController: example.com/operator
reportingInstance: operator-0
action: Reconcile
reason: Synced
type: Normal
regarding: { kind: ConfigMap, namespace: default, name: settings, apiVersion: v1 }
note: synced
`,
    });
    const list = JSON.parse(await ok(['get', 'events', '-o', 'json'])) as {
      items: Record<string, unknown>[];
    };
    const event = list.items.find((item) => (item.metadata as { name: string }).name === 'synced');
    expect(event).toMatchObject({
      apiVersion: 'v1',
      firstTimestamp: null,
      lastTimestamp: null,
      source: {},
      eventTime: '2026-11-26T10:00:00.000000Z',
      reportingComponent: 'example.com/operator',
    });
  });
});
