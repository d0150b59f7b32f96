#!/usr/bin/env node
// `npm create converge@latest [DIR] -- [options]`: runs `converge init` of the @converge/cli this
// package depends on, so the new project depends on that same version of Converge.
const MINIMUM = [22, 18];
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
  process.stderr.write(
    `create-converge: Node ${process.versions.node} is too old; Converge needs Node ${MINIMUM.join('.')} or newer.\n`,
  );
  process.exit(1);
}
const { main } = await import('@converge/cli');
process.exitCode = await main(['init', ...process.argv.slice(2)]);
