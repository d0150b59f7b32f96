/**
 * The `converge` command line: `serve` runs the embedded Kubernetes API server; `dev` runs it
 * with operator modules in one process.
 *
 * @module
 */
export { type Command, parseCommand, type ServeArgs } from './args.ts';
export { EXAMPLES_DIR, main, type OperatorModule, type RunIo } from './main.ts';
