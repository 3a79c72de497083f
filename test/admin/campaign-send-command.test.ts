/**
 * The campaign-send command and the batch commands in process (src/domain/campaign-sends.ts
 * `sendCampaign`, src/domain/batch-control.ts), on the test server's real database, without HTTP: one
 * command serves the operator and a console user, and records the audit entry with the right actor
 * (`admin`, `console:<email>`); a console user reaches only its company's campaigns and batches; a dry
 * run writes nothing; `expireAt` is taken for pasted numbers as for a segment. The one batch reader
 * (src/db/batch-view.ts) answers the same batch for the operator's view, its list and the console's list.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { consoleActor, OPERATOR } from '../../src/domain/actor.ts';
import { listAudit } from '../../src/domain/audit.ts';
import { cancelBatch, pauseBatch, resumeBatch } from '../../src/domain/batch-control.ts';
import { getBatch, getSend, listCompanyBatches, listSends } from '../../src/domain/batches.ts';
import { sendCampaign, SendRejected } from '../../src/domain/campaign-sends.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(() => s.close());

const run = String(Math.floor(Math.random() * 1000)).padStart(3, '0');
let n = 0;
const phone = () => `+49152${run}${String(3000 + ++n).padStart(5, '0')}`;
const HOUR = 3_600_000;

/** A company with a campaign; its id and the campaign's. */
async function setUp(): Promise<{ companyId: number; campaignId: number }> {
  const { companyId } = await s.company();
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Command', template: { body: 'Hello {{ first_name }}' } }, 201);
  return { companyId, campaignId: camp.campaign_id };
}

const entriesOf = async (companyId: number, action: string) =>
  (await listAudit(s.service.deps.database.db, { companyId, limit: 100 })).filter((e) => e.action === action);

test('one command sends for the operator and for a console user, each audited under its own actor', async () => {
  const deps = s.service.deps;
  const { companyId, campaignId } = await setUp();
  const email = `marketer-${run}@example.com`;
  const user = consoleActor({ email, company_id: companyId });

  const byOperator = await sendCampaign(deps, OPERATOR, { campaignId, audience: { contacts: [phone(), phone()] }, sendAt: null });
  assert.equal(byOperator.dryRun, false);
  const byUser = await sendCampaign(deps, user, { campaignId, audience: { contacts: [phone()] }, sendAt: null, audienceLabel: '1 pasted number' });
  assert.equal(byUser.dryRun, false);
  if (byOperator.dryRun || byUser.dryRun) return;

  const sends = await entriesOf(companyId, 'campaign.send');
  const opEntry = sends.find((e) => e.target === `batch:${byOperator.batchId}`);
  const userEntry = sends.find((e) => e.target === `batch:${byUser.batchId}`);
  assert.equal(opEntry?.actor, 'admin');
  assert.deepEqual(opEntry?.details, { campaign_id: campaignId, contacts: 2, scheduled_for: null });
  assert.equal(userEntry?.actor, `console:${email}`);
  assert.deepEqual(userEntry?.details, { campaign_id: campaignId, audience: '1 pasted number', scheduled_for: null });
  assert.equal(userEntry?.company_id, companyId);

  // The batch commands serve both actors the same way, audited under each.
  await cancelBatch(deps, user, byUser.batchId);
  await cancelBatch(deps, OPERATOR, byOperator.batchId);
  const cancels = await entriesOf(companyId, 'batch.cancel');
  assert.equal(cancels.find((e) => e.target === `batch:${byUser.batchId}`)?.actor, `console:${email}`);
  assert.equal(cancels.find((e) => e.target === `batch:${byOperator.batchId}`)?.actor, 'admin');
});

test("a console user reaches only its company's campaigns and batches; the operator every one", async () => {
  const deps = s.service.deps;
  const mine = await setUp();
  const other = await setUp();
  const user = consoleActor({ email: `owner-${run}@example.com`, company_id: mine.companyId });
  await assert.rejects(sendCampaign(deps, user, { campaignId: other.campaignId, audience: { contacts: [phone()] }, sendAt: null }),
    (err) => err instanceof DomainError && err.status === 404 && err.detail === 'Campaign not found');
  const sent = await sendCampaign(deps, OPERATOR, { campaignId: other.campaignId, audience: { contacts: [phone()] }, sendAt: Date.now() + HOUR });
  assert.equal(sent.dryRun, false);
  if (sent.dryRun) return;
  for (const command of [() => cancelBatch(deps, user, sent.batchId), () => pauseBatch(deps, user, sent.batchId), () => resumeBatch(deps, user, sent.batchId)]) {
    await assert.rejects(command(), (err) => err instanceof DomainError && err.status === 404);
  }
  assert.equal((await entriesOf(other.companyId, 'batch.cancel')).length, 0, 'nothing audited for a refused command');
  const paused = await pauseBatch(deps, OPERATOR, sent.batchId);
  assert.equal(paused.status, 'paused');
  assert.equal((await entriesOf(other.companyId, 'batch.pause'))[0]?.actor, 'admin');
});

