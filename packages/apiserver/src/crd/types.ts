import type { Condition, ObjectMeta } from '@converge/runtime';

/** One `x-kubernetes-validations` rule (CEL). Stored and checked for shape; not evaluated. */
export interface ValidationRule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?:
    | 'FieldValueInvalid'
    | 'FieldValueForbidden'
    | 'FieldValueRequired'
    | 'FieldValueDuplicate';
  readonly fieldPath?: string;
  readonly optionalOldSelf?: boolean;
}

/**
 * An OpenAPI v3 schema node as a CRD declares it: the structural subset of apiextensions v1
 * `JSONSchemaProps` (what a CRD may use once `validateCrd` accepts it).
 */
export interface StructuralSchema {
  readonly type?: string;
  readonly format?: string;
  readonly description?: string;
  readonly title?: string;
  readonly default?: unknown;
  readonly example?: unknown;
  readonly nullable?: boolean;
  readonly properties?: Readonly<Record<string, StructuralSchema>>;
  readonly additionalProperties?: StructuralSchema | boolean;
  readonly items?: StructuralSchema;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly maximum?: number;
  readonly exclusiveMaximum?: boolean;
  readonly minimum?: number;
  readonly exclusiveMinimum?: boolean;
  readonly multipleOf?: number;
  readonly maxLength?: number;
  readonly minLength?: number;
  readonly pattern?: string;
  readonly maxItems?: number;
  readonly minItems?: number;
  readonly uniqueItems?: boolean;
  readonly maxProperties?: number;
  readonly minProperties?: number;
  readonly allOf?: readonly StructuralSchema[];
  readonly anyOf?: readonly StructuralSchema[];
  readonly oneOf?: readonly StructuralSchema[];
  readonly not?: StructuralSchema;
  readonly externalDocs?: { readonly description?: string; readonly url?: string };
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-embedded-resource'?: boolean;
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-list-type'?: string;
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-map-type'?: string;
  readonly 'x-kubernetes-validations'?: readonly ValidationRule[];
}

/** `spec.names` / `status.acceptedNames`. */
export interface CustomResourceDefinitionNames {
  readonly plural: string;
  readonly singular?: string;
  readonly kind: string;
  readonly listKind?: string;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
}

/** `subresources.scale`: where the replicas live (simple JSONPaths like `.spec.replicas`). */
export interface ScaleSubresource {
  readonly specReplicasPath: string;
  readonly statusReplicasPath: string;
  readonly labelSelectorPath?: string;
}

/** `additionalPrinterColumns[*]` as declared in a CRD. */
export interface CustomResourceColumnDefinition {
  readonly name: string;
  /** `integer`, `number`, `string`, `boolean` or `date`. */
  readonly type: string;
  readonly format?: string;
  readonly description?: string;
  readonly priority?: number;
  readonly jsonPath: string;
}

/** One entry of `spec.versions`. */
export interface CustomResourceDefinitionVersion {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly deprecated?: boolean;
  readonly deprecationWarning?: string;
  readonly schema?: { readonly openAPIV3Schema?: StructuralSchema };
  readonly subresources?: {
    readonly status?: Readonly<Record<string, never>>;
    readonly scale?: ScaleSubresource;
  };
  readonly additionalPrinterColumns?: readonly CustomResourceColumnDefinition[];
  readonly selectableFields?: readonly { readonly jsonPath: string }[];
}

/**
 * `spec.conversion`: `None` rewrites only apiVersion; `Webhook` converts through the CRD's conversion
 * webhook (see server/conversion-webhook.ts and docs/guide/conversion.md).
 */
export interface CustomResourceConversion {
  readonly strategy: 'None' | 'Webhook';
  readonly webhook?: {
    readonly conversionReviewVersions?: readonly string[];
    readonly clientConfig?: {
      readonly url?: string;
      readonly caBundle?: string;
      readonly service?: {
        readonly namespace: string;
        readonly name: string;
        readonly path?: string;
        readonly port?: number;
      };
    };
  };
}

/** `apiextensions.k8s.io/v1` CustomResourceDefinition. */
export interface CustomResourceDefinition {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
  readonly spec: {
    readonly group: string;
    readonly names: CustomResourceDefinitionNames;
    readonly scope: 'Namespaced' | 'Cluster';
    readonly versions: readonly CustomResourceDefinitionVersion[];
    readonly conversion?: CustomResourceConversion;
    readonly preserveUnknownFields?: boolean;
  };
  readonly status?: CustomResourceDefinitionStatus;
}

/** `status` of a CRD: accepted names, conditions, stored versions. */
export interface CustomResourceDefinitionStatus {
  readonly acceptedNames?: CustomResourceDefinitionNames;
  readonly conditions?: readonly Condition[];
  readonly storedVersions?: readonly string[];
}
