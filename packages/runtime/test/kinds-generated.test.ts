import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  clusterRoleBindingType,
  clusterRoleType,
  cronJobType,
  daemonSetType,
  horizontalPodAutoscalerType,
  ingressType,
  type KubeObjectLike,
  persistentVolumeClaimType,
  podDisruptionBudgetType,
  type ResourceType,
  roleBindingType,
  roleType,
} from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { HEADER } from '../../../scripts/generate-kinds/file-writer.ts';
import type { OpenApiDocument } from '../../../scripts/generate-kinds/openapi.ts';
import { DEFAULT_OPENAPI, generateKinds, writeKinds } from '../../../scripts/generate-kinds.ts';

const committed = fileURLToPath(new URL('../src/kinds/', import.meta.url));
const absent = `${DEFAULT_OPENAPI} is absent: the Kubernetes 1.32 OpenAPI document lives next to the repository in ../shared/data (CI has it)`;
const haveData = existsSync(DEFAULT_OPENAPI);
const readDoc = (): OpenApiDocument => JSON.parse(readFileSync(DEFAULT_OPENAPI, 'utf8')) as OpenApiDocument;

describe('scripts/generate-kinds.ts', () => {
  it('writes exactly the committed packages/runtime/src/kinds/ files', (ctx) => {
    ctx.skip(!haveData, absent);
    const out = mkdtempSync(join(tmpdir(), 'converge-kinds-'));
    try {
      const written = writeKinds(DEFAULT_OPENAPI, out).sort();
      const generated = readdirSync(committed)
        .filter((name) => readFileSync(join(committed, name), 'utf8').startsWith(HEADER))
        .sort();
      expect(generated).toEqual(written);
      for (const name of written) {
        expect(
          readFileSync(join(committed, name), 'utf8'),
          `${name} differs: run npm run generate:kinds`,
        ).toBe(readFileSync(join(out, name), 'utf8'));
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('fails loudly when a generated name is taken by the runtime or by another definition', (ctx) => {
    ctx.skip(!haveData, absent);
    const doc = readDoc();
    expect(() => generateKinds(doc, new Set(['PodSpec']))).toThrow(/runtime already exports PodSpec/);
    expect(() => generateKinds(doc, new Set(['podType']))).toThrow(/runtime already exports podType/);
    // An apps/v1 definition named like a core/v1 one, used by a Deployment.
    const deploymentSpec = doc.definitions['io.k8s.api.apps.v1.DeploymentSpec'];
    const twin = doc.definitions['io.k8s.api.core.v1.PodTemplateSpec'];
    if (deploymentSpec === undefined || twin === undefined) throw new Error('unexpected document');
    const clashing: OpenApiDocument = {
      ...doc,
      definitions: {
        ...doc.definitions,
        'io.k8s.api.apps.v1.PodTemplateSpec': twin,
        'io.k8s.api.apps.v1.DeploymentSpec': {
          ...deploymentSpec,
          properties: {
            ...deploymentSpec.properties,
            copy: { $ref: '#/definitions/io.k8s.api.apps.v1.PodTemplateSpec' },
          },
        },
      },
    };
    expect(() => generateKinds(clashing, new Set())).toThrow(/would both be PodTemplateSpec/);
  });

  it('fails loudly when a kind has no path to read it by name', (ctx) => {
    ctx.skip(!haveData, absent);
    const doc = readDoc();
    const paths = Object.fromEntries(
      Object.entries(doc.paths).filter(([path]) => !path.includes('/cronjobs/')),
    );
    expect(() => generateKinds({ ...doc, paths }, new Set())).toThrow(/CronJob: expected one path/);
  });

  it('types the hand-encoded apiextensions definitions, and fails loudly once the document types one', (ctx) => {
    ctx.skip(!haveData, absent);
    const doc = readDoc();
    const text = generateKinds(doc, new Set()).get('apiextensions-v1.ts') ?? '';
    expect(text).toContain('export type JSONSchemaPropsOrBool = JSONSchemaProps | boolean;');
    expect(text).toContain('export type JSON = unknown;');
    const name = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool';
    const typed: OpenApiDocument = {
      ...doc,
      definitions: { ...doc.definitions, [name]: { type: 'object' } },
    };
    expect(() => generateKinds(typed, new Set())).toThrow(/JSONSchemaPropsOrBool has a type of its own/);
  });
});

describe('kinds the embedded server does not serve yet', () => {
  // The apiserver's builtin-kinds test checks the served ones against its discovery.
  const cases = (
    [
      [persistentVolumeClaimType, 'persistentvolumeclaims', true, true, false, ['pvc']],
      [daemonSetType, 'daemonsets', true, true, true, ['ds']],
      [cronJobType, 'cronjobs', true, true, true, ['cj']],
      [ingressType, 'ingresses', true, true, true, ['ing']],
      [roleType, 'roles', true, false, false, []],
      [roleBindingType, 'rolebindings', true, false, false, []],
      [clusterRoleType, 'clusterroles', false, false, false, []],
      [clusterRoleBindingType, 'clusterrolebindings', false, false, false, []],
      [podDisruptionBudgetType, 'poddisruptionbudgets', true, true, true, ['pdb']],
      [horizontalPodAutoscalerType, 'horizontalpodautoscalers', true, true, false, ['hpa']],
    ] as const
  ).map(([type, plural, namespaced, statusSubresource, generation, shortNames]) => ({
    kind: type.kind,
    type: type as ResourceType<KubeObjectLike>,
    facts: { plural, namespaced, statusSubresource, generation },
    shortNames,
  }));
  it.each(cases)('$kind has Kubernetes 1.32’s resource facts', ({ type, facts, shortNames }) => {
    expect(type).toMatchObject(facts);
    expect(type.shortNames ?? []).toEqual(shortNames);
    expect(type.singular).toBe(type.kind.toLowerCase());
    expect(Object.isFrozen(type)).toBe(true);
  });
});
