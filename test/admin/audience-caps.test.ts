/**
 * Frequency caps and dry runs (docs/audience.md "Frequency caps", "Dry runs"), through the real server
 * and database, time from the injectable clock:
 *
 * - the company's `frequency_cap` through PATCH (shown, reset with null) and every bad value a clear
 *   422 naming the field, nothing changed;
 * - the counting window: messages sent exactly `per` ago no longer count, 1 ms less and they do;
 * - which messages count: campaign messages sent, delivered or read, of any campaign of the company
 *   (one that ignores the cap included); automation messages, skipped, failed and pending ones, and
 *   another company's, do not;
 * - a capped recipient: its message `skipped` with reason `frequency_cap` (an opted-out one stays
 *   `opted_out`), the batch counts it as skipped; automations are never capped; a campaign with
 *   `ignore_frequency_cap` is not capped, and PATCH turns that on and off;
 * - dry runs: the plan counts what the send then does (sent, opted out, capped, invalid) for numbers,
 *   static and dynamic segments, a number whose erased contact opted out included; a dry run writes
 *   nothing (no batch, message, contact or audit entry) and its plan does not count toward the cap.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { eventually, FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';

const DAY = 86_400_000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let s: TestServer;
before(async () => { s = await startTestServer({ clock }); });
after(() => s.close());

const db = () => s.service.deps.database.db;
let seq = 10_000_000 + Math.floor(Math.random() * 80_000_000);
/** A fresh valid German mobile number. */
const phone = () => `+49151${String(seq++)}`;

async function company(fields: Record<string, unknown> = {}): Promise<number> {
  return (await s.admin('POST', '/admin/companies', { name: 'Caps Co', subscription_active: true, ...fields }, 201)).company_id;
}
async function campaign(companyId: number, extra: Record<string, unknown> = {}): Promise<number> {
  // No expiry: the tests move the clock by days.
  return (await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'C', template: { body: 'Hi' }, expire_after: null, ...extra }, 201)).campaign_id;
}
async function completed(batchId: string): Promise<any> {
  return eventually(async () => {
    const b = await s.admin('GET', `/admin/batches/${batchId}`);
    return b.status === 'completed' ? b : undefined;
  }, 45_000);
}
/** Sends `campaignId` to numbers now; the messages by phone once the batch completed. */
async function send(campaignId: number, body: Record<string, unknown>): Promise<{ batchId: string; plan: any; byPhone: Map<string, any>; batch: any }> {
  const res = await s.admin('POST', `/admin/campaigns/${campaignId}/sends`, body, 202);
  const batch = await completed(res.batch_id);
  const { messages } = await s.admin('GET', `/admin/batches/${res.batch_id}/messages`);
  return { batchId: res.batch_id, plan: res.plan, batch, byPhone: new Map(messages.map((m: any) => [m.phone, m])) };
}
const outcome = (m: any) => (m.status === 'skipped' ? `skipped:${m.reason}` : m.status);

