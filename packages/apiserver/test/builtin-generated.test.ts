import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_OPENAPI,
  DEFAULT_PROTOBUF,
  generateBuiltins,
  HEADER,
} from '../../../scripts/gen-builtins.ts';
import {
  builtinDefinitionName,
  builtinDefinitions,
  protoMessageOfKind,
  protoMessages,
} from '../src/builtin/index.ts';

const haveData = existsSync(DEFAULT_OPENAPI) && existsSync(DEFAULT_PROTOBUF);
const absent = `${DEFAULT_OPENAPI} is absent: the Kubernetes 1.32 definitions live next to the repository in ../shared/data (CI has them)`;

describe('scripts/gen-builtins.ts', () => {
  it('writes exactly the committed packages/apiserver/src/builtin/ files', (ctx) => {
    ctx.skip(!haveData, absent);
    for (const [name, text] of generateBuiltins(DEFAULT_OPENAPI, DEFAULT_PROTOBUF)) {
      const committed = readFileSync(
        fileURLToPath(new URL(`../src/builtin/${name}`, import.meta.url)),
        'utf8',
      );
      expect(committed.startsWith(HEADER)).toBe(true);
      expect(committed === text, `${name} differs: run npm run gen:builtins`).toBe(true);
    }
  });

  it('leaves Kubernetes’ descriptions out', () => {
    // A property may be named `description` (JSONSchemaProps); no schema may carry one.
    const described: string[] = [];
    const visit = (schema: unknown, path: string): void => {
      if (schema === null || typeof schema !== 'object') return;
      for (const [key, value] of Object.entries(schema)) {
        if (key === 'description' && typeof value === 'string') described.push(path);
        if (key === 'properties' && value !== null && typeof value === 'object') {
          for (const [name, property] of Object.entries(value)) visit(property, `${path}.${name}`);
        } else visit(value, `${path}/${key}`);
      }
    };
    for (const [name, schema] of Object.entries(builtinDefinitions())) visit(schema, name);
    expect(described).toEqual([]);
    expect(builtinDefinitions()['io.k8s.api.apps.v1.DeploymentSpec']?.properties?.replicas).toEqual({
      format: 'int32',
      type: 'integer',
    });
  });
});

describe('the generated data', () => {
  it('covers every group kube-apiserver 1.32 serves by default, and no alpha or beta version', () => {
    const groups = [
      ['', 'v1', 'Pod'],
      ['apps', 'v1', 'DaemonSet'],
      ['batch', 'v1', 'CronJob'],
      ['autoscaling', 'v2', 'HorizontalPodAutoscaler'],
      ['autoscaling', 'v1', 'HorizontalPodAutoscaler'],
      ['networking.k8s.io', 'v1', 'Ingress'],
      ['policy', 'v1', 'PodDisruptionBudget'],
      ['rbac.authorization.k8s.io', 'v1', 'ClusterRole'],
      ['discovery.k8s.io', 'v1', 'EndpointSlice'],
      ['storage.k8s.io', 'v1', 'StorageClass'],
      ['scheduling.k8s.io', 'v1', 'PriorityClass'],
      ['certificates.k8s.io', 'v1', 'CertificateSigningRequest'],
      ['coordination.k8s.io', 'v1', 'Lease'],
      ['events.k8s.io', 'v1', 'Event'],
      ['node.k8s.io', 'v1', 'RuntimeClass'],
      ['flowcontrol.apiserver.k8s.io', 'v1', 'FlowSchema'],
      ['admissionregistration.k8s.io', 'v1', 'ValidatingAdmissionPolicy'],
      ['authorization.k8s.io', 'v1', 'SelfSubjectAccessReview'],
      ['authentication.k8s.io', 'v1', 'TokenReview'],
      ['apiextensions.k8s.io', 'v1', 'CustomResourceDefinition'],
    ] as const;
    for (const [group, version, kind] of groups) {
      expect(builtinDefinitionName(group, version, kind), `${group}/${version} ${kind}`).toBeDefined();
    }
    expect(builtinDefinitionName('networking.k8s.io', 'v1beta1', 'IPAddress')).toBeUndefined();
    expect(builtinDefinitionName('resource.k8s.io', 'v1beta1', 'ResourceClaim')).toBeUndefined();
  });

  it('has the upstream field numbers, JSON names and embedded structs', () => {
    const deployment = protoMessages()['k8s.io.api.apps.v1.Deployment'];
    expect(deployment).toEqual([
      ['metadata', 1, 'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'optional'],
      ['spec', 2, 'k8s.io.api.apps.v1.DeploymentSpec', 'optional'],
      ['status', 3, 'k8s.io.api.apps.v1.DeploymentStatus', 'optional'],
    ]);
    expect(protoMessages()['k8s.io.api.core.v1.Volume']).toContainEqual([
      'volumeSource',
      2,
      'k8s.io.api.core.v1.VolumeSource',
      'inline',
    ]);
    expect(protoMessages()['k8s.io.api.networking.v1.IngressClassParametersReference']?.[0]?.[0]).toBe(
      'apiGroup',
    );
    expect(protoMessageOfKind('apps/v1', 'DeploymentList')).toBe('k8s.io.api.apps.v1.DeploymentList');
    expect(protoMessageOfKind('example.com/v1', 'Widget')).toBeUndefined();
  });
});
