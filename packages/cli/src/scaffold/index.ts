/**
 * Scaffolding: `converge init` makes a new operator project (package.json, the operator module,
 * a kind declared with `defineKind`, its controller and a node:test test against the embedded API
 * server, README, ignore files); `converge create api` adds a kind to it. `npm create converge`
 * (the `create-converge` package) runs `converge init`.
 *
 * @module
 */
export {
  CREATE_HELP,
  type CreateApiArgs,
  INIT_DEFAULTS,
  INIT_HELP,
  type InitArgs,
  parseCreate,
  parseInit,
} from './args.ts';
export { runCreateApi, runInit } from './command.ts';
export { type CreateApiResult, createApi, wireController } from './create-api.ts';
export { ScaffoldError, type ScaffoldErrorCode, ScaffoldErrorCodes } from './errors.ts';
export { cliVersion, type InitResult, initProject, tarballDependencies } from './init.ts';
export { type KindNames, kindNames } from './names.ts';
export { CONTROLLERS_MARKER, DEV_DEPENDENCIES, IMPORTS_MARKER } from './project-templates.ts';
