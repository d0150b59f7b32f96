import { ConvergeError } from '@converge/runtime';

/**
 * Stable error codes of `converge init` and `converge create api` (never reused). Bad flag
 * values are usage errors (`CONVERGE_ERR_CLI_USAGE`); these are about the folder worked on.
 *
 * @example
 * if ((error as { code?: string }).code === ScaffoldErrorCodes.DIR_NOT_EMPTY) console.error('use --force');
 */
export const ScaffoldErrorCodes = {
  /** `converge init`: the folder holds files already (`--force` writes into it anyway). */
  DIR_NOT_EMPTY: 'CONVERGE_ERR_CLI_SCAFFOLD_DIR_NOT_EMPTY',
  /** `converge init --packages DIR`: DIR cannot be read or holds no `@converge/*` tarballs. */
  PACKAGES_NOT_FOUND: 'CONVERGE_ERR_CLI_SCAFFOLD_PACKAGES_NOT_FOUND',
  /** `converge create api`: the folder is not a project `converge init` made (no operator module). */
  NOT_A_PROJECT: 'CONVERGE_ERR_CLI_SCAFFOLD_NOT_A_PROJECT',
  /** `converge create api`: the operator module lost its `// +converge:scaffold:controllers` line. */
  MARKER_MISSING: 'CONVERGE_ERR_CLI_SCAFFOLD_MARKER_MISSING',
  /** `converge create api`: the kind's files exist, or the operator wires it already. */
  KIND_EXISTS: 'CONVERGE_ERR_CLI_SCAFFOLD_KIND_EXISTS',
  /** A file of the scaffold could not be read or written (permissions, a file where a folder goes). */
  WRITE_FAILED: 'CONVERGE_ERR_CLI_SCAFFOLD_WRITE_FAILED',
} as const;

export type ScaffoldErrorCode = (typeof ScaffoldErrorCodes)[keyof typeof ScaffoldErrorCodes];

/**
 * `converge init` or `converge create api` could not make what was asked in the folder it works
 * on. `path` is the file or folder concerned; `reason` the problem, in words. Nothing was written
 * when the check failed before writing (every code but `WRITE_FAILED`).
 */
export class ScaffoldError extends ConvergeError {
  readonly path: string;
  readonly reason: string;

  constructor(code: ScaffoldErrorCode, path: string, reason: string, options?: { cause?: unknown }) {
    super(code, `${path}: ${reason}`, options);
    this.path = path;
    this.reason = reason;
  }
}
