import type { KubeObject, UnstructuredObject } from '../object/index.ts';

/**
 * Converts objects of one kind between its versions; what a conversion webhook path serves.
 * `hubAndSpoke` (from `@converge/kube`) makes one from per-version functions; any object with
 * `convert` works.
 */
export interface Converter {
  /**
   * Returns `object` (never of `desiredAPIVersion`: the server passes those through) as
   * `desiredAPIVersion`. The server sets `apiVersion` and `kind` on the result and keeps the
   * input's `metadata` when the result has none. Throwing fails the whole review.
   */
  convert(object: UnstructuredObject, desiredAPIVersion: string, signal: AbortSignal): unknown;
}

/** How one spoke version converts to the hub and back. Both get private copies to change or replace. */
export interface Spoke<S extends KubeObject, H extends KubeObject> {
  toHub(object: S, signal: AbortSignal): H | Promise<H>;
  fromHub(hub: H, signal: AbortSignal): S | Promise<S>;
}

export interface HubAndSpokeOptions<H extends KubeObject> {
  /** The hub's apiVersion (`example.com/v2`): every conversion goes through it. */
  readonly hub: string;
  /** Per spoke apiVersion (`example.com/v1`), its conversion to and from the hub. */
  readonly spokes: Readonly<Record<string, Spoke<KubeObject, H>>>;
}
