/**
 * The error and result types of the OpenAPI value validator: kube-openapi's `Result`, which
 * de-duplicates errors by message and counts matches (the count picks which failing `anyOf`/`oneOf`
 * branch is reported).
 */
import { goQuote } from './go-format.ts';

/** One error of the validator, before it becomes a StatusCause. */
export type OpenApiError =
  | { readonly kind: 'type'; readonly path: string; readonly message: string; readonly value: string }
  | { readonly kind: 'required'; readonly path: string; readonly message: string }
  | {
      readonly kind: 'enum';
      readonly path: string;
      readonly message: string;
      readonly value: unknown;
      readonly values: readonly unknown[];
    }
  | { readonly kind: 'tooLong'; readonly path: string; readonly message: string; readonly max: number }
  | {
      readonly kind: 'tooMany';
      readonly path: string;
      readonly message: string;
      readonly actual: number;
      readonly max: number;
    }
  | { readonly kind: 'invalid'; readonly path: string; readonly message: string; readonly value: unknown }
  /** An error without a field (composite messages, range checks): reported at the prefix path. */
  | { readonly kind: 'plain'; readonly message: string };

/** Accumulated errors and kube-openapi's match count (which picks the reported anyOf/oneOf branch). */
export class Result {
  readonly errors: OpenApiError[] = [];
  matchCount = 0;

  add(error: OpenApiError): void {
    if (!this.errors.some((e) => e.message === error.message)) this.errors.push(error);
  }

  merge(other: Result | undefined): this {
    if (other === undefined) return this;
    for (const e of other.errors) this.add(e);
    this.matchCount += other.matchCount;
    return this;
  }

  get valid(): boolean {
    return this.errors.length === 0;
  }
}

/** A result holding one error. */
export function fail(error: OpenApiError): Result {
  const r = new Result();
  r.add(error);
  return r;
}

/** kube-openapi's `InvalidType` with data: `<path> in body must be of type <type>: "<value>"`. */
export function typeError(path: string, typeName: string, value: string): OpenApiError {
  return {
    kind: 'type',
    path,
    value,
    message: `${path} in body must be of type ${typeName}: ${goQuote(value)}`,
  };
}
