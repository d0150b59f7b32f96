/**
 * The `converge` command line: `serve` runs the embedded Kubernetes API server; `dev` runs it
 * with operator modules in one process; `run` runs operator modules against any cluster; `kv`
 * applies, gets and deletes objects in NATS JetStream KV (the primaries of NATS-backed operators);
 * `simulate` runs a scenario through seeded fault schedules (`@converge/simulation`); `why` asks a
 * running operator why an object is reconciled.
 *
 * @module
 */
export { type Command, parseCommand, type ServeArgs } from './args.ts';
export {
  CliErrorCodes,
  KvFileError,
  NatsUnreachableError,
  OperatorModuleError,
  OperatorUnreachableError,
  ScenarioModuleError,
  UnknownKindError,
  UsageError,
} from './errors.ts';
export type { KvArgs, KvOutput, KvVerb } from './kv-args.ts';
export { guessKind, guessPlural, typeFromArgument } from './kv-types.ts';
export { EXAMPLES_DIR, main, type OperatorModule, type RunIo } from './main.ts';
export type { OperationsRecord } from './operations-record.ts';
export {
  type CreateApiArgs,
  type CreateApiResult,
  createApi,
  type InitArgs,
  type InitResult,
  initProject,
  ScaffoldError,
  type ScaffoldErrorCode,
  ScaffoldErrorCodes,
} from './scaffold/index.ts';
export type { WhyArgs } from './why-args.ts';
export type { WhyAnswer, WhyController, WhyKey } from './why-cmd.ts';