test('a dry run writes nothing; expire_at is taken for pasted numbers and checked as for a segment', async () => {
  const deps = s.service.deps;
  const { companyId, campaignId } = await setUp();
  const db = deps.database.db;
  const count = async () => (await db.selectFrom('batches').select('batch_id').where('company_id', '=', companyId).execute()).length;
  const dry = await sendCampaign(deps, OPERATOR, { campaignId, audience: { contacts: [phone(), 'not a phone'] }, sendAt: null, dryRun: true });
  assert.equal(dry.dryRun, true);
  assert.equal(dry.plan.total, 2);
  assert.equal(dry.plan.skipped_invalid, 1);
  assert.equal(await count(), 0);
  assert.equal((await entriesOf(companyId, 'campaign.send')).length, 0);

  const now = deps.clock.now();
  const sendAt = now + HOUR;
  await assert.rejects(sendCampaign(deps, OPERATOR, { campaignId, audience: { contacts: [phone()] }, sendAt, expireAt: sendAt }),
    (err) => err instanceof SendRejected && err.field === 'expire_at' && err.problem === 'not_after_send');
  await assert.rejects(sendCampaign(deps, OPERATOR, { campaignId, audience: { contacts: [phone()] }, sendAt: now - 1 }),
    (err) => err instanceof SendRejected && err.field === 'send_at' && err.problem === 'past');
  assert.equal(await count(), 0);

  const expireAt = sendAt + 2 * HOUR;
  const sent = await sendCampaign(deps, consoleActor({ email: `m-${run}@example.com`, company_id: companyId }), { campaignId, audience: { contacts: [phone()] }, sendAt, expireAt });
  assert.equal(sent.dryRun, false);
  if (sent.dryRun) return;
  const row = await db.selectFrom('batches').select('overrides').where('batch_id', '=', sent.batchId).executeTakeFirstOrThrow();
  assert.deepEqual(row.overrides, { send_at: new Date(sendAt).toISOString(), expire_at: new Date(expireAt).toISOString() });
  const [entry] = await entriesOf(companyId, 'campaign.send');
  assert.deepEqual(entry.details, { campaign_id: campaignId, contacts: 1, scheduled_for: new Date(sendAt).toISOString(), expire_at: new Date(expireAt).toISOString() });
});

test('the one batch reader: the operator view, its list and the console list show a batch alike', async () => {
  const deps = s.service.deps;
  const db = deps.database.db;
  const { companyId, campaignId } = await setUp();
  const sendAt = Date.now() + HOUR;
  const sent = await sendCampaign(deps, OPERATOR, { campaignId, audience: { contacts: [phone(), phone(), phone()] }, sendAt });
  assert.equal(sent.dryRun, false);
  if (sent.dryRun) return;
  const one = await getBatch(db, sent.batchId.toUpperCase());
  const listed = (await listCompanyBatches(db, companyId, { limit: 5 })).batches.find((b) => b.batch_id === sent.batchId);
  const consoleList = (await listSends(db, companyId, 1, 25)).batches.find((b) => b.batch_id === sent.batchId);
  const page = await getSend(db, sent.batchId, companyId);
  assert.ok(listed && consoleList);
  // The same view (`waiting` aside: the console's list does not read it) under every caller.
  const viewOf = (b: object) => Object.fromEntries(Object.keys(one).filter((k) => k !== 'waiting').map((k) => [k, (b as Record<string, unknown>)[k]]));
  for (const b of [listed, consoleList, page]) assert.deepEqual(viewOf(b), viewOf(one));
  assert.deepEqual(listed.waiting, one.waiting);
  assert.deepEqual(consoleList.source_name, 'Command');
  assert.equal(page.source_name, 'Command');
  assert.equal(page.send_at, new Date(sendAt).toISOString());
  await assert.rejects(getSend(db, sent.batchId, companyId + 1), (err) => err instanceof DomainError && err.status === 404);
});
