import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BuiltinDecodeError, builtinDefinitionName, checkBuiltinObject } from './index.ts';

const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';

function deployment(spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec };
}

function decodeError(definition: string, object: Record<string, unknown>): string {
  try {
    checkBuiltinObject(definition, object);
  } catch (error) {
    expect(error).toBeInstanceOf(BuiltinDecodeError);
    return (error as Error).message;
  }
  throw new Error('expected a BuiltinDecodeError');
}

describe('checkBuiltinObject', () => {
  it('finds and drops unknown fields at every depth, with the paths kube-apiserver prints', () => {
    const object = deployment({
      replicass: 2,
      template: {
        spec: {
          containers: [
            { name: 'c', image: 'nginx' },
            { name: 'd', imagee: 'x' },
          ],
        },
      },
    });
    (object.metadata as Record<string, unknown>).labelz = {};
    const { unknown } = checkBuiltinObject(DEPLOYMENT, object);
    expect(unknown).toEqual(['metadata.labelz', 'spec.replicass', 'spec.template.spec.containers[1].imagee']);
    expect(object).toEqual(
      deployment({ template: { spec: { containers: [{ name: 'c', image: 'nginx' }, { name: 'd' }] } } }),
    );
  });

  it('keeps unknown fields when asked not to prune, and never reports map keys or opaque JSON', () => {
    const object = deployment({
      replicass: 2,
      template: { metadata: { labels: { anything: 'x' }, annotations: { 'a/b': 'y' } } },
    });
    expect(checkBuiltinObject(DEPLOYMENT, object, { prune: false }).unknown).toEqual(['spec.replicass']);
    expect((object.spec as Record<string, unknown>).replicass).toBe(2);
    const revision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      revision: 1,
      data: { anything: { goes: [1, 'two'] } },
    };
    const name = builtinDefinitionName('apps', 'v1', 'ControllerRevision') as string;
    expect(checkBuiltinObject(name, revision).unknown).toEqual([]);
  });

  it('rejects wrong types in Go’s words', () => {
    expect(decodeError(DEPLOYMENT, deployment({ replicas: '3' }))).toBe(
      'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
    );
    expect(decodeError(DEPLOYMENT, deployment({ paused: 'yes' }))).toBe(
      'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool',
    );
    expect(decodeError(DEPLOYMENT, deployment({ template: { spec: { containers: { name: 'c' } } } }))).toBe(
      'json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container',
    );
  });

  it('checks int32 and int64 ranges', () => {
    expect(decodeError(DEPLOYMENT, deployment({ replicas: 2 ** 31 }))).toBe(
      'json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32',
    );
    expect(decodeError(DEPLOYMENT, deployment({ replicas: 1.5 }))).toContain('of type int32');
    expect(() => checkBuiltinObject(DEPLOYMENT, deployment({ replicas: 2 ** 31 - 1 }))).not.toThrow();
    const pod = builtinDefinitionName('', 'v1', 'Pod') as string;
    expect(
      decodeError(pod, { apiVersion: 'v1', kind: 'Pod', spec: { activeDeadlineSeconds: 1e20 } }),
    ).toContain('of type int64');
  });

  it('checks quantities, int-or-string, dates and base64', () => {
    const resources = (limits: unknown): Record<string, unknown> =>
      deployment({ template: { spec: { containers: [{ name: 'c', resources: { limits } }] } } });
    expect(() =>
      checkBuiltinObject(DEPLOYMENT, resources({ cpu: '500m', memory: '1Gi', x: 2 })),
    ).not.toThrow();
    expect(decodeError(DEPLOYMENT, resources({ cpu: '5 cores' }))).toBe(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
    const strategy = (maxSurge: unknown): Record<string, unknown> =>
      deployment({ strategy: { rollingUpdate: { maxSurge } } });
    expect(() => checkBuiltinObject(DEPLOYMENT, strategy('25%'))).not.toThrow();
    expect(() => checkBuiltinObject(DEPLOYMENT, strategy(2))).not.toThrow();
    expect(decodeError(DEPLOYMENT, strategy(true))).toContain('cannot unmarshal bool');
    const event = builtinDefinitionName('events.k8s.io', 'v1', 'Event') as string;
    expect(decodeError(event, { eventTime: 'yesterday' })).toBe(
      'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
    );
    expect(() => checkBuiltinObject(event, { eventTime: '2024-01-02T03:04:05.123456Z' })).not.toThrow();
    const secret = builtinDefinitionName('', 'v1', 'Secret') as string;
    expect(decodeError(secret, { data: { a: 'not base64!' } })).toBe('illegal base64 data at input byte 3');
    expect(() => checkBuiltinObject(secret, { data: { a: 'aGk=' } })).not.toThrow();
  });

  it('never throws anything but BuiltinDecodeError, never hangs, for hostile JSON of any kind', () => {
    const kinds = [
      DEPLOYMENT,
      'io.k8s.api.core.v1.Pod',
      'io.k8s.api.core.v1.Service',
      'io.k8s.api.batch.v1.Job',
    ];
    const hostile = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue(),
        fc.constantFrom('__proto__', 'constructor', '1e400', '', '-0', 'NaN'),
        fc.dictionary(
          fc.constantFrom('spec', 'metadata', 'template', 'containers', 'replicas', '__proto__', 'x'),
          tie('value'),
        ),
        fc.array(tie('value'), { maxLength: 3 }),
      ),
    })).value;
    fc.assert(
      fc.property(fc.constantFrom(...kinds), fc.dictionary(fc.string(), hostile), (kind, object) => {
        try {
          checkBuiltinObject(kind, structuredClone(object));
        } catch (error) {
          expect(error).toBeInstanceOf(BuiltinDecodeError);
        }
      }),
      { numRuns: 200 },
    );
  });
});
