import { BackendError, BackendErrorCodes, type BackendErrorOptions, BadRequestError } from './errors.ts';

/**
 * The ownership a write is made for: a named fence (a leader lock, `default/my-operator`; a shard
 * member, `my-group/pod-a`), the holder's identity and its epoch. Epochs only grow: a new holder
 * of a name takes an epoch above every earlier one (a Lease's `leaseTransitions`), and a holder
 * that gives keys away raises its own.
 *
 * A backend that can fence keeps, per name, the highest epoch it was told of (its *mark*) and
 * refuses, with a {@link FencedError}, a write carrying a lower epoch, or the same epoch with
 * another holder — at the moment it commits the write, so a write that left a paused process
 * before its lease moved, and arrives after the new holder announced itself, is refused.
 */
export interface Fence {
  readonly name: string;
  readonly holder: string;
  readonly epoch: number;
}

/** The error code of {@link FencedError}. */
export const FENCED_ERROR_CODE = BackendErrorCodes.FENCED;

/** What every fenced refusal's message contains, also when a ValidatingAdmissionPolicy words it. */
export const FENCED_MARKER = 'stale fencing epoch';

/**
 * A write (or an announcement) carried a stale fence: the backend already accepted a higher epoch
 * for the fence's name, or the same epoch from another holder. Not retryable — the ownership it was
 * made for has moved; the holder must stop acting for it. HTTP 403 Forbidden, as an admission
 * policy's refusal is on a Kubernetes cluster.
 */
export class FencedError extends BackendError {
  readonly status = 403;
  readonly reason = 'Forbidden' as const;
  /** The fence the write carried. */
  readonly fence: Fence | undefined;
  /** The backend's mark for the name, when it said. */
  readonly current: Fence | undefined;

  constructor(message: string, options?: BackendErrorOptions & { fence?: Fence; current?: Fence }) {
    super(FENCED_ERROR_CODE, message, options);
    this.fence = options?.fence;
    this.current = options?.current;
  }

  /** The refusal of `fence` by a backend whose mark is `current`. */
  static stale(fence: Fence, current: Fence): FencedError {
    return new FencedError(
      `${FENCED_MARKER}: fence "${fence.name}" is at epoch ${current.epoch} (holder "${current.holder}"); ` +
        `the write carried epoch ${fence.epoch} from "${fence.holder}"`,
      { fence, current },
    );
  }
}

/** True if `error` is a {@link FencedError}. */
export function isFenced(error: unknown): error is FencedError {
  return error instanceof FencedError;
}

/** The HTTP header a fenced write carries to a Kubernetes API server (the embedded one checks it). */
export const FENCE_HEADER = 'converge-fence';

const MAX_NAME = 253;

/** Throws a BadRequestError unless `fence` is well formed. */
export function checkFence(fence: unknown): asserts fence is Fence {
  const f = fence as Partial<Fence> | null;
  if (typeof f !== 'object' || f === null)
    throw new BadRequestError('a fence must be an object { name, holder, epoch }');
  if (typeof f.name !== 'string' || f.name === '' || f.name.length > MAX_NAME)
    throw new BadRequestError(`a fence's name must be a string of 1 to ${MAX_NAME} characters`);
  if (typeof f.holder !== 'string' || f.holder === '' || f.holder.length > MAX_NAME)
    throw new BadRequestError(`a fence's holder must be a string of 1 to ${MAX_NAME} characters`);
  if (typeof f.epoch !== 'number' || !Number.isSafeInteger(f.epoch) || f.epoch < 0)
    throw new BadRequestError("a fence's epoch must be a non-negative integer");
}

/**
 * The header value of a fence: `epoch=<n>; holder=<percent-encoded>; name=<percent-encoded>`.
 *
 * @example
 * formatFenceHeader({ name: 'default/op', holder: 'pod-a', epoch: 3 }); // 'epoch=3; holder=pod-a; name=default%2Fop'
 */
