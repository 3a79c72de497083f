/**
 * The consent ledger and suppression after erasure (docs/audience.md "The consent ledger",
 * "Suppression after erasure"), through the real server and database:
 *
 * - every way a contact's opt-out state changes writes one entry `{at, opted_out, source, category,
 *   evidence}`: inbound opt-out and opt-in keywords (the message's id and text), the operator API's
 *   PATCH and PUT (with `consent_evidence`), a CSV import (its id and line), the console's button (the
 *   user's email and the button's wording); an unchanged state writes none; `GET …/consent` lists them
 *   oldest first; the CSV export's `opted_out, opt_out_source, opt_out_at` follow the latest;
 * - the route's errors (404 unknown company / invalid or unknown number, 422 bad path) and bad
 *   `consent_evidence` (422, nothing changed);
 * - erasure keeps the ledger under the number's digest (no personal data), says so in its answer, and
 *   a number that opted out stays opted out when it comes back through an import (even one saying
 *   `opted_out: false`), a CSV import, an automation trigger, a campaign send (admin and 4.4) or an
 *   inbound message: campaigns skip it until it opts in again; a number that opted back in comes
 *   back subscribed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { parse } from 'csv-parse/sync';
import { postInbound, startFakeGraph, waText, type FakeGraph } from '../helpers/fake-graph.ts';
import { ADMIN_TOKEN, eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { ConsoleClient, freshEmail, newUser } from '../console/helpers.ts';
import { whatsappCompany } from '../receipts/helpers.ts';

let s: TestServer;
let graph: FakeGraph;
before(async () => {
  s = await startTestServer();
  graph = await startFakeGraph();
  await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
});
after(async () => {
  await s.close();
  await graph.close();
});

const db = () => s.service.deps.database.db;
let seq = 10_000_000 + Math.floor(Math.random() * 80_000_000);
/** A fresh valid German mobile number. */
const phone = () => `+49152${String(seq++)}`;
const enc = encodeURIComponent;

async function completed(batchId: string): Promise<any> {
  return eventually(async () => {
    const b = await s.admin('GET', `/admin/batches/${batchId}`);
    return b.status === 'completed' ? b : undefined;
  }, 45_000);
}
async function messagesOf(batchId: string): Promise<any[]> {
  await completed(batchId);
  return (await s.admin('GET', `/admin/batches/${batchId}/messages`)).messages;
}
async function csvImport(companyId: number, csv: string): Promise<any> {
  const res = await fetch(`${s.url}/admin/companies/${companyId}/contact-imports`, {
    method: 'POST', body: csv, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' },
  });
  assert.equal(res.status, 202, await res.clone().text());
  const imp = await res.json();
  return eventually(async () => {
    const x = await s.admin('GET', `/admin/companies/${companyId}/contact-imports/${imp.import_id}`);
    return x.status === 'completed' ? x : undefined;
  }, 45_000);
}
const consent = async (companyId: number, p: string) => (await s.admin('GET', `/admin/companies/${companyId}/contacts/${enc(p)}/consent`)).entries;
const contact = (companyId: number, p: string) => s.admin('GET', `/admin/companies/${companyId}/contacts/${enc(p)}`);

