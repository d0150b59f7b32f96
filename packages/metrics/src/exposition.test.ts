import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseExposition, sampleValue } from './exposition-test-support.ts';

describe('the test exposition parser', () => {
  it('reads what prom-client writes: help, types, escaped labels, histograms', async () => {
    const registry = new Registry();
    const counter = new Counter({
      name: 'c_total',
      help: 'a "help" \\ text\nline',
      labelNames: ['l'],
      registers: [registry],
    });
    const histogram = new Histogram({
      name: 'h_seconds',
      help: 'h',
      buckets: [0.1, 1],
      registers: [registry],
    });
    await fc.assert(
      fc.asyncProperty(fc.string(), async (label) => {
        counter.reset();
        counter.labels(label).inc(3);
        histogram.observe(0.5);
        const families = parseExposition(await registry.metrics());
        expect(families.get('c_total')?.type).toBe('counter');
        expect(families.get('c_total')?.help).toBe('a "help" \\ text\nline');
        expect(sampleValue(families, 'c_total', { l: label })).toBe(3);
        expect(families.get('h_seconds')?.type).toBe('histogram');
        expect(sampleValue(families, 'h_seconds_bucket', { le: '+Inf' })).toBeGreaterThan(0);
      }),
      { numRuns: 50 },
    );
  });

  it('rejects lines that are not samples', () => {
    expect(() => parseExposition('bad line {')).toThrow(/not a sample/);
    expect(() => parseExposition('x{a="b} 1')).toThrow(/not a sample/);
    expect(() => sampleValue(parseExposition('x 1\nx 2'), 'x')).toThrow(/2 samples/);
  });
});
