/**
 * kill -9 and the transactional outbox of events (docs/events.md).
 *
 * PostgreSQL database of its own; one API process and two worker processes (`cms serve --role ...`);
 * three companies whose channel is a webhook to the faults receiver and which each have an event
 * endpoint (message.sent, message.failed, batch.completed, contact.opted_out) at a local event
 * receiver (the shared test/helpers/receiver.ts) that verifies every request with the official
 * `standardwebhooks` package.
 *
 * 1. Workers: 60 sends of 20 contacts (1,200 messages) over ~12 s while one of the two workers (in
 *    turn) is killed with SIGKILL every 3 s and started again. Proves: every message that committed
 *    `sent` has exactly one message.sent event row and that event reached the receiver; every
 *    completed batch has exactly one batch.completed event, received; the receiver got no event whose
 *    change is not in the database (no event for a change that did not commit); 0 bad signatures.
 * 2. API: PUT of 5,000 opted-out contacts, killed with SIGKILL in the middle of it, three times; then
 *    one that completes. Proves: for each company the number of contact.opted_out events (rows and
 *    received) equals the number of opted-out contacts committed — a killed import leaves neither
 *    contacts nor events.
 *
 * Runs only with CMS_FAULT_TESTS=1 (`npm run test:faults`).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { admin, brief, createTenants, Harness, judge, readState, report, runLoad, SKIP, sleep, sqlOn, summarize, unfinished, waitFor, type Proc } from './helpers.ts';

const h = new Harness('events_kill');
let failed = false;
after(async () => { await h.cleanup(failed); });

/**
 * The event receiver: the shared one (test/helpers/receiver.ts), verifying each request with
 * standardwebhooks and the secret of its path (`/c<company id>`); a bad signature is answered 400.
 */
const startEventReceiver = () => startReceiver({ answer: (r) => (r.signatureError !== null ? 400 : 200) });

/** Events answered 200, by webhook-id: their type and data, in arrival order. */
function eventsById(events: WebhookReceiver): Map<string, { type: string; data: any }[]> {
  return new Map([...events.delivered()].map(([id, list]) => [id, list.map((r) => ({ type: r.body.type, data: r.body.data }))]));
}