export function formatFenceHeader(fence: Fence): string {
  return `epoch=${fence.epoch}; holder=${encodeURIComponent(fence.holder)}; name=${encodeURIComponent(fence.name)}`;
}

/** Parses a {@link FENCE_HEADER} value; a malformed one is a BadRequestError naming the header. */
export function parseFenceHeader(value: string): Fence {
  const fields = new Map<string, string>();
  for (const part of value.split(';')) {
    const at = part.indexOf('=');
    const key = (at < 0 ? part : part.slice(0, at)).trim();
    if (at < 0 || fields.has(key) || !['epoch', 'holder', 'name'].includes(key)) {
      throw new BadRequestError(
        `malformed ${FENCE_HEADER} header: want "epoch=N; holder=H; name=N", got ${JSON.stringify(value.slice(0, 200))}`,
      );
    }
    fields.set(key, part.slice(at + 1).trim());
  }
  const epochText = fields.get('epoch') ?? '';
  let holder: string;
  let name: string;
  try {
    holder = decodeURIComponent(fields.get('holder') ?? '');
    name = decodeURIComponent(fields.get('name') ?? '');
  } catch {
    throw new BadRequestError(`malformed ${FENCE_HEADER} header: bad percent-encoding`);
  }
  if (!/^\d{1,15}$/.test(epochText))
    throw new BadRequestError(`malformed ${FENCE_HEADER} header: the epoch must be a non-negative integer`);
  const fence = { name, holder, epoch: Number(epochText) };
  checkFence(fence);
  return fence;
}

/**
 * The marks of a backend that fences in one process (the store; the embedded API server through
 * it): per name, the highest fence announced or written. {@link FenceTable.check} runs in the same
 * synchronous step as the commit it guards, so nothing can interleave between them.
 *
 * @example
 * const fences = new FenceTable();
 * fences.check({ name: 'op', holder: 'b', epoch: 2 }); // raises the mark
 * fences.check({ name: 'op', holder: 'a', epoch: 1 }); // throws FencedError
 */
export class FenceTable {
  readonly #marks = new Map<string, Fence>();
  readonly #keep: ((marks: readonly Fence[]) => void) | undefined;

  /**
   * `keep`: called with every mark as it will be, before a mark is raised; a mark is raised only
   * once it returns (a store keeps its marks in its data directory so, and a throw refuses the raise).
   */
  constructor(options: { readonly keep?: (marks: readonly Fence[]) => void } = {}) {
    this.#keep = options.keep;
  }

  /** The mark of `name`, if any fence was seen for it. */
  mark(name: string): Fence | undefined {
    return this.#marks.get(name);
  }

  /** Every mark, for operations pages. */
  marks(): Fence[] {
    return [...this.#marks.values()];
  }

  /**
   * Accepts `fence` (raising the mark when its epoch is higher) or throws {@link FencedError}: a
   * lower epoch, or the mark's epoch from another holder. Returns the mark after the check. With
   * `raise` false (a dry run) the mark stays as it was.
   */
  check(fence: Fence, raise = true): Fence {
    const current = this.#marks.get(fence.name);
    if (current !== undefined) {
      if (fence.epoch < current.epoch) throw FencedError.stale(fence, current);
      if (fence.epoch === current.epoch) {
        if (fence.holder !== current.holder) throw FencedError.stale(fence, current);
        return current;
      }
    }
    const mark = { name: fence.name, holder: fence.holder, epoch: fence.epoch };
    if (!raise) return mark;
    this.#keep?.([...[...this.#marks.values()].filter((m) => m.name !== mark.name), mark]);
    this.#marks.set(fence.name, mark);
    return mark;
  }

  /** Sets marks as loaded from storage (after a restart), keeping the higher of two (`keep` is not called). */
  restore(marks: readonly Fence[]): void {
    for (const mark of marks) {
      const current = this.#marks.get(mark.name);
      if (current === undefined || current.epoch < mark.epoch) this.#marks.set(mark.name, { ...mark });
    }
  }
}
