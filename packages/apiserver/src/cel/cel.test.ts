import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CelProgram,
  CelRuntimeError,
  CostLimitExceeded,
  CostMeter,
  celEnvironment,
  compileCel,
  estimateCost,
  PER_CALL_LIMIT,
} from './index.ts';

function program(source: string, declare: Record<string, string> = {}, type?: string): CelProgram {
  let env = celEnvironment({
    formats: { lower: (s) => (s === s.toLowerCase() ? [] : ['must be lower case']) },
  });
  for (const [name, t] of Object.entries(declare)) env = env.registerVariable(name, t);
  const compiled = compileCel(env, source, type);
  if (!('evaluate' in compiled)) throw new Error(compiled.message);
  return compiled;
}

function run(
  source: string,
  vars: Record<string, unknown> = {},
  declare: Record<string, string> = {},
): unknown {
  return program(source, declare).evaluate(vars, new CostMeter(PER_CALL_LIMIT));
}

function runtimeError(
  source: string,
  vars: Record<string, unknown> = {},
  declare: Record<string, string> = {},
): string {
  try {
    run(source, vars, declare);
  } catch (error) {
    if (error instanceof CelRuntimeError) return error.message;
    throw error;
  }
  throw new Error(`${source} did not fail`);
}

function compileProblem(source: string, declare: Record<string, string> = {}, type?: string): string {
  let env = celEnvironment();
  for (const [name, t] of Object.entries(declare)) env = env.registerVariable(name, t);
  const compiled = compileCel(env, source, type);
  if ('evaluate' in compiled) throw new Error(`${source} compiled`);
  return compiled.message;
}

describe('CEL values keep int, uint and double apart, as cel-go does', () => {
  it.each([
    ['9223372036854775807 + 1', 'integer overflow'],
    ['-9223372036854775808 - 1', 'integer overflow'],
    ['1u - 2u', 'unsigned integer overflow'],
    ['5 / 0', 'division by zero'],
    ['5 % 0', 'modulus by zero'],
    ['[1, 2][5]', 'index out of bounds: 5'],
    ['{"a": 1}["b"]', 'no such key: b'],
  ])('%s fails at runtime with %j', (source, message) => {
    expect(runtimeError(source)).toBe(message);
  });

  it('divides integers towards zero and compares int with double', () => {
    expect(run('-7 / 2 == -3 && 1 < 1.5 && 3 / 2 == 1')).toBe(true);
  });

  it('supports macros, optionals, bind, timestamps and durations', () => {
    expect(
      run(
        '[1, 2, 3].exists_one(x, x > 2) && [1, 2].map(x, x * 2) == [2, 4] && [1, 2, 3].filter(x, x % 2 == 1).size() == 2' +
          ' && optional.none().orValue(3) == 3 && cel.bind(x, 2, x * x) == 4' +
          ' && timestamp("2024-01-01T00:00:00Z") + duration("1h") == timestamp("2024-01-01T01:00:00Z")',
      ),
    ).toBe(true);
  });
});

describe('compile problems read as cel-go prints them', () => {
  it('points at the operator of a binary expression with no matching overload', () => {
    expect(compileProblem('self == true', { self: 'int' })).toBe(
      "ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(int, bool)'\n | self == true\n | .....^",
    );
  });

  it('names an undeclared reference', () => {
    expect(compileProblem('nope > 1')).toBe(
      "ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')\n | nope > 1\n | ^",
    );
  });

  it('refuses an expression of the wrong result type', () => {
    expect(compileProblem('1 + 1', {}, 'bool')).toBe('cel expression must evaluate to a bool');
  });

  it('refuses a literal regular expression Go would refuse', () => {
    expect(compileProblem("'a'.matches('[a')")).toBe('error parsing regexp: missing closing ]: `[a`');
  });

  it('refuses a computed regular expression Go would refuse when the rule runs', () => {
    expect(runtimeError("'a'.matches(self)", { self: '[a' }, { self: 'string' })).toBe(
      'error parsing regexp: missing closing ]: `[a`',
    );
    expect(runtimeError("'a'.findAll(self)", { self: 'a**' }, { self: 'string' })).toBe(
      'error parsing regexp: invalid nested repetition operator: `**`',
    );
  });
});

