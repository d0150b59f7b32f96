/**
 * The Website CRD's rules, checked as the API server checks them but without one
 * (`validateCustomResource` from @converge/apiserver): the CRD compiles, a domain cannot change,
 * in either version, and the message is the one kubectl prints.
 */
import { readFileSync } from 'node:fs';
import { type CrdLike, compileCrdValidations, validateCustomResource } from '@converge/apiserver';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const crd = parse(readFileSync(new URL('manifests/crd.yaml', import.meta.url), 'utf8')) as CrdLike;

const alpha = (domain: string, replicas = 1) => ({
  apiVersion: 'examples.converge.dev/v1alpha1',
  kind: 'Website',
  metadata: { name: 'home', namespace: 'default' },
  spec: { domain, content: 'c', replicas },
});
const beta = (hostnames: string[]) => ({
  apiVersion: 'examples.converge.dev/v1beta1',
  kind: 'Website',
  metadata: { name: 'home', namespace: 'default' },
  spec: { hostnames, content: 'c' },
});

describe('the Website CRD', () => {
  it('is accepted: both versions valid, every rule compiles within the cost budget', () => {
    expect(compileCrdValidations(crd)).toEqual([]);
  });

  it('v1alpha1: a new domain is refused with the rule’s message, other spec edits pass', () => {
    const stored = alpha('home.example.com');
    expect(validateCustomResource(crd, alpha('home.example.com', 3), { oldObject: stored }).causes).toEqual(
      [],
    );
    const moved = validateCustomResource(crd, alpha('away.example.com'), { oldObject: stored });
    expect(moved.message).toBe(
      'Website.examples.converge.dev "home" is invalid: spec.domain: Forbidden: is immutable: it was home.example.com, create a new Website for away.example.com',
    );
    expect(validateCustomResource(crd, alpha('away.example.com')).causes).toEqual([]); // a create has no oldSelf
  });

  it('v1beta1: the first hostname is immutable, the others may change', () => {
    const stored = beta(['home.example.com', 'www.home.example.com']);
    const more = beta(['home.example.com', 'home.example.org']);
    expect(validateCustomResource(crd, more, { oldObject: stored }).causes).toEqual([]);
    const moved = validateCustomResource(crd, beta(['www.home.example.com']), { oldObject: stored });
    expect(moved.message).toBe(
      'Website.examples.converge.dev "home" is invalid: spec.hostnames: Forbidden: the first hostname is immutable: it was home.example.com, create a new Website for www.home.example.com',
    );
  });

  it('v1beta1: hostnames are a set of at least one', () => {
    expect(validateCustomResource(crd, beta([])).message).toContain(
      'spec.hostnames: Invalid value: 0: spec.hostnames in body should have at least 1 items',
    );
    expect(validateCustomResource(crd, beta(['a.example.com', 'a.example.com'])).message).toContain(
      'spec.hostnames[1]: Duplicate value: "a.example.com"',
    );
  });

  it('leaves replicas unset (the defaulting webhook sets them) and keeps them within 0–50', () => {
    const { spec: _, ...bare } = alpha('home.example.com');
    const created = validateCustomResource(crd, {
      ...bare,
      spec: { domain: 'home.example.com', content: 'c' },
    });
    expect(created.object).toMatchObject({ spec: { domain: 'home.example.com', content: 'c' } });
    expect((created.object as { spec: object }).spec).not.toHaveProperty('replicas');
    expect(validateCustomResource(crd, alpha('home.example.com', 51)).message).toContain(
      'spec.replicas: Invalid value: 51: spec.replicas in body should be less than or equal to 50',
    );
  });
});
