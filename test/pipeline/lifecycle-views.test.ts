/**
 * Message lifecycle views (docs/decisions.md#7-a-messages-life): through the real server and
 * workers with a FakeClock, a webhook batch where one receiver answer is a transient failure. The
 * operator API shows the funnel counts (a read message counts in sent, delivered and read) and per
 * message the provider's id, times, error code and the next attempt of a waiting message; `cms batch
 * show` prints the funnel and the next attempt; the console's Sends list and batch page show the same.
 * Receipts are applied elsewhere (engineer B's receipts path); here `delivered` / `read` are set in SQL.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { cliFor } from '../cli/helpers.ts';
import { signedInClient } from '../console/helpers.ts';
import { eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { batchStatus, messagesOf, phone, startPipelineServer } from './helpers.ts';

const T0 = Date.parse('2026-04-01T09:00:00Z');
const clock = new FakeClock(T0);
let s: TestServer;
let r: WebhookReceiver;
let failTo = '';

before(async () => {
  s = await startPipelineServer('lifecycle', { clock, env: { DELIVERY_RETRY_SCHEDULE: '5m,1h' } });
  r = await startReceiver({ answer: (seen) => (seen.body?.to === failTo ? 503 : 200) });
});
after(async () => {
  await s.close();
  await r.close();
});

test('funnel counts, lifecycle fields, CLI and console views of a batch', async () => {
  const run = Math.floor(Math.random() * 1000);
  const [a, b, c, waiting] = [0, 1, 2, 3].map((i) => phone(run, i));
  failTo = waiting;
  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: r.url, secret: r.secret });
  const auto = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'v', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } }, 201);
  const res = await s.api('/api/automations/send', {
    key, body: { automation_id: auto.automation_id, contacts: [a, b, c, waiting, 'not-a-phone'].map((p) => ({ phone: p, first_name: 'X' })) },
  });
  assert.equal(res.status, 200, res.text);
  const batchId: string = res.json.batch_id;

  // Three sent, one waiting for its retry (5 min after the failed attempt), one skipped.
  const msgs = await eventually(async () => {
    const ms = await messagesOf(s, batchId);
    return ms.length === 5 && ms.filter((m) => m.status === 'sent').length === 3 && ms.some((m) => m.next_attempt_at) ? ms : undefined;
  });
  const byPhone = new Map(msgs.map((m) => [m.phone, m]));
  for (const p of [a, b, c]) {
    const m = byPhone.get(p);
    assert.equal(m.provider_message_id, m.message_id, 'the webhook provider\'s id is the webhook-id');
    assert.equal(m.sent_at, new Date(T0).toISOString());
    assert.equal(m.next_attempt_at, undefined);
  }
  const w = byPhone.get(waiting);
  assert.equal(w.status, 'pending');
  assert.equal(w.next_attempt_at, new Date(T0 + 300_000).toISOString());
  assert.equal(w.error, 'HTTP 503');
  assert.equal(w.error_code, '503');
  assert.equal(w.provider_message_id, undefined);

  // Receipts (set here in SQL): b delivered, c read.
  const db = s.service.deps.database.db;
  const delivered = new Date(T0 + 10_000);
  const read = new Date(T0 + 20_000);
  await sql`UPDATE messages SET status = 'delivered', delivered_at = ${delivered} WHERE message_id = ${byPhone.get(b).message_id}::uuid`.execute(db);
  await sql`UPDATE messages SET status = 'read', delivered_at = ${delivered}, read_at = ${read} WHERE message_id = ${byPhone.get(c).message_id}::uuid`.execute(db);

  const batch = await batchStatus(s, batchId);
  assert.equal(batch.status, 'processing', 'a message waiting for its retry keeps the batch open');
  assert.deepEqual(batch.counts, { total: 5, sent: 3, delivered: 2, read: 1, failed: 0, skipped: 1, pending: 1 });
  const after = new Map((await messagesOf(s, batchId)).map((m) => [m.phone, m]));
  assert.equal(after.get(b).status, 'delivered');
  assert.equal(after.get(b).delivered_at, delivered.toISOString());
  assert.equal(after.get(b).read_at, undefined);
  assert.equal(after.get(c).status, 'read');
  assert.equal(after.get(c).read_at, read.toISOString());
  assert.equal(after.get('not-a-phone').reason, 'invalid_phone');

  // cms batch show: the funnel and the next attempt of the waiting message.
  const cms = cliFor(s);
  const shown = await cms(['batch', 'show', batchId, '--messages']);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /funnel: sent 3 → delivered 2 → read 1 · failed 0 · skipped 1 · pending 1 \(of 5\)/);
  const row = shown.stdout.split('\n').find((l) => l.includes(waiting));
  assert.ok(row, shown.stdout);
  assert.match(row, /pending/);
  assert.ok(row.includes(new Date(T0 + 300_000).toISOString()), `the next attempt is shown: ${row}`);
  assert.match(shown.stdout.split('\n').find((l) => l.includes(c))!, new RegExp(read.toISOString().replace(/\./g, '\\.')));
  const json = JSON.parse((await cms(['batch', 'show', batchId, '--messages', '--json'])).stdout);
  assert.equal(json.counts.delivered, 2);
  assert.equal(json.messages.find((m: any) => m.phone === waiting).next_attempt_at, new Date(T0 + 300_000).toISOString());

  // Console: the Sends list shows the funnel per batch; the batch page the funnel and per message times.
  const cc = await signedInClient(s, companyId);
  const list = await cc.get('/console/sends');
  assert.equal(list.status, 200);
  const listRow = list.text.slice(list.text.indexOf(`data-batch-id="${batchId}"`));
  const cell = (label: string) => listRow.match(new RegExp(`data-label="${label}" class="num"><span class="cell">(\\d+)<`))?.[1];
  assert.deepEqual(['Sent', 'Delivered', 'Read', 'Failed', 'Skipped', 'Pending'].map(cell), ['3', '2', '1', '0', '1', '1']);
  const page = await cc.get(`/console/sends/${batchId}`);
  assert.equal(page.status, 200);
  assert.match(page.text, /3 sent → 2 delivered → 1 read/);
  const pageRow = (id: string) => page.text.slice(page.text.indexOf(`data-message-id="${id}"`)).split('</tr>')[0];
  assert.match(pageRow(w.message_id), /badge-pending/);
  assert.ok(pageRow(w.message_id).includes(`datetime="${new Date(T0 + 300_000).toISOString()}"`), 'next attempt shown');
  assert.ok(pageRow(byPhone.get(c).message_id).includes(`datetime="${read.toISOString()}"`), 'read time shown');
  assert.match(pageRow(byPhone.get(c).message_id), /badge-read/);
  const found = await cc.get(`/console/sends?phone=${encodeURIComponent(waiting)}`);
  assert.ok(found.text.includes(`datetime="${new Date(T0 + 300_000).toISOString()}"`), 'the phone search shows the next attempt');

  // The retry comes due: the message is sent and the batch completes with its funnel.
  clock.advance(300_000);
  failTo = '';
  const done = await eventually(async () => {
    const bs = await batchStatus(s, batchId);
    return bs.status === 'completed' ? bs : undefined;
  }, 30_000);
  assert.deepEqual(done.counts, { total: 5, sent: 4, delivered: 2, read: 1, failed: 0, skipped: 1, pending: 0 });
  const final = (await messagesOf(s, batchId)).find((m) => m.phone === waiting);
  assert.equal(final.attempts, 2);
  assert.equal(final.next_attempt_at, undefined);
  assert.equal(final.error_code, undefined);
});
