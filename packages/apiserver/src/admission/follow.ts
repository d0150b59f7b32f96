import type { Clock } from '@converge/runtime';
import type { WebhookAdmission } from './webhook-admission.ts';

/**
 * Keeps {@link WebhookAdmission}'s cache honest when configurations are written past the API
 * server (straight into its store): every event of `open(signal)` — a watch of one configuration
 * kind — invalidates the cache, and so does a watch that fails or ends, which is then reopened after
 * 100 ms. Resolves once `signal` aborts.
 */
export async function invalidateOnChange(
  admission: Pick<WebhookAdmission, 'invalidate'>,
  open: (signal: AbortSignal) => AsyncIterable<unknown>,
  clock: Clock,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    try {
      for await (const _event of open(signal)) admission.invalidate();
    } catch {
      // reopened below; the cache cannot be trusted meanwhile
    }
    admission.invalidate();
    if (signal.aborted) return;
    await clock.sleep(100, signal).catch(() => undefined);
  }
}