test('kill -9 of workers and of the API: no event lost, none for a change that did not commit', { skip: SKIP, timeout: 300_000 }, async () => {
  const events = await startEventReceiver();
  h.cleanups.push(() => events.close());
  try {
    const url = await h.database();
    const receiver = await h.receiver({ delayMs: 20 });
    const api = h.proc({ name: 'api', role: 'api', databaseUrl: url });
    const workers: Proc[] = [1, 2].map((n) => h.proc({ name: `worker-${n}`, role: 'worker', databaseUrl: url }));
    await api.start();
    await Promise.all(workers.map((w) => w.start()));
    const tenants = await createTenants(api.url, 3, receiver);
    for (const t of tenants) {
      const ep = await admin(api.url, 'POST', `/admin/companies/${t.companyId}/event-endpoints`, {
        url: `${events.origin}/c${t.companyId}`, events: ['message.sent', 'message.failed', 'batch.completed', 'contact.opted_out'],
      });
      events.secretFor(`/c${t.companyId}`, ep.secret);
    }

    // 1. Workers killed in turn every 3 s while the load runs.
    let loadDone = false;
    const load = runLoad({ targets: () => [api.url], tenants, requests: 60, ratePerSecond: 5, contacts: 20, timeoutMs: 30_000, phoneBase: 70_000_000 })
      .finally(() => { loadDone = true; });
    const restarts: Promise<number>[] = [];
    let kills = 0;
    for (let k = 0; !loadDone || k < 4; k++) {
      await sleep(3_000);
      const w = [workers[k % 2], workers[(k + 1) % 2]].find((x) => x.ready);
      if (!w) continue;
      await w.kill9();
      kills++;
      restarts.push(w.start());
    }
    const sent = await load;
    await Promise.all(restarts);
    assert.deepEqual(summarize(sent), { 200: 60 });
    await waitFor('all batches completed', async () => {
      const u = await unfinished(url);
      return u.batches === 0 && u.pending === 0 ? u : undefined;
    }, 120_000, 250);
    await waitFor('every event delivered', async () => {
      const [r] = await sqlOn<{ n: number }>(url, `SELECT count(*)::int AS n FROM event_deliveries WHERE status <> 'delivered'`);
      return r.n === 0 || undefined;
    }, 180_000, 250);
    const v = judge(sent, await readState(url), receiver);
    report(`events-kill (workers): ${kills} kills; messages ${brief(v)}`);

    const messages = await sqlOn<{ message_id: string; status: string }>(url, `SELECT message_id::text, status FROM messages`);
    const batches = await sqlOn<{ batch_id: string; status: string }>(url, `SELECT batch_id::text, status FROM batches`);
    const rows = await sqlOn<{ event_id: string; type: string; ref: string }>(url,
      `SELECT event_id, type, coalesce(payload->'data'->>'message_id', payload->'data'->>'batch_id') AS ref FROM events WHERE type IN ('message.sent', 'message.failed', 'batch.completed')`);
    const byRef = new Map<string, string[]>();
    for (const r of rows) byRef.set(`${r.type}:${r.ref}`, [...(byRef.get(`${r.type}:${r.ref}`) ?? []), r.event_id]);
    const received1 = eventsById(events);
    let lost = 0;
    let duplicatesInDb = 0;
    for (const m of messages) {
      if (m.status !== 'sent' && m.status !== 'failed') continue;
      const ids = byRef.get(`message.${m.status}:${m.message_id}`) ?? [];
      if (ids.length !== 1) duplicatesInDb += ids.length > 1 ? 1 : 0;
      if (ids.length === 0 || !received1.has(ids[0])) lost++;
    }
    for (const b of batches) {
      if (b.status !== 'completed') continue;
      const ids = byRef.get(`batch.completed:${b.batch_id}`) ?? [];
      if (ids.length !== 1) duplicatesInDb += ids.length > 1 ? 1 : 0;
      if (ids.length === 0 || !received1.has(ids[0])) lost++;
    }
    // Every event received names a change that is in the database.
    const committed = new Set([...messages.map((m) => `message.${m.status}:${m.message_id}`), ...batches.map((b) => `batch.${b.status}:${b.batch_id}`)]);
    let phantom = 0;
    for (const [, list] of received1) {
      const e = list[0];
      if (e.type === 'contact.opted_out') continue;
      if (!committed.has(`${e.type}:${e.data.message_id ?? e.data.batch_id}`)) phantom++;
    }
    const redelivered = [...received1.values()].filter((l) => l.length > 1).length;
    report(`events-kill (workers): ${messages.length} messages, ${rows.length} events; lost ${lost}, duplicate event rows ${duplicatesInDb}, `
      + `events for uncommitted changes ${phantom}, events received twice (at least once) ${redelivered}, bad signatures ${events.signatureFailures().length}`);
    assert.equal(v.notSent.length, 0);
    assert.equal(lost, 0, 'no event lost');
    assert.equal(duplicatesInDb, 0, 'one event per change');
    assert.equal(phantom, 0, 'no event for a change that did not commit');
    assert.equal(events.signatureFailures().length, 0);

    // 2. The API killed in the middle of a 5,000-contact opt-out import, three times, then one that completes.
    const t = tenants[0];
    const contacts = (base: number) => Array.from({ length: 5_000 }, (_, i) => ({ phone: `+4915${String(base + i).padStart(9, '0')}`, opted_out: true }));
    const outcomes: string[] = [];
    for (let k = 0; k < 3; k++) {
      const body = JSON.stringify({ contacts: contacts(100_000_000 + k * 10_000) });
      const request = fetch(`${api.url}/admin/companies/${t.companyId}/contacts`, {
        method: 'PUT', headers: { authorization: 'Bearer faults-admin-token-3Kp8Rv2Xn6Qw9Zt', 'content-type': 'application/json' }, body,
      }).then((r) => `answered ${r.status}`, () => 'no answer');
      await sleep(150 + k * 150);
      await api.kill9();
      outcomes.push(await request);
      await api.start();
    }
    await admin(api.url, 'PUT', `/admin/companies/${t.companyId}/contacts`, { contacts: contacts(100_100_000) });
    const [counts] = await sqlOn<{ contacts: number; rows: number }>(url, `SELECT
      (SELECT count(*)::int FROM contacts WHERE company_id = $1 AND opted_out) AS contacts,
      (SELECT count(*)::int FROM events WHERE company_id = $1 AND type = 'contact.opted_out') AS rows`, [t.companyId]);
    await waitFor('contact events delivered', async () => {
      const [r] = await sqlOn<{ n: number }>(url, `SELECT count(*)::int AS n FROM event_deliveries WHERE status <> 'delivered'`);
      return r.n === 0 || undefined;
    }, 120_000, 250);
    const received = [...eventsById(events).values()].filter((l) => l[0].type === 'contact.opted_out').length;
    report(`events-kill (api): imports killed: ${outcomes.join(', ')}; opted-out contacts committed ${counts.contacts}, `
      + `contact.opted_out events ${counts.rows}, received ${received}`);
    assert.ok(counts.contacts >= 5_000 && counts.contacts % 5_000 === 0, 'each import whole or not at all');
    assert.equal(counts.rows, counts.contacts, 'one event per committed change, none for a killed import');
    assert.equal(received, counts.contacts, 'every committed change\'s event received');
    assert.equal(events.signatureFailures().length, 0);
  } catch (err) {
    failed = true;
    for (const p of h.procs) report(`${p.opts.name} (pid ${p.pid}, ${p.starts} starts) last output:\n${p.tail.slice(-10).join('\n')}`);
    throw err;
  }
});
