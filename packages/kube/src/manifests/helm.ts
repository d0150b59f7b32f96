import { stringify } from 'yaml';
import { GENERATED_HEADER, toYaml } from './files.ts';
import type { Manifest, ManifestSet } from './generate.ts';
import { shardedNote } from './sharding.ts';

/** Placeholders written into objects and replaced by template expressions after serialising. */
const NAMESPACE = 'converge-helm-release-namespace';
const IMAGE = 'converge-helm-image';
const REPLICAS = 'converge-helm-replicas';
const RESOURCES = 'converge-helm-resources';

const PULL_POLICY = 'converge-helm-pull-policy';

/**
 * `object` with the operator's namespace (in metadata and binding subjects; in the fencing
 * policy's ServiceAccount name and its binding's paramRef) replaced by `to`.
 */
function inNamespace(object: Manifest, from: string, to: string): Manifest {
  if (object.kind === 'ValidatingAdmissionPolicy' || object.kind === 'ValidatingAdmissionPolicyBinding')
    return fencingInNamespace(object, from, to);
  const metadata =
    object.metadata.namespace === from ? { ...object.metadata, namespace: to } : object.metadata;
  const subjects = object.subjects as readonly { namespace?: string }[] | undefined;
  return {
    ...object,
    metadata,
    ...(subjects === undefined
      ? {}
      : { subjects: subjects.map((s) => (s.namespace === from ? { ...s, namespace: to } : s)) }),
  };
}

/** The fencing policy's strings naming the namespace, rewritten (see fencing.ts). */
function fencingInNamespace(object: Manifest, from: string, to: string): Manifest {
  const rewrite = (value: unknown, key?: string): unknown => {
    if (typeof value === 'string') {
      if (key === 'namespace') return value === from ? to : value;
      return value
        .replaceAll(`system:serviceaccount:${from}:`, `system:serviceaccount:${to}:`)
        .replaceAll(`the Lease ${from}/`, `the Lease ${to}/`);
    }
    if (Array.isArray(value)) return value.map((v) => rewrite(v));
    if (typeof value === 'object' && value !== null)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v, k)]));
    return value;
  };
  return rewrite(object) as Manifest;
}

/** A template: the objects with the operator's namespace, image, replicas and resources templated. */
function template(objects: readonly Manifest[], set: ManifestSet, note = ''): string {
  const withPlaceholders = objects.map((object) => {
    let o = inNamespace(object, set.options.namespace, NAMESPACE);
    if (o.kind === 'Deployment') {
      const spec = o.spec as { template: { spec: { containers: Record<string, unknown>[] } } };
      const [container, ...rest] = spec.template.spec.containers;
      o = {
        ...o,
        spec: {
          ...spec,
          replicas: REPLICAS,
          template: {
            ...spec.template,
            spec: {
              ...spec.template.spec,
              containers: [
                { ...container, image: IMAGE, imagePullPolicy: PULL_POLICY, resources: RESOURCES },
                ...rest,
              ],
            },
          },
        },
      };
    }
    return o;
  });
  return toYaml(withPlaceholders, note)
    .replaceAll(NAMESPACE, '{{ .Release.Namespace }}')
    .replaceAll(IMAGE, '"{{ .Values.image.repository }}:{{ .Values.image.tag }}"')
    .replaceAll(REPLICAS, '{{ .Values.replicaCount }}')
    .replace(
      new RegExp(`^( *)resources: ${RESOURCES}$`, 'm'),
      (_, indent: string) =>
        `${indent}resources:\n{{- toYaml .Values.resources | nindent ${indent.length + 2} }}`,
    )
    .replaceAll(PULL_POLICY, '{{ .Values.image.pullPolicy }}');
}

/** `image` split into repository and tag (`latest` when it has none; a digest stays in the repository). */
function splitImage(image: string): { repository: string; tag: string } {
  const at = image.lastIndexOf(':');
  if (at > image.lastIndexOf('/') && !image.includes('@'))
    return { repository: image.slice(0, at), tag: image.slice(at + 1) };
  return { repository: image, tag: 'latest' };
}

/**
 * A Helm chart of the manifests, by path relative to the chart directory: `Chart.yaml`,
 * `values.yaml` (image, replicaCount, resources), `templates/` (every object but the Namespace, in
 * `.Release.Namespace`; install with `--create-namespace`) and the CRDs in `crds/` (Helm installs
 * them before the templates and never deletes them).
 */
export function helmChart(set: ManifestSet): Map<string, string> {
  const o = set.options;
  const files = new Map<string, string>();
  files.set(
    'Chart.yaml',
    GENERATED_HEADER +
      stringify(
        {
          apiVersion: 'v2',
          name: o.name,
          description: `The ${o.name} operator (Converge).`,
          type: 'application',
          version: o.chartVersion,
          appVersion: splitImage(o.image).tag,
        },
        { lineWidth: 0 },
      ),
  );
  files.set(
    'values.yaml',
    GENERATED_HEADER +
      stringify(
        {
          image: { ...splitImage(o.image), pullPolicy: 'IfNotPresent' },
          replicaCount: o.replicas,
          resources: o.resources,
        },
        { lineWidth: 0 },
      ),
  );
  for (const crd of set.crds) files.set(`crds/${crd.metadata.name}.yaml`, toYaml([crd]));
  files.set('templates/service_account.yaml', template([set.serviceAccount], set));
  files.set('templates/role.yaml', template(set.roles, set));
  files.set('templates/role_binding.yaml', template(set.roleBindings, set));
  if (set.leaderElection.length > 0)
    files.set('templates/leader_election.yaml', template(set.leaderElection, set));
  if (set.shardGroup.length > 0) files.set('templates/shard_group.yaml', template(set.shardGroup, set));
  if (set.fencing.length > 0) files.set('templates/leader_fencing.yaml', template(set.fencing, set));
  files.set('templates/deployment.yaml', template([set.deployment], set, shardedNote(set.options)));
  if (set.metricsService !== undefined)
    files.set('templates/metrics_service.yaml', template([set.metricsService], set));
  if (set.webhookService !== undefined)
    files.set('templates/webhook_service.yaml', template([set.webhookService], set));
  return files;
}
