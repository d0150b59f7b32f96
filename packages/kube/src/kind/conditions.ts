import Type, {
  type TArray,
  type TInteger,
  type TLiteral,
  type TObject,
  type TOptional,
  type TSchemaOptions,
  type TString,
  type TUnion,
} from 'typebox';

/** The schema {@link Condition} returns: one `metav1.Condition`. */
export type TCondition = TObject<{
  type: TString;
  status: TUnion<[TLiteral<'True'>, TLiteral<'False'>, TLiteral<'Unknown'>]>;
  observedGeneration: TOptional<TInteger>;
  lastTransitionTime: TString;
  reason: TString;
  message: TString;
}>;

/**
 * One status condition, Kubernetes' `metav1.Condition`, with the validations its Go type carries
 * into CRDs (the `type` and `reason` patterns and lengths, `status` one of `True`, `False`,
 * `Unknown`, `lastTransitionTime` a date-time). Its TypeScript type is the one
 * `setStatusCondition` from `@converge/runtime` reads and returns.
 *
 * @example
 * status: Type.Object({ conditions: Type.Optional(Type.Array(Condition())) })
 */
export function Condition(options?: TSchemaOptions): TCondition {
  return Type.Object(
    {
      type: Type.String({
        maxLength: 316,
        pattern:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
        description: 'The condition type, in CamelCase or foo.example.com/CamelCase.',
      }),
      status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')], {
        description: 'True, False or Unknown.',
      }),
      observedGeneration: Type.Optional(
        Type.Integer({
          format: 'int64',
          minimum: 0,
          description: 'The .metadata.generation the condition was set from.',
        }),
      ),
      lastTransitionTime: Type.String({
        format: 'date-time',
        description: 'When the status last changed.',
      }),
      reason: Type.String({
        minLength: 1,
        maxLength: 1024,
        pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
        description: 'Why, in CamelCase: a machine-readable reason for the last transition.',
      }),
      message: Type.String({ maxLength: 32768, description: 'Why, for humans.' }),
    },
    options,
  );
}

/**
 * A `conditions` list: {@link Condition}s keyed by `type` (`x-kubernetes-list-type: map`, as
 * Kubernetes lists its own conditions), so server-side apply merges them by type. Use it with
 * `setStatusCondition` and `client.updateStatus`.
 *
 * @example
 * status: Type.Object({ conditions: Type.Optional(Conditions()) })
 * // in the reconciler:
 * status.conditions = setStatusCondition(status.conditions, {
 *   type: 'Ready', status: 'True', reason: 'Available', message: '', observedGeneration: obj.metadata.generation,
 * }, clock.now());
 */
export function Conditions(options?: TSchemaOptions): TArray<TCondition> {
  return Type.Array(Condition(), {
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
    ...options,
  });
}