describe('the company setting', () => {
  test('PATCH sets, shows and resets the cap; bad values are a 422 naming the field and change nothing', async () => {
    const id = await company();
    assert.equal((await s.admin('GET', `/admin/companies/${id}`)).frequency_cap, null, 'no cap by default');
    const set = await s.admin('PATCH', `/admin/companies/${id}`, { frequency_cap: { messages: 3, per: '7d' } });
    assert.deepEqual(set.frequency_cap, { messages: 3, per: '7d' });
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}`)).frequency_cap, { messages: 3, per: '7d' });
    const created = await s.admin('POST', '/admin/companies', { name: 'Born capped', frequency_cap: { messages: 1, per: '12h' } }, 201);
    assert.deepEqual(created.frequency_cap, { messages: 1, per: '12h' });

    const bad: [unknown, (string | number)[]][] = [
      [{ messages: 0, per: '7d' }, ['body', 'frequency_cap', 'messages']],
      [{ messages: 1001, per: '7d' }, ['body', 'frequency_cap', 'messages']],
      [{ messages: '3', per: '7d' }, ['body', 'frequency_cap', 'messages']],
      [{ messages: 2.5, per: '7d' }, ['body', 'frequency_cap', 'messages']],
      [{ messages: 3, per: '7w' }, ['body', 'frequency_cap', 'per']],
      [{ messages: 3, per: '0d' }, ['body', 'frequency_cap', 'per']],
      [{ messages: 3, per: '7' }, ['body', 'frequency_cap', 'per']],
      [{ messages: 3, per: '367d' }, ['body', 'frequency_cap', 'per']],
      [{ messages: 3 }, ['body', 'frequency_cap', 'per']],
      [{ messages: 3, per: '7d', extra: 1 }, ['body', 'frequency_cap', 'extra']],
      ['3/7d', ['body', 'frequency_cap']],
    ];
    for (const [cap, loc] of bad) {
      const res = await s.admin('PATCH', `/admin/companies/${id}`, { frequency_cap: cap }, 422);
      assert.ok(res.detail.some((d: any) => JSON.stringify(d.loc) === JSON.stringify(loc)), `${JSON.stringify(cap)}: ${JSON.stringify(res.detail)}`);
    }
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}`)).frequency_cap, { messages: 3, per: '7d' }, 'unchanged');
    assert.deepEqual((await s.admin('PATCH', `/admin/companies/${id}`, { frequency_cap: { messages: 1, per: '366d' } })).frequency_cap, { messages: 1, per: '366d' });
    assert.equal((await s.admin('PATCH', `/admin/companies/${id}`, { frequency_cap: null })).frequency_cap, null);
    const audit = await s.admin('GET', `/admin/audit?company_id=${id}`);
    assert.ok(audit.entries.some((e: any) => e.action === 'company.update' && e.details.frequency_cap === null));
  });

  test('campaigns take ignore_frequency_cap at create and PATCH; it is shown; bad types are 422', async () => {
    const id = await company();
    const plain = await s.admin('POST', `/admin/companies/${id}/campaigns`, { name: 'P', template: { body: 'Hi' } }, 201);
    assert.equal(plain.ignore_frequency_cap, false);
    const loud = await s.admin('POST', `/admin/companies/${id}/campaigns`, { name: 'L', template: { body: 'Hi' }, ignore_frequency_cap: true }, 201);
    assert.equal(loud.ignore_frequency_cap, true);
    assert.equal((await s.admin('GET', `/admin/campaigns/${loud.campaign_id}`)).ignore_frequency_cap, true);
    assert.equal((await s.admin('PATCH', `/admin/campaigns/${loud.campaign_id}`, { ignore_frequency_cap: false })).ignore_frequency_cap, false);
    assert.equal((await s.admin('GET', `/admin/companies/${id}/campaigns`)).find((c: any) => c.id === loud.campaign_id).ignore_frequency_cap, false);
    const bad = await s.admin('PATCH', `/admin/campaigns/${loud.campaign_id}`, { ignore_frequency_cap: 'yes' }, 422);
    assert.deepEqual(bad.detail[0].loc, ['body', 'ignore_frequency_cap']);
    await s.admin('POST', `/admin/companies/${id}/campaigns`, { name: 'X', template: { body: 'Hi' }, ignore_frequency_cap: 1 }, 422);
    const automations = await s.admin('POST', `/admin/companies/${id}/automations`, { name: 'A', type: 'api', active: true, template: { body: 'Hi' } }, 201);
    assert.equal((await s.admin('GET', `/admin/automations/${automations.automation_id}`)).ignore_frequency_cap, undefined, 'campaigns only');
  });
});

