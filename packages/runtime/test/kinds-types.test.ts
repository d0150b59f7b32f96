import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const fixture = fileURLToPath(new URL('./fixtures/typed-client.ts', import.meta.url));
const tsconfig = fileURLToPath(new URL('./tsconfig.json', import.meta.url));

/** Compiles `files` with this folder's compiler options; the diagnostics, one line each. */
function diagnostics(files: readonly string[]): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    tsconfig,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (parsed === undefined) throw new Error(`cannot read ${tsconfig}`);
  const { tsBuildInfoFile: _buildInfo, ...options } = { ...parsed.options, noEmit: true, incremental: false };
  const program = ts.createProgram({ rootNames: files, options });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    if (d.file === undefined || d.start === undefined) return text;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    return `${d.file.fileName}:${line + 1}: ${text}`;
  });
}

describe('typed kinds and the client’s generics (type-level)', () => {
  it('infer shapes from the kind constants, accept client-node models and loose shapes, and reject wrong fields', () => {
    // Every positive case must compile and every `@ts-expect-error` line must be an error
    // (an unused one is a diagnostic of its own).
    expect(diagnostics([fixture])).toEqual([]);
  });
});
