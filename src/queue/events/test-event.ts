/**
 * A test event (console "Send test event", POST /admin/event-endpoints/{id}/test): one signed attempt,
 * made at once from the calling process, of `{"type":"endpoint.test","timestamp":…,"data":{endpoint_id}}`
 * with a fresh `evt_` id, signed and bounded exactly like a real delivery (send.ts), through the
 * service's one outbound client (delivery/client.ts, use `tests`). Not stored, not retried; the outcome
 * is answered to the caller.
 */
import { randomUUID } from 'node:crypto';
import type { DeliveryClient } from '../../delivery/client.ts';
import { createSigner } from '../../delivery/sign.ts';
import { sendEvent, type AttemptOutcome } from './send.ts';

/** Sends one test event to `url` signed with `secret` through `client`; never throws. */
export async function sendTestEvent(opts: { client: DeliveryClient; url: string; secret: string; endpointId: number; now: Date }): Promise<AttemptOutcome & { event_id: string }> {
  const id = 'evt_' + randomUUID().replaceAll('-', '');
  const body = JSON.stringify({ type: 'endpoint.test', timestamp: opts.now.toISOString(), data: { endpoint_id: opts.endpointId } });
  const outcome = await sendEvent({ client: opts.client, use: 'tests', url: opts.url, id, body, signer: createSigner(opts.secret) });
  return { ...outcome, event_id: id };
}
