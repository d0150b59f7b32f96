import { Worker } from 'node:worker_threads';
import { BadRequestError, TimeoutError } from '@converge/runtime';
import { entityTooLarge } from './errors.ts';
import { checkJsonShape, checkYamlKeys, LIMITS } from './limits.ts';
import {
  parseYamlToJsonText,
  type YamlJob,
  type YamlLimits,
  type YamlReady,
  type YamlReply,
  type YamlResult,
} from './yaml-convert.ts';

/**
 * YAML request bodies, decoded without stalling the server. The `yaml` package needs a few
 * microseconds per node, so a 3 MiB body can take seconds: bodies over {@link INLINE_YAML_CHARS}
 * are decoded in a worker thread (one, shared, started on first use, unref'd, memory-capped) while
 * the event loop keeps serving everyone else. A body that is JSON (what kubectl and client-go send
 * as `application/apply-patch+yaml`) takes the JSON path: a depth pre-scan and `JSON.parse`.
 */

/** YAML bodies up to this many characters are decoded on the main thread (a few ms at most). */
export const INLINE_YAML_CHARS = 16 * 1024;
/**
 * A worker decode that takes longer is abandoned (the worker is replaced) and the request is a
 * 504 Timeout, as kube-apiserver answers a request past its 60 s `--request-timeout`: within the
 * size, depth and alias limits no document needs more than seconds, so only an overloaded machine
 * gets here, and the client's request was not bad. Counted from when the worker is ready: the
 * first request after a start does not pay for the worker's own start (loading `yaml`, seconds on
 * a loaded machine) out of its decode time.
 */
export const YAML_DECODE_TIMEOUT_MS = 60_000;
/** A worker not ready this long after it was started is given up (its requests are a 504 too). */
export const YAML_WORKER_START_MS = 60_000;

/** A decode the server gave up on (a time limit): not the body's fault. */
type YamlOutcome = YamlResult | { readonly timedOut: string };

const YAML_LIMITS: YamlLimits = {
  maxAliases: LIMITS.maxYamlAliases,
  maxDepth: LIMITS.maxDepth,
  maxBytes: LIMITS.maxBodyBytes,
};

function fromResult(result: YamlOutcome): unknown {
  if ('json' in result) return JSON.parse(result.json) as unknown;
  if ('timedOut' in result) throw new TimeoutError(`Timeout: ${result.timedOut}`);
  if (result.tooLarge === true) throw entityTooLarge(LIMITS.maxBodyBytes);
  throw new BadRequestError(result.error);
}

/** JSON text (optionally with surrounding whitespace), parsed; undefined when it is not JSON. */
function tryJson(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return undefined;
  checkJsonShape(text);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The checks before any YAML decoding: flow-collection depth, then the text as JSON (parsed, with
 * its keys bounded) if it is JSON, else the YAML key estimate. Undefined: decode it as YAML.
 */
function jsonOrCheckedYaml(text: string): unknown {
  checkJsonShape(text, LIMITS.maxDepth, Number.POSITIVE_INFINITY, 'yaml');
  const json = tryJson(text);
  if (json === undefined) checkYamlKeys(text);
  return json;
}

/** Decodes one YAML document on the calling thread (small bodies; tests). Errors are 400/413. */
export function decodeYamlSync(text: string): unknown {
  const json = jsonOrCheckedYaml(text);
  if (json !== undefined) return json;
  return fromResult(parseYamlToJsonText(text, YAML_LIMITS));
}

/** Decodes one YAML document: JSON directly, small YAML inline, large YAML in the worker. */
export async function decodeYaml(text: string): Promise<unknown> {
  const json = jsonOrCheckedYaml(text);
  if (json !== undefined) return json;
  if (text.length <= INLINE_YAML_CHARS) return fromResult(parseYamlToJsonText(text, YAML_LIMITS));
  return fromResult(await yamlWorker().decode(text));
}

interface Pending {
  resolve(result: YamlOutcome): void;
  /** Armed when the worker is ready (at once if it already is). */
  timer: NodeJS.Timeout | undefined;
}

/** The shared decoding worker; replaced after a crash or a timeout. */
class YamlWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #dead = false;
  #ready = false;
  readonly #startTimer: NodeJS.Timeout;

  constructor() {
    const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
    this.#worker = new Worker(new URL(`./yaml-worker.${ext}`, import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    this.#worker.unref();
    this.#startTimer = setTimeout(() => {
      this.#fail({ timedOut: `the YAML decoder did not start within ${YAML_WORKER_START_MS} ms` });
      void this.#worker.terminate();
    }, YAML_WORKER_START_MS);
    this.#startTimer.unref();
    this.#worker.on('message', (message: YamlReply | YamlReady) => {
      if ('ready' in message) this.#onReady();
      else this.#settle(message.id, message);
    });
    this.#worker.on('error', (error) => this.#fail({ error: `the YAML decoder failed: ${error.message}` }));
    this.#worker.on('exit', () => this.#fail({ error: 'the YAML decoder stopped' }));
  }

  get dead(): boolean {
    return this.#dead;
  }

  decode(text: string): Promise<YamlOutcome> {
    const id = this.#nextId++;
    return new Promise<YamlOutcome>((resolve) => {
      const pending: Pending = { resolve, timer: undefined };
      if (this.#ready) pending.timer = this.#timeLimit();
      this.#pending.set(id, pending);
      const job: YamlJob = { id, text, limits: YAML_LIMITS };
      this.#worker.ref();
      this.#worker.postMessage(job);
    });
  }

  /** The worker loaded: the jobs sent meanwhile start their time limit now. */
  #onReady(): void {
    this.#ready = true;
    clearTimeout(this.#startTimer);
    for (const pending of this.#pending.values()) pending.timer ??= this.#timeLimit();
  }

  #timeLimit(): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.#fail({ timedOut: `decoding the YAML body took longer than ${YAML_DECODE_TIMEOUT_MS} ms` });
      void this.#worker.terminate();
    }, YAML_DECODE_TIMEOUT_MS);
    timer.unref();
    return timer;
  }

  #settle(id: number, result: YamlOutcome): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (this.#pending.size === 0) this.#worker.unref();
    pending.resolve(result);
  }

  #fail(result: YamlOutcome): void {
    this.#dead = true;
    clearTimeout(this.#startTimer);
    for (const id of [...this.#pending.keys()]) this.#settle(id, result);
  }
}

let shared: YamlWorker | undefined;

function yamlWorker(): YamlWorker {
  if (shared === undefined || shared.dead) shared = new YamlWorker();
  return shared;
}
