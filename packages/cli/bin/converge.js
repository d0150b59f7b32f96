#!/usr/bin/env node
// The `converge` command. Installed from a tarball or a registry it runs the compiled dist/;
// inside the Converge repository it runs the TypeScript sources, and the workspace packages
// resolve to their sources too (the `@converge/source` export condition), so there is no build
// step in the development loop.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const MINIMUM = [22, 18];
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
  process.stderr.write(
    `converge: Node ${process.versions.node} is too old; Converge needs Node ${MINIMUM.join('.')} or newer ` +
      '(the first Node 22 that loads TypeScript operator modules without a flag).\n',
  );
  process.exit(1);
}

// V8's compile cache (in the OS temp folder, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1
// turns it off): after the first start, the modules a command loads are not compiled again.
module.enableCompileCache?.();

const here = fileURLToPath(import.meta.url);
const fromSources =
  !here.split(sep).includes('node_modules') && existsSync(new URL('../src/main.ts', import.meta.url));

let main;
if (fromSources) {
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (!specifier.startsWith('@converge/')) return nextResolve(specifier, context);
      return nextResolve(specifier, { ...context, conditions: [...context.conditions, '@converge/source'] });
    },
  });
  ({ main } = await import('../src/main.ts'));
} else {
  ({ main } = await import('../dist/main.js'));
}
process.exitCode = await main(process.argv.slice(2));
