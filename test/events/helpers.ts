/**
 * Helpers of the event tests (docs/events.md): shortcuts over the operator API (an endpoint
 * on the shared webhook receiver, test/helpers/receiver.ts, which then verifies its requests with the
 * endpoint's secret; a send; waiting for a batch) and a poll on what the receiver saw.
 */
import type { WebhookReceiver } from '../helpers/receiver.ts';
import { eventually, type TestServer } from '../helpers/server.ts';

/** Registers an endpoint at `receiver.origin + path` (all types unless given); the receiver learns its secret. */
export async function addEndpoint(s: TestServer, receiver: WebhookReceiver, companyId: number, path: string, events?: string[]): Promise<{ endpoint_id: number; secret: string; events: string[] }> {
  const ep = await s.admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: receiver.origin + path, ...(events ? { events } : {}) }, 201);
  receiver.secretFor(path, ep.secret);
  return ep;
}

/** A distinct valid German mobile number for item `i` of run `run`. */
export function phone(run: number, i: number): string {
  return `+49152${String(run % 1000).padStart(3, '0')}${String(i).padStart(5, '0')}`;
}

/** Sends an API automation to `phones`; returns the batch id. */
export async function sendTo(s: TestServer, companyId: number, key: string, phones: string[]): Promise<string> {
  const automation = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'events', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } }, 201);
  const res = await s.api('/api/automations/send', { key, body: { automation_id: automation.automation_id, contacts: phones.map((p, i) => ({ phone: p, first_name: `F${i}` })) } });
  if (res.status !== 200) throw new Error(`send answered ${res.status}: ${res.text}`);
  return res.json.batch_id;
}

/** Waits until the batch is completed. */
export async function batchCompleted(s: TestServer, batchId: string, timeoutMs = 45_000): Promise<any> {
  return eventually(async () => {
    const b = await s.admin('GET', `/admin/batches/${batchId}`);
    return b.status === 'completed' ? b : undefined;
  }, timeoutMs);
}

/** Waits until `check(receiver)` holds (polling, real time). */
export function until(check: () => boolean, timeoutMs = 30_000): Promise<true> {
  return eventually(async () => check() || undefined, timeoutMs, 25);
}

export const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