describe("Kubernetes' CEL libraries", () => {
  it.each([
    ['[1, 2, 3].isSorted() && ![3, 1].isSorted()', true],
    ['[1, 2, 3].sum() == 6 && [1.5, 2.5].sum() == 4.0', true],
    ['["b", "a"].min() == "a" && [1, 5, 3].max() == 5', true],
    ['[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2 && [1].indexOf(9) == -1', true],
    ['"abc".charAt(1) == "b" && "abc".charAt(3) == ""', true],
    ['"a-b-c".replace("-", "+") == "a+b+c" && "a-b-c".replace("-", "+", 1) == "a+b-c"', true],
    ['"abc".indexOf("c") == 2 && "abca".lastIndexOf("a") == 3 && "AbC".lowerAscii() == "abc"', true],
    ['"a,b".split(",") == ["a", "b"] && " x ".trim() == "x" && ["a", "b"].join("-") == "a-b"', true],
    ['"%s has %d items".format([dyn("list"), dyn(3)]) == "list has 3 items"', true],
    ['"%.2f%%".format([12.345]) == "12.35%" && "%x".format([255]) == "ff"', true],
    ['strings.quote("a\\"b") == "\\"a\\\\\\"b\\""', true],
    ['"abc123def45".find("[0-9]+") == "123" && "abc".find("[0-9]+") == ""', true],
    ['"a1b22c333".findAll("[0-9]+") == ["1", "22", "333"] && "a1b22".findAll("[0-9]+", 1) == ["1"]', true],
    ['"abc".matches("^a.c$") && !"abc".matches("^b")', true],
    [
      'sets.contains([1, 2, 3], [2, 3]) && sets.equivalent([1, 2], [2, 1]) && sets.intersects([1], [1, 5])',
      true,
    ],
  ])('%s', (source, expected) => {
    expect(run(source)).toBe(expected);
  });

  it.each([
    ['quantity("1Gi") == quantity("1024Mi")', true],
    ['quantity("1.5").isInteger() == false && quantity("2").asInteger() == 2', true],
    ['quantity("100m").add(1).compareTo(quantity("1100m")) == 0', true],
    ['quantity("2G").sub(quantity("1G")).isGreaterThan(quantity("999M"))', true],
    ['quantity("500m").isLessThan(quantity("1")) && quantity("-1").sign() == -1', true],
    ['quantity("1Ki").asApproximateFloat() == 1024.0', true],
    ['isQuantity("1.5Gi") && !isQuantity("1x") && !isQuantity("")', true],
  ])('quantities: %s', (source, expected) => {
    expect(run(source)).toBe(expected);
  });

  it("refuses a malformed quantity with resource.ParseQuantity's message", () => {
    expect(runtimeError('quantity("1.2.3") == quantity("1")')).toBe(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
  });

  it.each([
    ['url("https://example.com:8080/a%20b?x=1&x=2").getScheme() == "https"', true],
    ['url("https://example.com:8080/a").getHost() == "example.com:8080"', true],
    ['url("https://example.com:8080/a").getHostname() == "example.com"', true],
    [
      'url("https://example.com:8080/a").getPort() == "8080" && url("https://example.com/").getPort() == ""',
      true,
    ],
    ['url("https://[::1]:80/").getHostname() == "::1"', true],
    ['url("https://example.com/a%20b").getEscapedPath() == "/a%20b"', true],
    ['url("https://example.com/?x=1&x=2&y=").getQuery() == {"x": ["1", "2"], "y": [""]}', true],
    ['isURL("/absolute/path") && !isURL("relative") && !isURL("")', true],
  ])('URLs: %s', (source, expected) => {
    expect(run(source)).toBe(expected);
  });

  it("reports a URL Go's ParseRequestURI refuses", () => {
    expect(runtimeError('url("foo").getHost() == ""')).toBe(
      'URL parse error during conversion from string: parse "foo": invalid URI for request',
    );
  });

  it('validates named formats and knows which exist', () => {
    expect(run('format.named("lower").hasValue() && !format.named("nope").hasValue()')).toBe(true);
    expect(run('format.lower().validate("abc")')).toEqual(expect.objectContaining({}));
    expect(run('format.lower().validate("abc").hasValue()')).toBe(false);
    expect(run('format.named("lower").value().validate("ABC").value()')).toEqual(['must be lower case']);
  });
});

describe('the cost meter stops expensive evaluations', () => {
  const list = (n: number): string[] => Array.from({ length: n }, (_, i) => `item-${i}`);

  it('stops a nested comprehension over a large list with the cost-limit error', () => {
    const nested = program('self.all(x, !self.exists(y, x == y + "!"))', { self: 'list<string>' });
    const meter = new CostMeter(PER_CALL_LIMIT);
    expect(() => nested.evaluate({ self: list(5000) }, meter)).toThrow(CostLimitExceeded);
    expect(meter.exceeded).toBe(true);
    expect(meter.cost).toBeGreaterThan(PER_CALL_LIMIT);
  });

  it('does not let || or && swallow the cost-limit error', () => {
    const late = program('self.all(x, !self.exists(y, x == y + "!")) || true', { self: 'list<string>' });
    expect(late.evaluate({ self: list(10) }, new CostMeter(PER_CALL_LIMIT))).toBe(true);
    expect(() => late.evaluate({ self: list(5000) }, new CostMeter(PER_CALL_LIMIT))).toThrow(
      CostLimitExceeded,
    );
  });

  it('charges membership tests by the size of the list searched', () => {
    const membership = program('self.all(x, x in self)', { self: 'list<string>' });
    const small = new CostMeter(PER_CALL_LIMIT);
    membership.evaluate({ self: list(100) }, small);
    const large = new CostMeter(PER_CALL_LIMIT);
    membership.evaluate({ self: list(200) }, large);
    expect(large.cost).toBeGreaterThan(3.5 * small.cost);
  });

  it('stops a string doubled again and again before it grows large', () => {
    let source = 's19 + s19';
    for (let i = 19; i >= 1; i--) source = `cel.bind(s${i}, s${i - 1} + s${i - 1}, ${source})`;
    const doubling = program(`cel.bind(s0, self, ${source}).size() > 0`, { self: 'string' });
    const meter = new CostMeter(PER_CALL_LIMIT);
    expect(() => doubling.evaluate({ self: 'x'.repeat(100) }, meter)).toThrow(CostLimitExceeded);
    // stopped at the first concatenation whose result passes 10 000 000 characters
    expect(meter.cost).toBeLessThan(3 * PER_CALL_LIMIT);
  });

  it('charges equality of lists and objects by the elements compared', () => {
    const equal = program('self.all(x, self == self)', { self: 'list<list<int>>' });
    const rows = Array.from({ length: 1000 }, () => Array.from({ length: 30 }, (_, i) => BigInt(i)));
    expect(() => equal.evaluate({ self: rows }, new CostMeter(PER_CALL_LIMIT))).toThrow(CostLimitExceeded);
    expect(equal.evaluate({ self: rows.slice(0, 10) }, new CostMeter(PER_CALL_LIMIT))).toBe(true);
  });

  it('charges a call by the size of its operands and result', () => {
    const joined = program("self.all(x, self.join('') != '')", { self: 'list<string>' });
    const long = Array.from({ length: 2000 }, () => 'y'.repeat(1000));
    expect(() => joined.evaluate({ self: long }, new CostMeter(PER_CALL_LIMIT))).toThrow(CostLimitExceeded);
  });

  it('charges regular expressions by text length times pattern size', () => {
    const matches = program("self.matches('^([a-z]+)+[0-9]$')", { self: 'string' });
    const meter = new CostMeter(PER_CALL_LIMIT);
    // charged before matching: 2 for the call and `self`, then ceil((3e6 + 1) * 0.1) * ceil(16 * 0.25)
    expect(() => matches.evaluate({ self: 'a'.repeat(3_000_000) }, meter)).toThrow(CostLimitExceeded);
    expect(meter.cost).toBe(2 + 300_001 * 4);
  });

  it('charges findAll once per call, however many matches it finds, as kube does', () => {
    const findAll = program("self.findAll('[0-9]')", { self: 'string' });
    const many = new CostMeter(PER_CALL_LIMIT);
    const none = new CostMeter(PER_CALL_LIMIT);
    expect(findAll.evaluate({ self: '1'.repeat(1000) }, many)).toHaveLength(1000);
    expect(findAll.evaluate({ self: 'a'.repeat(1000) }, none)).toEqual([]);
    // the search: kube's ceil((1000 + 1) * 0.1) * ceil(5 * 0.25) either way (charging every search
    // would be ~100 000); the 1000 results: a tenth per element, as any call's result
    expect(many.cost).toBe(none.cost + 100);
    expect(many.cost).toBeLessThan(1_000);
  });

  it('bounds every evaluation: it either finishes within the limit or stops with the cost-limit error', () => {
    const rule = program('self.all(x, self.exists(y, x == y) && x.matches("^[a-z0-9-]+$"))', {
      self: 'list<string>',
    });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 1000, max: 200_000 }), (n, limit) => {
        const meter = new CostMeter(limit);
        try {
          expect(rule.evaluate({ self: list(n) }, meter)).toBe(true);
          expect(meter.cost).toBeLessThanOrEqual(limit);
        } catch (error) {
          expect(error).toBeInstanceOf(CostLimitExceeded);
          expect(meter.exceeded).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('the static estimate follows cel-go', () => {
  it('costs a quantifier as the list bound times one iteration, as the real validator measures', () => {
    const rule = program("self.all(x, x.contains('gpu'))", { self: 'list<string>' }, 'bool');
    const estimate = (items: number, length: number): number =>
      estimateCost(
        rule.ast,
        new Map([['self', { kind: 'list', maxSize: items, elements: { maxSize: length * 4 } }]]),
      );
    // per item: 3 for the loop, 1 for x, ceil(0.1 * 4 * maxLength) for contains
    expect(estimate(909_090, 16)).toBe(2 + 909_090 * 11);
    expect(estimate(10, 1024)).toBe(2 + 10 * 414);
  });

  it('treats the size of a converted value as unknown', () => {
    const message = program("'got ' + string(self)", { self: 'int' }, 'string');
    expect(estimateCost(message.ast, new Map([['self', { maxSize: 0 }]]))).toBeGreaterThan(1e18);
  });
});
