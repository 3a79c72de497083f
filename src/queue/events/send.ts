/**
 * One HTTP attempt to deliver an event (docs/events.md): POST of the stored body, exactly,
 * through the one signed POST of outbound delivery (delivery/post.ts: signed with the `standardwebhooks`
 * library, bounded by DELIVERY_TIMEOUT and the 64 KiB answer cap, classified by delivery/failure.ts):
 *
 *   webhook-id:        the event id (the same on every attempt)
 *   webhook-timestamp: unix seconds of the attempt (real time: receivers compare it with their clock)
 *   webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body"> with the endpoint's whsec_ secret
 *
 * Connections go through the service's one outbound client (delivery/client.ts) whose agents' lookup
 * is the network guard's: a URL that resolves to a private address is refused at connect time too. Never throws: every outcome is
 * an AttemptOutcome, in the shape the attempt log stores.
 */
import type { Webhook } from 'standardwebhooks';
import type { DeliveryClient, DeliveryUse } from '../../delivery/client.ts';

/**
 * One attempt as the attempt log keeps it. `status_code`: null when no whole answer arrived.
 * `retry_after_ms`: the answer's Retry-After (ms, at most 7 days), only on retryable failures.
 */
export interface AttemptOutcome {
  ok: boolean;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  duration_ms: number;
  retry_after_ms?: number;
}

/**
 * POSTs `body` to `url` signed for `id` with `signer` (delivery/sign.ts `createSigner` of the
 * endpoint's secret) through `client` for `use` (`events`, or `tests` for a test event). `signal`
 * interrupts it (service stopping).
 */
export async function sendEvent(opts: { client: DeliveryClient; use: DeliveryUse; url: string; id: string; body: string; signer: Webhook; signal?: AbortSignal }): Promise<AttemptOutcome> {
  const { client, use, ...req } = opts;
  const o = await client.postSigned(use, { ...req, userAgent: 'cms-events/1' });
  return {
    ok: !o.failure, status_code: o.statusCode, error: o.failure?.error ?? null, response_excerpt: o.excerpt,
    duration_ms: o.durationMs, retry_after_ms: o.failure?.retryAfterMs,
  };
}