describe('the rule', () => {
  test('the counting window: a message sent exactly `per` ago no longer counts, 1 ms later than that it does', async () => {
    const id = await company({ frequency_cap: { messages: 2, per: '1d' } });
    const camp = await campaign(id);
    const [a, b] = [phone(), phone()];
    const t0 = clock.now();
    await send(camp, { contacts: [a, b] }); // 1 each, sent at t0
    clock.advance(60_000);
    await send(camp, { contacts: [a] }); // a: 2, sent at t0 + 1 min
    clock.set(t0 + DAY - 1);
    let r = await send(camp, { contacts: [a, b] });
    assert.deepEqual([outcome(r.byPhone.get(a)), outcome(r.byPhone.get(b))], ['skipped:frequency_cap', 'sent']);
    assert.equal(r.batch.counts.skipped, 1);
    assert.equal(r.batch.counts.sent, 1);
    // Now a was sent at t0 and t0 + 1 min, b at t0 and t0 + 1 d - 1 ms.
    clock.set(t0 + DAY);
    r = await send(camp, { contacts: [a, b] });
    // t0 is exactly 1 d ago: out of the window, so each has 1 in it → sent.
    assert.deepEqual([outcome(r.byPhone.get(a)), outcome(r.byPhone.get(b))], ['sent', 'sent']);
    clock.set(t0 + DAY + 60_000 - 1);
    r = await send(camp, { contacts: [a] });
    assert.equal(outcome(r.byPhone.get(a)), 'skipped:frequency_cap', 'a: t0 + 1 min and t0 + 1 d still in the window');
    clock.set(t0 + 3 * DAY);
  });

  test('which messages count: campaign messages sent, delivered or read; not automations, skipped, failed, pending or other companies\'', async () => {
    const id = await company({ frequency_cap: { messages: 1, per: '30d' } });
    const other = await company();
    const camp = await campaign(id);
    const otherCamp = await campaign(other);
    const key = (await s.admin('POST', `/admin/companies/${id}/api-keys`, {}, 201)).api_key;
    const auto = (await s.admin('POST', `/admin/companies/${id}/automations`, { name: 'A', type: 'api', active: true, template: { body: 'Auto' } }, 201)).automation_id;
    const [auto1, other1, skipped1, failed1, pending1, read1, delivered1] = Array.from({ length: 7 }, phone);

    // An automation message (sent) does not count.
    const trig = await s.api('/api/automations/send', { key, body: { automation_id: auto, contacts: [{ phone: auto1 }] } });
    assert.equal(trig.status, 200, trig.text);
    assert.equal((await completed(trig.json.batch_id)).counts.sent, 1);
    // Another company's campaign message does not count.
    await send(otherCamp, { contacts: [other1] });
    // Messages skipped, failed or still pending do not count: written by hand as such.
    const sent = await send(camp, { contacts: [skipped1, failed1, pending1, read1, delivered1] });
    const at = new Date(clock.now()).toISOString();
    await sql`UPDATE messages SET status = 'skipped', reason = 'cancelled' WHERE batch_id = ${sent.batchId}::uuid AND phone = ${skipped1}`.execute(db());
    await sql`UPDATE messages SET status = 'failed', failed_at = ${at}::timestamptz WHERE batch_id = ${sent.batchId}::uuid AND phone = ${failed1}`.execute(db());
    // Pending: held (for delivery hours) far ahead, so no delivery run takes it meanwhile.
    await sql`UPDATE messages SET status = 'pending', sent_at = NULL, held_until = ${new Date(clock.now() + 300 * DAY).toISOString()}::timestamptz
      WHERE batch_id = ${sent.batchId}::uuid AND phone = ${pending1}`.execute(db());
    await sql`UPDATE messages SET status = 'read', delivered_at = ${at}::timestamptz, read_at = ${at}::timestamptz WHERE batch_id = ${sent.batchId}::uuid AND phone = ${read1}`.execute(db());
    await sql`UPDATE messages SET status = 'delivered', delivered_at = ${at}::timestamptz WHERE batch_id = ${sent.batchId}::uuid AND phone = ${delivered1}`.execute(db());
    clock.advance(1000);
    const r = await send(camp, { contacts: [auto1, other1, skipped1, failed1, pending1, read1, delivered1] });
    assert.deepEqual([auto1, other1, skipped1, failed1, pending1, read1, delivered1].map((p) => outcome(r.byPhone.get(p))),
      ['sent', 'sent', 'sent', 'sent', 'sent', 'skipped:frequency_cap', 'skipped:frequency_cap']);
    await sql`UPDATE messages SET status = 'skipped', reason = 'cancelled', held_until = NULL WHERE batch_id = ${sent.batchId}::uuid AND phone = ${pending1}`.execute(db());
  });

  test('a capped recipient ends skipped / frequency_cap (an opted-out one stays opted_out); automations are never capped; ignore_frequency_cap sends and still counts', async () => {
    const id = await company({ frequency_cap: { messages: 1, per: '7d' } });
    const key = (await s.admin('POST', `/admin/companies/${id}/api-keys`, {}, 201)).api_key;
    const camp = await campaign(id);
    const loud = await campaign(id, { ignore_frequency_cap: true });
    const auto = (await s.admin('POST', `/admin/companies/${id}/automations`, { name: 'A', type: 'api', active: true, template: { body: 'Auto' } }, 201)).automation_id;
    const [a, b, c] = [phone(), phone(), phone()];
    await send(camp, { contacts: [a, b] });
    await s.admin('PATCH', `/admin/companies/${id}/contacts/${encodeURIComponent(b)}`, { opted_out: true });
    clock.advance(1000);
    // A campaign that ignores the cap: sent to a (capped for others); b is opted out; c new.
    let r = await send(loud, { contacts: [a, b, c] });
    assert.deepEqual([a, b, c].map((p) => outcome(r.byPhone.get(p))), ['sent', 'skipped:opted_out', 'sent']);
    // Its message to c counts: c is now capped for the others, as is a.
    r = await send(camp, { contacts: [a, b, c] });
    assert.deepEqual([a, b, c].map((p) => outcome(r.byPhone.get(p))), ['skipped:frequency_cap', 'skipped:opted_out', 'skipped:frequency_cap']);
    assert.deepEqual(r.batch.counts, { ...r.batch.counts, sent: 0, skipped: 3, pending: 0 });
    const events = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM messages WHERE batch_id = ${r.batchId}::uuid AND reason = 'frequency_cap' AND status = 'skipped'`.execute(db())).rows[0].n;
    assert.equal(events, 2);
    // Automations are never capped.
    const trig = await s.api('/api/automations/send', { key, body: { automation_id: auto, contacts: [{ phone: a }, { phone: c }] } });
    assert.equal((await completed(trig.json.batch_id)).counts.sent, 2);
    // PATCH turns the campaign's exemption off: capped like the others.
    await s.admin('PATCH', `/admin/campaigns/${loud}`, { ignore_frequency_cap: false });
    r = await send(loud, { contacts: [a] });
    assert.equal(outcome(r.byPhone.get(a)), 'skipped:frequency_cap');
    // Without a cap nothing is capped.
    await s.admin('PATCH', `/admin/companies/${id}`, { frequency_cap: null });
    r = await send(camp, { contacts: [a, c] });
    assert.deepEqual([a, c].map((p) => outcome(r.byPhone.get(p))), ['sent', 'sent']);
  });

  test('the public connector send (4.4) is capped too', async () => {
    const id = await company({ frequency_cap: { messages: 1, per: '1d' } });
    await s.admin('PUT', `/admin/companies/${id}/connector`, { connected: true, provider: 'push' });
    const key = (await s.admin('POST', `/admin/companies/${id}/api-keys`, {}, 201)).api_key;
    const camp = await campaign(id);
    const a = phone();
    await send(camp, { contacts: [a] });
    clock.advance(1000);
    const res = await s.api('/api/connector/send', { key, body: { campaign_id: camp, contacts: [{ phone: a }] } });
    assert.equal(res.status, 200, res.text);
    const batchId = /\(batch ([0-9a-f-]{36})\)$/.exec(res.json.message)![1];
    await completed(batchId);
    const { messages } = await s.admin('GET', `/admin/batches/${batchId}/messages`);
    assert.deepEqual(messages.map(outcome), ['skipped:frequency_cap']);
    assert.equal(messages[0].reason, 'frequency_cap');
  });
});

describe('dry runs', () => {
  test('the plan counts what the send then does: numbers, static and dynamic segments, an erased opted-out number', async () => {
    const id = await company({ frequency_cap: { messages: 1, per: '7d' } });
    const camp = await campaign(id);
    const [capped1, capped2, out1, fresh1, known1, erasedOut] = Array.from({ length: 6 }, phone);
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [
      { phone: capped1, variables: { city: 'Berlin' } }, { phone: capped2, variables: { city: 'Berlin' } },
      { phone: out1, opted_out: true, variables: { city: 'Berlin' } }, { phone: known1, variables: { city: 'Berlin' } }, { phone: erasedOut, opted_out: true },
    ] });
    await send(camp, { contacts: [capped1, capped2] });
    // erasedOut opted out, then erased: the number comes back opted out.
    const erased = await s.admin('DELETE', `/admin/companies/${id}/contacts/${encodeURIComponent(erasedOut)}`);
    assert.equal(erased.suppressed, true);
    clock.advance(1000);

    const list = [capped1, capped2, out1, fresh1, known1, erasedOut, 'not a number', capped1];
    const batchesBefore = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM batches WHERE company_id = ${id}`.execute(db())).rows[0].n;
    const contactsBefore = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM contacts WHERE company_id = ${id}`.execute(db())).rows[0].n;
    const auditBefore = (await s.admin('GET', `/admin/audit?company_id=${id}`)).entries.length;
    const dry = await s.admin('POST', `/admin/campaigns/${camp}/sends`, { contacts: list, dry_run: true }, 200);
    assert.equal(dry.batch_id, undefined);
    assert.deepEqual(
      { total: dry.plan.total, send: dry.plan.send, skipped_opted_out: dry.plan.skipped_opted_out, skipped_frequency_cap: dry.plan.skipped_frequency_cap, skipped_invalid: dry.plan.skipped_invalid },
      { total: 7, send: 2, skipped_opted_out: 2, skipped_frequency_cap: 2, skipped_invalid: 1 },
    );
    // Nothing written: no batch, no contact (fresh1 and erasedOut stay unknown), no audit entry; a second dry run says the same.
    assert.equal((await sql<{ n: number }>`SELECT count(*)::int AS n FROM batches WHERE company_id = ${id}`.execute(db())).rows[0].n, batchesBefore);
    assert.equal((await sql<{ n: number }>`SELECT count(*)::int AS n FROM contacts WHERE company_id = ${id}`.execute(db())).rows[0].n, contactsBefore);
    assert.equal((await s.admin('GET', `/admin/audit?company_id=${id}`)).entries.length, auditBefore);
    assert.deepEqual((await s.admin('POST', `/admin/campaigns/${camp}/sends`, { contacts: list, dry_run: true }, 200)).plan, dry.plan);

    // The real send does what the plan said.
    const r = await send(camp, { contacts: list });
    const reasons = [...r.byPhone.values()].map(outcome).sort();
    assert.deepEqual(reasons, ['sent', 'sent', 'skipped:frequency_cap', 'skipped:frequency_cap', 'skipped:invalid_phone', 'skipped:opted_out', 'skipped:opted_out']);
    assert.equal(r.batch.counts.sent, dry.plan.send);
    assert.equal(outcome(r.byPhone.get(erasedOut)), 'skipped:opted_out', 'the erased number came back opted out');
    assert.deepEqual(r.plan, dry.plan, 'the send answers the same plan');

    // Segments: static and dynamic, planned then sent (capped1/capped2 capped, fresh1/known1 now capped too).
    clock.advance(1000);
    const [fresh2, fresh3] = [phone(), phone()];
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: fresh2, variables: { city: 'Berlin' } }, { phone: fresh3, variables: { city: 'Berlin' } }] });
    const dyn = await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'Berlin', filter: { attribute: 'city', op: 'eq', value: 'Berlin' } }, 201);
    const key = (await s.admin('POST', `/admin/companies/${id}/api-keys`, {}, 201)).api_key;
    const stat = (await s.api('/api/segments/create', { key, body: { name: 'Static' } })).json.segment_id;
    const add = await s.api(`/api/segments/${stat}/contacts`, { key, body: { contacts: [capped1, out1, fresh2], mode: 'add' } });
    assert.equal(add.status, 200, add.text);
    // Static first (capped1 capped, out1 opted out, fresh2 sent), then dynamic (capped1, capped2, known1 and now fresh2 capped, out1 opted out, fresh3 sent).
    for (const [segment, expected] of [[stat, { total: 3, send: 1, skipped_opted_out: 1, skipped_frequency_cap: 1 }], [dyn.segment_id, { total: 6, send: 1, skipped_opted_out: 1, skipped_frequency_cap: 4 }]] as const) {
      const plan = (await s.admin('POST', `/admin/campaigns/${camp}/sends`, { segment_id: segment, dry_run: true }, 200)).plan;
      assert.deepEqual({ total: plan.total, send: plan.send, skipped_opted_out: plan.skipped_opted_out, skipped_frequency_cap: plan.skipped_frequency_cap }, expected);
      const sent = await send(camp, { segment_id: segment });
      const got = [...sent.byPhone.values()].map(outcome);
      assert.equal(got.filter((o) => o === 'sent').length, plan.send);
      assert.equal(got.filter((o) => o === 'skipped:opted_out').length, plan.skipped_opted_out);
      assert.equal(got.filter((o) => o === 'skipped:frequency_cap').length, plan.skipped_frequency_cap);
    }
  });

  test('a campaign that ignores the cap plans none capped; without a cap none are; bad dry_run is a 422', async () => {
    const id = await company({ frequency_cap: { messages: 1, per: '7d' } });
    const camp = await campaign(id);
    const loud = await campaign(id, { ignore_frequency_cap: true });
    const a = phone();
    await send(camp, { contacts: [a] });
    clock.advance(1000);
    assert.equal((await s.admin('POST', `/admin/campaigns/${camp}/sends`, { contacts: [a], dry_run: true }, 200)).plan.skipped_frequency_cap, 1);
    const plan = (await s.admin('POST', `/admin/campaigns/${loud}/sends`, { contacts: [a], dry_run: true }, 200)).plan;
    assert.deepEqual([plan.send, plan.skipped_frequency_cap], [1, 0]);
    await s.admin('PATCH', `/admin/companies/${id}`, { frequency_cap: null });
    assert.equal((await s.admin('POST', `/admin/campaigns/${camp}/sends`, { contacts: [a], dry_run: true }, 200)).plan.skipped_frequency_cap, 0);
    const bad = await s.admin('POST', `/admin/campaigns/${camp}/sends`, { contacts: [a], dry_run: 'yes' }, 422);
    assert.deepEqual(bad.detail[0].loc, ['body', 'dry_run']);
    await s.admin('POST', `/admin/campaigns/999999999/sends`, { contacts: [a], dry_run: true }, 404);
  });
});
