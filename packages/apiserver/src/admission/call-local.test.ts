import { VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { type LocalWebhookDispatch, postReviewLocally } from './call.ts';

const endpoint = { url: 'https://127.0.0.1:9443/validate?timeout=10s' };
const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u' } };

describe('a webhook call answered in process', () => {
  it('sends the review as JSON text to the path and query, and parses the answer', async () => {
    const seen: [string, string][] = [];
    const dispatch: LocalWebhookDispatch = async (path, body) => {
      seen.push([path, body]);
      return { status: 200, body: JSON.stringify({ response: { uid: 'u', allowed: true } }) };
    };
    const answer = await postReviewLocally(dispatch, endpoint, review, 10_000, new VirtualClock());
    expect(answer).toEqual({ response: { uid: 'u', allowed: true } });
    expect(seen).toEqual([['/validate?timeout=10s', JSON.stringify(review)]]);
  });

  it('fails as an HTTPS call does: a status outside 2xx, an answer that is not JSON, a timeout', async () => {
    const clock = new VirtualClock();
    const status: LocalWebhookDispatch = async () => ({ status: 404, body: '{"kind":"Status"}' });
    await expect(postReviewLocally(status, endpoint, review, 10_000, clock)).rejects.toThrow(
      'failed to call webhook: the server responded with the status code 404 but did not return more information',
    );
    const garbage: LocalWebhookDispatch = async () => ({ status: 200, body: '{not json' });
    await expect(postReviewLocally(garbage, endpoint, review, 10_000, clock)).rejects.toThrow(
      /^received invalid webhook response: /,
    );
    let aborted: AbortSignal | undefined;
    const slow: LocalWebhookDispatch = (_path, _body, signal) => {
      aborted = signal;
      return new Promise(() => {});
    };
    const call = postReviewLocally(slow, endpoint, review, 10_000, clock);
    const outcome = call.then(
      () => 'answered',
      (error: Error) => error.message,
    );
    await clock.advance(9_999);
    expect(aborted?.aborted).toBe(false);
    await clock.advance(1);
    expect(await outcome).toBe(
      'failed to call webhook: Post "https://127.0.0.1:9443/validate?timeout=10s": context deadline exceeded',
    );
    expect(aborted?.aborted).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });
});
