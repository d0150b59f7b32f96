#!/usr/bin/env node
// The `converge` command. Inside this repository the workspace packages resolve to their
// TypeScript sources (Node ≥ 22.18 strips types); installed from a registry, to their dist/.
import module from 'node:module';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(
    `converge: Node ${process.versions.node} is too old; Converge needs Node 22.12 or newer.\n` +
      'In this repository run it through npm (npx converge …), which uses the Node 24 the repo brings.\n',
  );
  process.exit(1);
}
if (typeof module.registerHooks === 'function') {
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (!specifier.startsWith('@converge/')) return nextResolve(specifier, context);
      return nextResolve(specifier, { ...context, conditions: [...context.conditions, '@converge/source'] });
    },
  });
}
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
