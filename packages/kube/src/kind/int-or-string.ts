import Type, { type TInteger, type TSchemaOptions, type TString, type TUnion } from 'typebox';

/**
 * A value that is an integer or a string, as Kubernetes' `IntOrString` (`port: 8080` or
 * `port: http`, `maxUnavailable: 25%`): `number | string` in TypeScript,
 * `x-kubernetes-int-or-string: true` in the CRD (with kubebuilder's `anyOf` of integer and string).
 *
 * @example
 * spec: Type.Object({ port: IntOrString({ description: 'port number or name' }) })
 */
export function IntOrString(options?: TSchemaOptions): TUnion<[TInteger, TString]> {
  return Type.Union([Type.Integer(), Type.String()], { ...options, 'x-kubernetes-int-or-string': true });
}
