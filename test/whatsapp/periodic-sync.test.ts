/**
 * The workers' periodic template sync (WHATSAPP_TEMPLATE_SYNC, docs/whatsapp.md "Template catalogue"):
 * a catalogue older than the interval by the injectable clock is synced by the sweep; a fresher one is
 * not; a company whose sync fails keeps its catalogue, the worker goes on and the others are synced.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { graphError, startFakeGraph, type FakeGraph } from '../helpers/fake-graph.ts';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { whatsappCompany } from '../helpers/whatsapp.ts';

let s: TestServer;
let graph: FakeGraph;
const clock = new FakeClock(Date.parse('2026-03-02T09:00:00Z'));

before(async () => {
  s = await startTestServer({ clock, env: { WHATSAPP_TEMPLATE_SYNC: '10m' } });
  graph = await startFakeGraph();
});
after(async () => {
  await s.close();
  await graph.close();
});

const statusOf = async (companyId: number, name: string, language: string) =>
  ((await s.admin('GET', `/admin/companies/${companyId}/whatsapp/templates`)).templates as any[]).find((t) => t.name === name && t.language === language)?.status;
/**
 * Sweeps until `check` holds (at most 20 rounds): on a shared PostgreSQL database, companies of other
 * test files may be due before ours (a round syncs at most 20).
 */
async function sweepUntil(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await s.service.workers!.sweepNow();
    if (await check()) return;
  }
  assert.fail('the sweep did not get to this company');
}
const gets = (wabaId: string) => graph.requests.filter((r) => r.kind === 'templates' && r.wabaId === wabaId && r.method === 'GET').length;

test('the sweep syncs catalogues older than WHATSAPP_TEMPLATE_SYNC; failures are logged, kept, and retried later', async () => {
  const a = await whatsappCompany(s, graph);
  const b = await whatsappCompany(s, graph);
  for (const c of [a, b]) graph.templates.get(c.wabaId)!.find((t) => t.name === 'hello' && t.language === 'en')!.status = 'PAUSED';
  const [ga, gb] = [gets(a.wabaId), gets(b.wabaId)];

  clock.advance(9 * 60_000);
  await s.service.workers!.sweepNow();
  assert.equal(await statusOf(a.companyId, 'hello', 'en'), 'APPROVED', 'not due yet: nothing read');
  assert.deepEqual([gets(a.wabaId), gets(b.wabaId)], [ga, gb]);

  graph.script = (r) => (r.kind === 'templates' && r.wabaId === b.wabaId ? graphError(500, 2, 'Service temporarily unavailable') : undefined);
  clock.advance(2 * 60_000);
  await sweepUntil(async () => (await statusOf(a.companyId, 'hello', 'en')) === 'PAUSED' && gets(b.wabaId) > gb);
  assert.equal(await statusOf(b.companyId, 'hello', 'en'), 'APPROVED', 'Meta failed: the catalogue is kept');
  assert.equal(gets(b.wabaId), gb + 1, 'b was tried');

  graph.script = () => undefined;
  await s.service.workers!.sweepNow();
  assert.equal(gets(b.wabaId), gb + 1, 'a failed company is not hammered: tried again an interval later');
  clock.advance(11 * 60_000);
  await sweepUntil(async () => (await statusOf(b.companyId, 'hello', 'en')) === 'PAUSED');

  // A company without waba_id, or not on WhatsApp, is never synced.
  await s.admin('PUT', `/admin/companies/${a.companyId}/channel`, { provider: 'whatsapp', phone_number_id: a.phoneNumberId, access_token: a.accessToken, api_base_url: graph.baseUrl });
  const before = gets(a.wabaId);
  clock.advance(60 * 60_000);
  await sweepUntil(async () => gets(b.wabaId) > gb + 2);
  assert.equal(gets(a.wabaId), before, 'b was synced again meanwhile, a (no waba_id) was not');
});
