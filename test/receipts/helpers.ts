/**
 * Helpers of the receipts tests: a company with a WhatsApp channel on the fake Graph API (with app
 * secret and verify token), sends that wait for completion, and a wait for the `receipts-apply` queue
 * to have nothing due (so a test can assert that a receipt changed nothing).
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { graphTemplate, type FakeGraph } from '../helpers/fake-graph.ts';
import { eventually, type TestServer } from '../helpers/server.ts';
import { whatsappCompany as syncedWhatsappCompany } from '../helpers/whatsapp.ts';

/**
 * The receipts tests' template. Its parameter has a `default` (docs/whatsapp.md "Empty parameters"): a
 * recipient sent by phone only has no first name, and an empty parameter would be skipped, not sent.
 */
export const TEMPLATE = { body: 'Hi {{ first_name | default: "there" }}, your order has shipped.', whatsapp: { name: 'order_shipped', language: 'en_US' } };

export interface WaCompany { companyId: number; key: string; phoneNumberId: string; appSecret: string; verifyToken: string; automationId: number }

/**
 * A company whose channel is WhatsApp on `graph` with TEMPLATE's WhatsApp template approved in its
 * synced catalogue (test/helpers/whatsapp.ts), and an automation of TEMPLATE.
 */
export async function whatsappCompany(s: TestServer, graph: FakeGraph, overrides: Record<string, unknown> = {}): Promise<WaCompany> {
  const { companyId, key, phoneNumberId, appSecret, verifyToken } = await syncedWhatsappCompany(s, graph, {
    company: overrides, templates: [graphTemplate('order_shipped', 'en_US', { body: 1 })],
  });
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'wa', type: 'api', active: true, template: TEMPLATE }, 201);
  return { companyId, key, phoneNumberId, appSecret, verifyToken, automationId: a.automation_id };
}

/** Waits until the batch is completed; returns it. */
export async function completedBatch(s: TestServer, batchId: string): Promise<any> {
  return eventually(async () => {
    const b = await s.admin('GET', `/admin/batches/${batchId}`);
    return b.status === 'completed' ? b : undefined;
  }, 45_000);
}

/** The messages of a batch by phone. */
export async function messagesByPhone(s: TestServer, batchId: string): Promise<Map<string, any>> {
  const { messages } = await s.admin('GET', `/admin/batches/${batchId}/messages`);
  return new Map(messages.map((m: any) => [m.phone, m]));
}

/** Waits until no `receipts-apply` job is due or running (deferred follow-ups of unknown ids may remain). */
export async function receiptsSettled(s: TestServer): Promise<void> {
  const db = s.service.deps.database.db;
  await eventually(async () => {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job
      WHERE name = 'receipts-apply' AND state IN ('created', 'retry', 'active') AND start_after <= now()`.execute(db);
    return Number(rows[0].n) === 0;
  });
}

/** Sends an automation to `phones` and waits until the batch is completed; returns batch id and wamids by phone. */
export async function sendAndComplete(s: TestServer, graph: FakeGraph, c: WaCompany, phones: string[]) {
  const res = await s.api('/api/automations/send', { key: c.key, body: { automation_id: c.automationId, contacts: phones.map((phone, i) => ({ phone, first_name: `F${i}` })) } });
  assert.equal(res.status, 200, res.text);
  const batch = await completedBatch(s, res.json.batch_id);
  const wamids = new Map<string, string>();
  for (const [wamid, r] of graph.sent) if (phones.includes('+' + r.body.to)) wamids.set('+' + r.body.to, wamid);
  return { batchId: res.json.batch_id as string, batch, wamids };
}
