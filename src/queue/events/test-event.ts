/**
 * A test event (console "Send test event", POST /admin/event-endpoints/{id}/test): one signed attempt,
 * made at once from the calling process, of `{"type":"endpoint.test","timestamp":…,"data":{endpoint_id}}`
 * with a fresh `evt_` id, signed and bounded exactly like a real delivery (send.ts). Not stored, not
 * retried; the outcome is answered to the caller.
 */
import { randomUUID } from 'node:crypto';
import { createDeliveryAgent } from '../../delivery/agent.ts';
import { createSigner } from '../../delivery/sign.ts';
import type { AddressPolicy } from '../../domain/network-guard.ts';
import { sendEvent, type AttemptOutcome } from './send.ts';

/** Sends one test event to `url` signed with `secret`; never throws. */
export async function sendTestEvent(opts: { url: string; secret: string; endpointId: number; policy: AddressPolicy; timeoutMs: number; now: Date }): Promise<AttemptOutcome & { event_id: string }> {
  const id = 'evt_' + randomUUID().replaceAll('-', '');
  const body = JSON.stringify({ type: 'endpoint.test', timestamp: opts.now.toISOString(), data: { endpoint_id: opts.endpointId } });
  const agent = createDeliveryAgent(opts.policy, { timeoutMs: opts.timeoutMs, connections: 1 });
  try {
    const outcome = await sendEvent({ url: opts.url, id, body, signer: createSigner(opts.secret), agent, timeoutMs: opts.timeoutMs });
    return { ...outcome, event_id: id };
  } finally {
    await agent.destroy().catch(() => {});
  }
}