describe('the ledger', () => {
  test('every way the state changes writes one entry with its evidence; oldest first; the export follows the latest', async () => {
    const c = await whatsappCompany(s, graph);
    const p = phone();
    const entries = () => consent(c.companyId, p);

    // 1. Inbound STOP (keyword): the message's id and text, at the message's time.
    const tStop = Date.parse('2026-03-02T08:00:00Z');
    const stop = waText(p.slice(1), ' Stop ', tStop);
    assert.equal((await postInbound(s.url, c.appSecret, c.phoneNumberId, [stop])).status, 200);
    await eventually(async () => (await contact(c.companyId, p).catch(() => undefined))?.opted_out);
    // 2. Inbound START a minute later (keyword opt-in).
    const start = waText(p.slice(1), 'START', tStop + 60_000);
    assert.equal((await postInbound(s.url, c.appSecret, c.phoneNumberId, [start])).status, 200);
    await eventually(async () => (await contact(c.companyId, p)).opted_out === false);
    // 3. Operator PATCH, with consent_evidence; the same state again writes nothing.
    await s.admin('PATCH', `/admin/companies/${c.companyId}/contacts/${enc(p)}`, { opted_out: true, consent_evidence: 'Asked by phone to stop offers (ticket 4711)' });
    await s.admin('PATCH', `/admin/companies/${c.companyId}/contacts/${enc(p)}`, { opted_out: true, consent_evidence: 'again' });
    // 4. Operator PUT (import through the API), with consent_evidence; the same again writes nothing.
    await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: p, opted_out: false, consent_evidence: 'Signup form: "Send me offers"' }] });
    await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: p, opted_out: false }] });
    // 5. CSV import: its id and the row's line.
    const imp = await csvImport(c.companyId, `phone,first_name,opted_out\n+4915200000000,X,no\n${p},Ada,yes\n`);
    // 6. The console's button: the user's email and the button's wording.
    const email = await newUser(s, c.companyId, freshEmail('owner'), 'owner');
    const cl = new ConsoleClient(s.url);
    await cl.signIn(email);
    const page = await cl.get(`/console/contacts/${enc(p)}`);
    assert.match(page.text, /data-consent/);
    const pressed = await cl.submit(`/console/contacts/${enc(p)}`, `/console/contacts/${enc(p)}/opt-out`, { opted_out: 'false' });
    assert.equal(pressed.status, 303);

    const got = await entries();
    assert.deepEqual(got.map((e: any) => [e.source, e.opted_out, e.category]), [
      ['keyword', true, 'marketing'], ['keyword', false, 'marketing'], ['operator', true, 'marketing'],
      ['operator', false, 'marketing'], ['import', true, 'marketing'], ['console', false, 'marketing'],
    ]);
    assert.equal(got[0].at, new Date(tStop).toISOString());
    assert.deepEqual(got[0].evidence, { inbound_message_id: stop.id, text: ' Stop ' });
    assert.deepEqual(got[1].evidence, { inbound_message_id: start.id, text: 'START' });
    assert.equal(got[1].at, new Date(tStop + 60_000).toISOString());
    assert.deepEqual(got[2].evidence, { actor: 'admin', operation: 'update_contact', note: 'Asked by phone to stop offers (ticket 4711)' });
    assert.deepEqual(got[3].evidence, { actor: 'admin', operation: 'import_contacts', note: 'Signup form: "Send me offers"' });
    assert.deepEqual(got[4].evidence, { import_id: imp.import_id, line: 3, actor: 'admin' });
    assert.deepEqual(got[5].evidence, { user: email, wording: 'Opt back in to campaigns' });
    const times = got.map((e: any) => Date.parse(e.at));
    assert.ok(times.slice(1).every((t: number, i: number) => t >= times[i]), 'oldest first');

    // The console shows the history.
    const shown = await cl.get(`/console/contacts/${enc(p)}`);
    const table = shown.text.slice(shown.text.indexOf('data-consent'));
    assert.match(table, /Opted out[\s\S]*keyword[\s\S]*ticket 4711[\s\S]*Send me offers[\s\S]*import id: \d+; line: 3[\s\S]*Opt back in to campaigns/);

    // The export's columns follow the latest entry.
    const res = await fetch(`${s.url}/admin/companies/${c.companyId}/contacts/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const rows = parse(await res.text(), { columns: true }) as Record<string, string>[];
    const row = rows.find((r) => r.phone === p)!;
    assert.deepEqual([row.opted_out, row.opt_out_source, row.opt_out_at], ['false', 'console', got[5].at]);
    const view = await contact(c.companyId, p);
    assert.deepEqual([view.opted_out, view.opt_out_source, view.opt_out_at], [false, 'console', got[5].at]);

    // A contact whose state never changed: 200, no entries. One created opted out: one entry.
    const [q, r] = [phone(), phone()];
    await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: q }, { phone: r, opted_out: true }] });
    assert.deepEqual(await consent(c.companyId, q), []);
    assert.deepEqual((await consent(c.companyId, r)).map((e: any) => [e.source, e.opted_out]), [['operator', true]]);
    assert.deepEqual((await consent(c.companyId, '0' + r.slice(3))).length, 1, 'the national form names the same number');
  });

  test('the route and consent_evidence refuse bad input with 404 / 422, never 500, and change nothing', async () => {
    const id = (await s.admin('POST', '/admin/companies', { name: 'Ledger Co' }, 201)).company_id;
    const p = phone();
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: p }] });
    assert.equal((await s.admin('GET', `/admin/companies/999999999/contacts/${enc(p)}/consent`, undefined, 404)).detail, 'Company not found');
    assert.equal((await s.admin('GET', `/admin/companies/${id}/contacts/${enc(phone())}/consent`, undefined, 404)).detail, 'Contact not found');
    assert.equal((await s.admin('GET', `/admin/companies/${id}/contacts/nonsense/consent`, undefined, 404)).detail, 'Contact not found');
    const long = await s.admin('GET', `/admin/companies/${id}/contacts/${'1'.repeat(65)}/consent`, undefined, 422);
    assert.deepEqual(long.detail[0].loc, ['path', 'phone']);
    const badId = await s.admin('GET', `/admin/companies/abc/contacts/${enc(p)}/consent`, undefined, 422);
    assert.deepEqual(badId.detail[0].loc, ['path', 'company_id']);

    const tooLong = await s.admin('PATCH', `/admin/companies/${id}/contacts/${enc(p)}`, { opted_out: true, consent_evidence: 'x'.repeat(1001) }, 422);
    assert.deepEqual(tooLong.detail[0].loc, ['body', 'consent_evidence']);
    const notText = await s.admin('PATCH', `/admin/companies/${id}/contacts/${enc(p)}`, { opted_out: true, consent_evidence: { form: 'x' } }, 422);
    assert.deepEqual(notText.detail[0].loc, ['body', 'consent_evidence']);
    const put = await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: p, opted_out: true, consent_evidence: 42 }] }, 422);
    assert.deepEqual(put.detail[0].loc, ['body', 'contacts', 0, 'consent_evidence']);
    assert.equal((await contact(id, p)).opted_out, false);
    assert.deepEqual(await consent(id, p), []);
  });

  test('a WhatsApp 131050 refusal writes a whatsapp entry with the error code and the message', async () => {
    const c = await whatsappCompany(s, graph);
    const p = phone();
    const previous = graph.script;
    graph.script = (req) => (req.body?.to === p.slice(1)
      ? { status: 400, body: { error: { message: '(#131050) stopped', type: 'OAuthException', code: 131050, error_data: { messaging_product: 'whatsapp', details: 'user stopped marketing messages' } } } }
      : undefined);
    after(() => { graph.script = previous; });
    const res = await s.api('/api/automations/send', { key: c.key, body: { automation_id: c.automationId, contacts: [{ phone: p }] } });
    assert.equal(res.status, 200, res.text);
    const [m] = await messagesOf(res.json.batch_id);
    assert.equal(m.status, 'failed');
    const [e] = await eventually(async () => ((await consent(c.companyId, p)) as any[]).length ? consent(c.companyId, p) : undefined);
    assert.deepEqual([e.source, e.opted_out, e.evidence.error_code, e.evidence.message_id], ['whatsapp', true, 131050, m.message_id]);
  });
});

describe('suppression after erasure', () => {
  test('an opted-out number stays opted out through every way it comes back, until it opts in again', async () => {
    const id = (await s.admin('POST', '/admin/companies', { name: 'Suppress Co', subscription_active: true }, 201)).company_id;
    await s.admin('PUT', `/admin/companies/${id}/connector`, { connected: true, provider: 'push' });
    const key = (await s.admin('POST', `/admin/companies/${id}/api-keys`, {}, 201)).api_key;
    const auto = (await s.admin('POST', `/admin/companies/${id}/automations`, { name: 'A', type: 'api', active: true, template: { body: 'Order shipped' } }, 201)).automation_id;
    const camp = (await s.admin('POST', `/admin/companies/${id}/campaigns`, { name: 'Promo', template: { body: 'Offer' } }, 201)).campaign_id;
    const p = phone();
    const campaignTo = async () => (await messagesOf((await s.admin('POST', `/admin/campaigns/${camp}/sends`, { contacts: [p] }, 202)).batch_id))[0];
    const erase = () => s.admin('DELETE', `/admin/companies/${id}/contacts/${enc(p)}`);

    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: p, first_name: 'Ada', opted_out: true, consent_evidence: 'Said no on the signup form' }] });
    const optedOutAt = (await contact(id, p)).opt_out_at;
    let erased = await erase();
    assert.deepEqual([erased.consent_entries, erased.suppressed], [1, true]);
    await s.admin('GET', `/admin/companies/${id}/contacts/${enc(p)}`, undefined, 404);
    // The ledger outlives the contact, without personal data.
    assert.deepEqual((await consent(id, p)).map((e: any) => [e.source, e.opted_out]), [['operator', true]]);
    const stored = (await sql`SELECT * FROM consent_ledger WHERE company_id = ${id}`.execute(db())).rows;
    assert.equal(stored.length, 1);
    const text = JSON.stringify(stored, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v));
    assert.ok(!text.includes(p.slice(3)) && !text.includes('Ada'), 'no number or name in the ledger');

    // 1. An import, even one saying opted_out: false: created opted out, with the ledger's source and time.
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: p, first_name: 'Ada', opted_out: false }] });
    let back = await contact(id, p);
    assert.deepEqual([back.opted_out, back.opt_out_source, back.opt_out_at], [true, 'operator', optedOutAt]);
    assert.equal((await campaignTo()).reason, 'opted_out');
    assert.equal((await consent(id, p)).length, 1, 'coming back is no change of consent');
    erased = await erase();
    assert.deepEqual([erased.consent_entries, erased.suppressed], [1, true]);

    // 2. An automation trigger (4.3 ignores opt-outs and reaches it), then the connector's campaign send (4.4) skips it.
    const trig = await s.api('/api/automations/send', { key, body: { automation_id: auto, contacts: [{ phone: p, first_name: 'Ada' }] } });
    assert.equal((await messagesOf(trig.json.batch_id))[0].status, 'sent');
    assert.equal((await contact(id, p)).opted_out, true);
    const conn = await s.api('/api/connector/send', { key, body: { campaign_id: camp, contacts: [{ phone: p }] } });
    assert.equal(conn.status, 200, conn.text);
    assert.equal((await messagesOf(/\(batch ([0-9a-f-]{36})\)$/.exec(conn.json.message)![1]))[0].reason, 'opted_out');
    await erase();

    // 3. A CSV import.
    await csvImport(id, `phone,first_name,opted_out\n${p},Ada,no\n`);
    assert.equal((await contact(id, p)).opted_out, true);
    await erase();

    // 4. A campaign send straight to the number: planned and sent as opted out.
    const plan = (await s.admin('POST', `/admin/campaigns/${camp}/sends`, { contacts: [p], dry_run: true }, 200)).plan;
    assert.deepEqual([plan.send, plan.skipped_opted_out], [0, 1]);
    assert.equal((await campaignTo()).reason, 'opted_out');
    assert.equal((await contact(id, p)).opted_out, true);

    // It opts in again: recorded; erased now, it comes back subscribed and campaigns reach it.
    await s.admin('PATCH', `/admin/companies/${id}/contacts/${enc(p)}`, { opted_out: false, consent_evidence: 'Re-subscribed on the website' });
    erased = await erase();
    assert.deepEqual([erased.consent_entries, erased.suppressed], [2, false]);
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: p }] });
    assert.equal((await contact(id, p)).opted_out, false);
    assert.equal((await campaignTo()).status, 'sent');
    assert.deepEqual((await consent(id, p)).map((e: any) => e.opted_out), [true, false]);

    // A contact that never opted out: nothing kept, nothing suppressed.
    const q = phone();
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: q }] });
    const plain = await s.admin('DELETE', `/admin/companies/${id}/contacts/${enc(q)}`);
    assert.deepEqual([plain.consent_entries, plain.suppressed], [0, false]);
    await s.admin('GET', `/admin/companies/${id}/contacts/${enc(q)}/consent`, undefined, 404);
  });

  test('an inbound message from an erased opted-out number creates its contact opted out; another company is not affected', async () => {
    const c = await whatsappCompany(s, graph);
    const other = (await s.admin('POST', '/admin/companies', { name: 'Other' }, 201)).company_id;
    const p = phone();
    assert.equal((await postInbound(s.url, c.appSecret, c.phoneNumberId, [waText(p.slice(1), 'STOP', Date.now() - 60_000)])).status, 200);
    await eventually(async () => (await contact(c.companyId, p).catch(() => undefined))?.opted_out);
    const erased = await s.admin('DELETE', `/admin/companies/${c.companyId}/contacts/${enc(p)}`);
    assert.equal(erased.suppressed, true);
    assert.equal((await postInbound(s.url, c.appSecret, c.phoneNumberId, [waText(p.slice(1), 'Where is my order?', Date.now())])).status, 200);
    const back = await eventually(async () => contact(c.companyId, p).catch(() => undefined));
    assert.deepEqual([back.opted_out, back.opt_out_source], [true, 'keyword']);
    await s.admin('PUT', `/admin/companies/${other}/contacts`, { contacts: [{ phone: p }] });
    assert.equal((await contact(other, p)).opted_out, false, 'the ledger is per company');
  });
});
