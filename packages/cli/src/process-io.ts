import { constants } from 'node:os';

export interface RunIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Whether `err` writes to a terminal (logs are then pretty unless `--log-format json`). */
  readonly errIsTerminal?: boolean;
  /** Resolves when the process should stop (SIGINT/SIGTERM). */
  readonly stopped: Promise<void>;
  /** Called once when the command has finished: stop listening for signals. */
  readonly close?: () => void;
}

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** How long the process may outlive its command (sockets closing) before it is ended. */
const EXIT_GRACE_MS = 1_000;

/**
 * The process's stdout, stderr and signals. Signal handlers are installed when `stopped` is first
 * read, so a command that never reads it (help, kv) keeps Node's default: a signal ends it at once.
 * Once installed, the first SIGINT or SIGTERM resolves `stopped` (a graceful stop, announced on
 * stderr) and the next one exits at once with 128 + the signal number, whatever the command is
 * doing; `close()` removes the handlers, so a signal after the command returned has its default
 * effect too. No signal is ever swallowed.
 *
 * `close()` also makes sure the process ends: if something an operator module left open (a
 * timer, a connection) still keeps it alive a second after the command returned, it says so and
 * exits with the command's exit code.
 */
export function processIo(): RunIo {
  let stopped: Promise<void> | undefined;
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      process.stderr.write(`converge: ${signal} again; exiting at once\n`);
      process.exit(128 + constants.signals[signal]);
    }
    signalled = true;
    process.stderr.write(`converge: stopping on ${signal} (send it again to exit at once)\n`);
    resolve();
  };
  let resolve: () => void = () => {};
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    errIsTerminal: process.stderr.isTTY === true,
    get stopped() {
      if (stopped === undefined) {
        stopped = new Promise<void>((r) => {
          resolve = r;
        });
        for (const signal of SIGNALS) process.on(signal, onSignal);
      }
      return stopped;
    },
    close: () => {
      for (const signal of SIGNALS) process.off(signal, onSignal);
      setTimeout(() => {
        process.stderr.write(
          'converge: something an operator module left open still keeps the process alive; exiting\n',
        );
        process.exit();
      }, EXIT_GRACE_MS).unref();
    },
  };
}
