/**
 * Data of the overview tests (console and operator API): batches and messages written at known times
 * straight into the database (the pipeline stamps batches with the database's clock, which a test
 * cannot move), and contacts through the operator API with their opt-out times set afterwards.
 */
import type { TestServer } from '../helpers/server.ts';

type Msg = { status: 'pending' | 'sent' | 'delivered' | 'read' | 'failed' | 'skipped'; reason?: string; error?: string; error_code?: string };

let phoneSeq = 0;
const runTag = String(Math.floor(Math.random() * 1e3)).padStart(3, '0');

/** Inserts a completed batch of `messages` accepted at `createdAt` (ISO) for the company. */
export async function insertBatchAt(s: TestServer, companyId: number, createdAt: string, messages: Msg[]): Promise<string> {
  const db = s.service.deps.database.db;
  const batchId = crypto.randomUUID();
  await db.insertInto('batches').values({
    batch_id: batchId, company_id: companyId, kind: 'campaign', source_id: 1, status: 'completed',
    total: messages.length, items: '[]', template: '{}', created_at: new Date(createdAt), completed_at: new Date(createdAt),
  }).execute();
  await db.insertInto('messages').values(messages.map((m, seq) => ({
    message_id: crypto.randomUUID(), batch_id: batchId, company_id: companyId, seq,
    phone: `+49151${runTag}${String(++phoneSeq).padStart(5, '0')}`, status: m.status,
    reason: m.reason ?? null, error: m.error ?? null, error_code: m.error_code ?? null,
  }))).execute();
  return batchId;
}

/** Adds contacts (`opted_out_at`: null = subscribed) through the operator API, then sets their opt-out times. */
export async function addContacts(s: TestServer, companyId: number, optOuts: (string | null)[]): Promise<void> {
  const phones = optOuts.map(() => `+49152${runTag}${String(++phoneSeq).padStart(5, '0')}`);
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: phones.map((phone, i) => ({ phone, opted_out: optOuts[i] !== null })) });
  const db = s.service.deps.database.db;
  for (const [i, at] of optOuts.entries()) {
    if (at) await db.updateTable('contacts').set({ opt_out_at: new Date(at) }).where('company_id', '=', companyId).where('phone', '=', phones[i]).execute();
  }
}

/**
 * The data set of these tests, for one company (times in UTC; Berlin is UTC+1 in February/March 2026):
 * - 2026-03-10 08:00Z (today): read, delivered, failed 131026, failed 131026
 * - 2026-03-09 23:30Z (Berlin: today 00:30; UTC: yesterday): sent, skipped opted_out
 * - 2026-02-08 23:30Z (Berlin: 02-09 00:30, the first day of the period; UTC: 02-08, before it): read
 * - 2026-02-08 22:30Z (Berlin: 02-08 23:30, before the period): read, read
 * - 2026-03-10 23:30Z (Berlin: tomorrow): pending
 * - 2026-03-01 12:00Z: failed HTTP 503, skipped invalid_phone, skipped opted_out, pending
 * - contacts: 5, two opted out (one inside the period, one 40 days before now)
 */
export async function seedCompany(s: TestServer, companyId: number): Promise<void> {
  await insertBatchAt(s, companyId, '2026-03-10T08:00:00Z', [
    { status: 'read' }, { status: 'delivered' },
    { status: 'failed', error: 'Message undeliverable (HTTP 400)', error_code: '131026' },
    { status: 'failed', error: 'Message undeliverable (HTTP 400)', error_code: '131026' },
  ]);
  await insertBatchAt(s, companyId, '2026-03-09T23:30:00Z', [{ status: 'sent' }, { status: 'skipped', reason: 'opted_out' }]);
  await insertBatchAt(s, companyId, '2026-02-08T23:30:00Z', [{ status: 'read' }]);
  await insertBatchAt(s, companyId, '2026-02-08T22:30:00Z', [{ status: 'read' }, { status: 'read' }]);
  await insertBatchAt(s, companyId, '2026-03-10T23:30:00Z', [{ status: 'pending' }]);
  await insertBatchAt(s, companyId, '2026-03-01T12:00:00Z', [
    { status: 'failed', error: 'HTTP 503', error_code: '503' }, { status: 'skipped', reason: 'invalid_phone' },
    { status: 'skipped', reason: 'opted_out' }, { status: 'pending' },
  ]);
  await addContacts(s, companyId, [null, null, null, '2026-03-05T09:00:00Z', '2026-01-29T09:00:00Z']);
}

