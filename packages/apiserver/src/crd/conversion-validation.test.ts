import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseGoUrl, validateConversion } from './conversion-validation.ts';
import { causeText } from './field-errors.ts';
import { databaseCrd, variant } from './testdata/crds.ts';
import { validateCrd, validateCrdUpdate } from './validate-crd.ts';

describe('parseGoUrl (the parts of Go url.Parse the webhook URL checks read)', () => {
  it.each([
    [
      'https://a.example.com/convert',
      { scheme: 'https', host: 'a.example.com', user: undefined, rawQuery: '', fragment: '' },
    ],
    [
      'https://u:p@h:8443/x?q=1#f',
      { scheme: 'https', host: 'h:8443', user: 'u:p', rawQuery: 'q=1', fragment: 'f' },
    ],
    ['https:///p', { scheme: 'https', host: '' }],
    ['a.example.com/convert', { scheme: '', host: '' }],
    ['https://h?', { rawQuery: '' }],
  ])('%s', (raw, parts) => {
    expect(parseGoUrl(raw)).toMatchObject(parts);
  });

  it.each([
    [':x', 'parse ":x": missing protocol scheme'],
    ['https://h:port', 'parse "https://h:port": invalid port ":port" after host'],
    ['https://a b', 'parse "https://a b": invalid character " " in host name'],
    ['https://h/%zz', 'parse "https://h/%zz": invalid URL escape "%zz"'],
    ['https://h/\n', 'parse "https://h/\\n": net/url: invalid control character in URL'],
  ])('%j is a parse error', (raw, error) => {
    expect(parseGoUrl(raw)).toEqual({ error });
  });
});

describe('validateConversion', () => {
  it('never throws, whatever the stanza', () => {
    fc.assert(
      fc.property(fc.anything(), fc.boolean(), (stanza, preserve) => {
        const out: unknown[] = [];
        validateConversion(stanza, preserve, 'spec.conversion', out as never);
        for (const cause of out)
          expect(cause).toMatchObject({ reason: expect.any(String), message: expect.any(String) });
      }),
    );
  });
});

describe('conversionReviewVersions on update', () => {
  const withVersions = (versions: string[]) =>
    variant(databaseCrd, (d) => {
      (d.spec as { conversion?: unknown }).conversion = {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: versions, clientConfig: { url: 'https://a.example.com/c' } },
      };
    });
  const unrecognized =
    'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1';

  it('must name a version the server speaks on create and when the stored CRD did', () => {
    expect(validateCrd(withVersions(['v2'])).map(causeText)).toEqual([unrecognized]);
    expect(validateCrdUpdate(withVersions(['v2']), withVersions(['v1'])).map(causeText)).toEqual([
      unrecognized,
    ]);
  });

  it('need not be fixed by an update when the stored CRD named none either (upstream ratchet)', () => {
    expect(validateCrdUpdate(withVersions(['v2']), withVersions(['v3']))).toEqual([]);
  });
});
