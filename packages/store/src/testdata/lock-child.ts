/**
 * A child process for the lock race test: prints `ready` once loaded, then per stdin line
 * `open DIR` tries to open a store on DIR and prints `opened`, `locked CODE REASON` or
 * `error MESSAGE`; `close` closes the store it opened and prints `closed`.
 */
import { createInterface } from 'node:readline';
import { isConvergeError } from '@converge/runtime';
import { StoreLockedError } from '../errors.ts';
import { Store } from '../store.ts';

let store: Store | undefined;
const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

say('ready');
for await (const line of createInterface({ input: process.stdin })) {
  const [verb, dir] = line.split(' ');
  if (verb === 'open' && dir !== undefined) {
    try {
      store = new Store({ dataDir: dir });
      say('opened');
    } catch (error) {
      if (error instanceof StoreLockedError) say(`locked ${error.code} ${error.reason}`);
      else say(`error ${isConvergeError(error) ? error.code : ''} ${(error as Error).message}`);
    }
  } else if (verb === 'close') {
    await store?.close();
    store = undefined;
    say('closed');
  }
}
