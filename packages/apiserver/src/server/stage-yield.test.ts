import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { noteBodySize, YIELDING_BODY_BYTES, yieldBetweenStages } from './stage-yield.ts';

const request = (): IncomingMessage => ({}) as IncomingMessage;

describe('yieldBetweenStages', () => {
  it('lets the event loop run (a setImmediate queued before) for a body over the bound', async () => {
    const req = request();
    noteBodySize(req, YIELDING_BODY_BYTES + 1);
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    await yieldBetweenStages(req);
    expect(ran).toBe(true);
  });

  it('does not yield for a body at the bound, nor for a request whose body was not read', async () => {
    const small = request();
    noteBodySize(small, YIELDING_BODY_BYTES);
    let ran = false;
    const timer = setImmediate(() => {
      ran = true;
    });
    await yieldBetweenStages(small);
    await yieldBetweenStages(request());
    expect(ran).toBe(false);
    clearImmediate(timer);
  });
});
