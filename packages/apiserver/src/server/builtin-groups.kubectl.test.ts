import { describe, expect, it } from 'vitest';
import { useKubectlServer } from './kubectl-test-support.ts';

const { fails, kubectl, ok } = useKubectlServer('groups-kubectl');

const MANIFESTS = `apiVersion: v1
kind: ServiceAccount
metadata: { name: op, labels: { app: op } }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: op, labels: { app: op } }
rules:
  - { apiGroups: [""], resources: [configmaps], verbs: [get, list, watch] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: op, labels: { app: op } }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: op }
subjects: [{ kind: ServiceAccount, name: op }]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent, labels: { app: op } }
spec:
  selector: { matchLabels: { app: agent } }
  template:
    metadata: { labels: { app: agent } }
    spec: { containers: [{ name: agent, image: "busybox:1.36" }] }
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: op, labels: { app: op } }
spec: { minAvailable: 1, selector: { matchLabels: { app: agent } } }
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: op, labels: { app: op } }
spec: { podSelector: { matchLabels: { app: agent } } }
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data, labels: { app: op } }
spec:
  accessModes: [ReadWriteOnce]
  resources: { requests: { storage: 1Gi } }
`;

describe('real kubectl against every common group', () => {
  it('kubectl api-resources lists the groups with short names', async () => {
    const out = await ok(['api-resources']);
    for (const line of [
      /nodes\s+no\s+v1\s+false\s+Node/,
      /persistentvolumeclaims\s+pvc\s+v1\s+true\s+PersistentVolumeClaim/,
      /replicationcontrollers\s+rc\s+v1\s+true\s+ReplicationController/,
      /daemonsets\s+ds\s+apps\/v1\s+true\s+DaemonSet/,
      /horizontalpodautoscalers\s+hpa\s+autoscaling\/v2\s+true\s+HorizontalPodAutoscaler/,
      /cronjobs\s+cj\s+batch\/v1\s+true\s+CronJob/,
      /certificatesigningrequests\s+csr\s+certificates\.k8s\.io\/v1\s+false\s+CertificateSigningRequest/,
      /endpointslices\s+discovery\.k8s\.io\/v1\s+true\s+EndpointSlice/,
      /ingresses\s+ing\s+networking\.k8s\.io\/v1\s+true\s+Ingress/,
      /poddisruptionbudgets\s+pdb\s+policy\/v1\s+true\s+PodDisruptionBudget/,
      /clusterroles\s+rbac\.authorization\.k8s\.io\/v1\s+false\s+ClusterRole/,
      /priorityclasses\s+pc\s+scheduling\.k8s\.io\/v1\s+false\s+PriorityClass/,
      /storageclasses\s+sc\s+storage\.k8s\.io\/v1\s+false\s+StorageClass/,
      /runtimeclasses\s+node\.k8s\.io\/v1\s+false\s+RuntimeClass/,
    ])
      expect(out).toMatch(line);
  });

  it('kubectl get cs shows the store as etcd-0, Healthy; componentstatuses are read-only', async () => {
    expect(await ok(['get', 'cs'])).toMatch(/NAME\s+STATUS\s+MESSAGE\s+ERROR\netcd-0\s+Healthy\s+ok/);
    const stderr = await fails(['create', '-f', '-'], {
      input: 'apiVersion: v1\nkind: ComponentStatus\nmetadata: { name: mine }\n',
    });
    expect(stderr).toContain('MethodNotAllowed');
  });

  it('kubectl get nodes answers (no nodes yet), then shows a registered node', async () => {
    expect((await kubectl(['get', 'nodes'])).stderr).toContain('No resources found');
    await ok(['apply', '-f', '-'], {
      input:
        'apiVersion: v1\nkind: Node\nmetadata: { name: worker-1, labels: { node-role.kubernetes.io/worker: "" } }\n',
    });
    expect(await ok(['get', 'nodes'])).toMatch(
      /NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\nworker-1\s+Unknown\s+worker\s+/,
    );
    // a kubelet reports through /status
    const status =
      '{"status":{"conditions":[{"type":"Ready","status":"True"}],"nodeInfo":{"kubeletVersion":"v1.32.4"}}}';
    await ok(['patch', 'node', 'worker-1', '--subresource=status', '-p', status]);
    expect(await ok(['get', 'nodes'])).toMatch(/worker-1\s+Ready\s+worker\s+\S+\s+v1\.32\.4/);
  });

  it('the kubernetes Service, its Endpoints, and per namespace the default ServiceAccount and kube-root-ca.crt', async () => {
    expect(await ok(['get', 'svc', 'kubernetes'])).toMatch(
      /kubernetes\s+ClusterIP\s+10\.96\.0\.1\s+<none>\s+443\/TCP/,
    );
    expect(await ok(['get', 'endpoints', 'kubernetes'])).toMatch(/kubernetes\s+127\.0\.0\.1:\d+/);
    await ok(['create', 'namespace', 'new-ns']);
    let sa = await kubectl(['get', 'sa', 'default', '-n', 'new-ns']);
    for (let i = 0; i < 20 && sa.code !== 0; i++)
      sa = await kubectl(['get', 'sa', 'default', '-n', 'new-ns']);
    expect(sa.stdout).toMatch(/default\s+0\s+/);
    expect(await ok(['get', 'cm', 'kube-root-ca.crt', '-o', 'jsonpath={.data.ca\\.crt}'])).toContain(
      'BEGIN CERTIFICATE',
    );
  });

  it('kubectl create for the generator kinds', async () => {
    const created: [string[], string][] = [
      [
        ['create', 'role', 'reader', '--verb=get,list', '--resource=pods'],
        'role.rbac.authorization.k8s.io/reader created',
      ],
      [
        ['create', 'rolebinding', 'reader', '--role=reader', '--user=jane'],
        'rolebinding.rbac.authorization.k8s.io/reader created',
      ],
      [
        ['create', 'clusterrole', 'cr', '--verb=get', '--resource=nodes'],
        'clusterrole.rbac.authorization.k8s.io/cr created',
      ],
      [
        ['create', 'clusterrolebinding', 'crb', '--clusterrole=cr', '--group=ops'],
        'clusterrolebinding.rbac.authorization.k8s.io/crb created',
      ],
      [['create', 'ingress', 'web', '--rule=example.com/=web:80'], 'ingress.networking.k8s.io/web created'],
      [
        ['create', 'pdb', 'web', '--selector=app=web', '--min-available=1'],
        'poddisruptionbudget.policy/web created',
      ],
      [['create', 'priorityclass', 'high', '--value=1000'], 'priorityclass.scheduling.k8s.io/high created'],
      [
        ['create', 'cronjob', 'nightly', '--image=busybox', '--schedule=0 3 * * *'],
        'cronjob.batch/nightly created',
      ],
    ];
    for (const [args, line] of created) expect(await ok(args)).toContain(line);
    expect(await ok(['get', 'rolebinding', 'reader', '-o', 'wide'])).toMatch(
      /reader\s+Role\/reader\s+\S+\s+jane/,
    );
    expect(await ok(['get', 'ingress', 'web'])).toMatch(/web\s+<none>\s+example\.com\s+80\s+/);
    expect(await ok(['get', 'pdb', 'web'])).toMatch(/web\s+1\s+N\/A\s+0\s+/);
    expect(await ok(['get', 'pc', 'high'])).toMatch(/high\s+1000\s+false\s+\S+\s+PreemptLowerPriority/);
    expect(await ok(['get', 'cj', 'nightly'])).toMatch(
      /nightly\s+0 3 \* \* \*\s+<none>\s+False\s+0\s+<none>\s+/,
    );
    expect(await ok(['get', 'cronjob', 'nightly', '-o', 'jsonpath={.spec.concurrencyPolicy}'])).toBe('Allow');
  });

  it('kubectl apply --prune with the default allow-list removes what left the manifests', async () => {
    const out = await ok(['apply', '--prune', '-l', 'app=op', '-f', '-'], { input: MANIFESTS });
    expect(out).toContain('daemonset.apps/agent created');
    expect(out).toContain('rolebinding.rbac.authorization.k8s.io/op created');
    const fewer = MANIFESTS.split('---\n')
      .filter((doc) => !doc.includes('kind: NetworkPolicy') && !doc.includes('kind: PersistentVolumeClaim'))
      .join('---\n');
    const pruned = await ok(['apply', '--prune', '-l', 'app=op', '-f', '-'], { input: fewer });
    expect(pruned).toContain('persistentvolumeclaim/data pruned');
    expect(pruned).toContain('rolebinding.rbac.authorization.k8s.io/op unchanged');
    // NetworkPolicies are not on kubectl's default prune allow-list
    expect(pruned).not.toContain('networkpolicy');
    expect(await ok(['get', 'netpol', 'op', '-o', 'name'])).toBe('networkpolicy.networking.k8s.io/op\n');
    expect(await ok(['get', 'ds', 'agent'])).toMatch(/agent\s+0\s+0\s+0\s+0\s+0\s+<none>\s+/);
  });

  it('invalid objects get kube-apiserver’s messages; immutable fields stay', async () => {
    const job =
      'apiVersion: batch/v1\nkind: Job\nmetadata: { name: j }\nspec:\n  template:\n    spec: { containers: [{ name: c, image: busybox }] }\n';
    expect(await fails(['apply', '-f', '-'], { input: job })).toContain(
      'The Job "j" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    );
    expect(
      await fails(['patch', 'rolebinding', 'reader', '--type=merge', '-p', '{"roleRef":{"name":"other"}}']),
    ).toContain('cannot change roleRef');
    expect(
      await fails([
        'patch',
        'svc',
        'kubernetes',
        '--type=merge',
        '-p',
        '{"spec":{"clusterIP":"10.96.0.9","clusterIPs":["10.96.0.9"]}}',
      ]),
    ).toContain('spec.clusterIPs[0]: Invalid value: ["10.96.0.9"]: may not change once set');
  });

  it('kubectl certificate approve writes the Approved condition through the approval subresource', async () => {
    const request = Buffer.from(
      '-----BEGIN CERTIFICATE REQUEST-----\nMIIBAA==\n-----END CERTIFICATE REQUEST-----\n',
    ).toString('base64');
    const csr = `apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: { name: jane }\nspec:\n  request: ${request}\n  signerName: kubernetes.io/kube-apiserver-client\n  usages: [client auth]\n`;
    await ok(['create', '-f', '-'], { input: csr });
    expect(await ok(['get', 'csr', 'jane'])).toMatch(
      /jane\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+\S*\s*<none>\s+Pending/,
    );
    expect(await ok(['certificate', 'approve', 'jane'])).toContain(
      'certificatesigningrequest.certificates.k8s.io/jane approved',
    );
    expect(await ok(['get', 'csr', 'jane', '-o', 'jsonpath={.status.conditions[0].type}'])).toBe('Approved');
  });

  it('field selectors kube-apiserver supports', async () => {
    await ok(['cordon', 'worker-1']);
    expect(await ok(['get', 'nodes', '--field-selector=spec.unschedulable=true', '-o', 'name'])).toBe(
      'node/worker-1\n',
    );
    expect(await ok(['get', 'svc', '-A', '--field-selector=spec.type=ClusterIP', '-o', 'name'])).toContain(
      'service/kubernetes',
    );
    expect(await fails(['get', 'ingress', '--field-selector=spec.rules=x'])).toContain(
      'field label not supported: spec.rules',
    );
  });
});
