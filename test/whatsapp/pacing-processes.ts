/**
 * WhatsApp pacing end to end across processes (docs/whatsapp.md "Pacing and limits"): an API process
 * and TWO worker processes (`cms serve --role worker`, as the fault tests start them) on one
 * PostgreSQL database send a few hundred template messages through one number whose rate is 20/s
 * (the channel's throughput_per_second), some recipients twice. At the fake Graph API (this process) no 1-s
 * window holds more than 20 requests, and no two requests to one recipient are closer than the pair
 * interval (WHATSAPP_PAIR_INTERVAL, 2 s here).
 *
 * It measures real request rates, so it runs in real time: the check is split in two files of half
 * the messages each (pacing-processes-*.process.test.ts, about 7 s of pacing each). It needs PostgreSQL
 * (TEST_DATABASE_URL): on the embedded PGlite only one process may open the database.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { admin, Harness, phoneOf, report, waitFor, type Proc } from '../faults/helpers.ts';
import { graphTemplate, randomPhoneNumberId } from '../helpers/fake-graph.ts';
import { startFakeGraphProcess, type FakeGraphProcess } from '../helpers/fake-graph-process.ts';
import { randomWabaId } from '../helpers/whatsapp.ts';

const SKIP = process.env.TEST_DATABASE_URL ? false
  : 'needs PostgreSQL (TEST_DATABASE_URL): two worker processes cannot share the embedded PGlite database';
const RATE = 20;
const PAIR_MS = 2_000;
const MARGIN_MS = 150;

async function onCluster(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await c.connect();
  try { await c.query(text); } finally { await c.end(); }
}

/**
 * Registers the hooks and the test of one file of this check: `part` names its database; `DISTINCT`
 * recipients get a message each and the first `REPEATS` of them a second one, sent at once (the whole
 * check, 220 recipients and 40 repeats, paces for about 13 s, so it runs as two files of half each).
 */
export function pacingAcrossProcesses({ part, DISTINCT, REPEATS }: { part: string; DISTINCT: number; REPEATS: number }): void {
  let h: Harness;
  /** The fake Graph API in a process of its own: arrival times not delayed by this process's event loop. */
  let graph: FakeGraphProcess;
  let api: Proc;
  let dbName = '';
  let failed = false;

  before(async () => {
    if (SKIP) return;
    h = new Harness('wa_pacing');
    const url = new URL(process.env.TEST_DATABASE_URL!);
    dbName = `${url.pathname.slice(1)}_procs_${part}`.replace(/[^a-z0-9_]/gi, '_').toLowerCase();
    await onCluster(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await onCluster(`CREATE DATABASE ${dbName}`);
    url.pathname = '/' + dbName;
    graph = await startFakeGraphProcess();
    // The fake Graph API stamps arrivals in a process of its own on a 2-core machine that also runs
    // PostgreSQL, three service processes and the test: its own scheduling delays requests by more
    // than the default 40 ms margin now and then, so the test gives the pacing the margin of such a way.
    const env = { WHATSAPP_PAIR_INTERVAL: `${PAIR_MS}ms`, WHATSAPP_PACING_MARGIN: `${MARGIN_MS}ms`, LOG_LEVEL: 'info' };
    api = h.proc({ name: 'api', role: 'api', databaseUrl: url.toString(), env: { ...env, LOG_LEVEL: 'warn' } });
    await api.start(); // migrates the database first
    await Promise.all([1, 2].map((i) => h.proc({ name: `worker-${i}`, role: 'worker', databaseUrl: url.toString(), env }).start()));
  });

  after(async () => {
    if (SKIP) return;
    graph?.stop();
    await h?.cleanup(failed);
    await onCluster(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  });

  test(`two worker processes: at most 20 requests in any 1-s window to one number, pair interval kept (${DISTINCT} recipients, ${REPEATS} twice)`, { skip: SKIP, timeout: 120_000 }, async () => {
    const numberId = randomPhoneNumberId();
    const c = await admin(api.url, 'POST', '/admin/companies', { name: 'Pacing', subscription_active: true, default_country: 'DE' });
    const k = await admin(api.url, 'POST', `/admin/companies/${c.company_id}/api-keys`, { label: 'pacing' });
    // The number at 20/s without a messaging limit, its catalogue synced from the fake Graph API.
    const wabaId = randomWabaId();
    await graph.templates(wabaId, [graphTemplate('order_update', 'en', { body: 1 })]);
    await admin(api.url, 'PUT', `/admin/companies/${c.company_id}/channel`, {
      provider: 'whatsapp', phone_number_id: numberId, access_token: graph.accessToken, api_base_url: graph.baseUrl, waba_id: wabaId,
      throughput_per_second: RATE, messaging_limit: null,
    });
    await admin(api.url, 'POST', `/admin/companies/${c.company_id}/whatsapp/templates/sync`);
    const a = await admin(api.url, 'POST', `/admin/companies/${c.company_id}/automations`, {
      name: 'pacing', type: 'api', active: true,
      template: { body: 'Hi {{ first_name }}', whatsapp: { name: 'order_update', language: 'en' } },
    });
    const base = Math.floor(Math.random() * 90_000_000);
    const people = Array.from({ length: DISTINCT }, (_, i) => ({ phone: phoneOf(base + i), first_name: `P${i}` }));
    const send = async (contacts: typeof people) => {
      const res = await fetch(api.url + '/api/automations/send', {
        method: 'POST', headers: { 'content-type': 'application/json', 'service-api-key': k.api_key },
        body: JSON.stringify({ automation_id: a.automation_id, contacts }),
      });
      assert.equal(res.status, 200, await res.text());
    };
    // Sends of 50 (the most one request takes) at once: every recipient once, and the first REPEATS of
    // them again.
    const groups = [people.slice(0, REPEATS)];
    for (let i = 0; i < people.length; i += 50) groups.push(people.slice(i, i + 50));
    await Promise.all(groups.map(send));
    const total = DISTINCT + REPEATS;
    failed = true; // keeps the processes' logs until the checks pass
    const st = await waitFor(`${total} requests at the Graph API`, async () => {
      const x = await graph.stats(numberId);
      return x.count >= total ? x : undefined;
    }, 60_000, 250).catch(async (err) => { throw new Error(`${(err as Error).message}: ${(await graph.stats(numberId)).count} arrived`); });
    const meanRate = ((st.count - 1) * 1000) / (st.lastAt - st.firstAt);
    report(`pacing across 2 workers: ${st.count} requests, most in any 1-s window ${st.most} (rate ${RATE}), mean ${meanRate.toFixed(1)}/s, `
      + `closest two to one recipient ${st.closestPairMs?.toFixed(0)} ms apart (pair interval ${PAIR_MS} ms)`);
    assert.equal(st.count, total, 'one request per message (no retries needed)');
    assert.ok(st.most <= RATE, `at most ${RATE} requests in any 1-s window, got ${st.most}`);
    assert.equal(st.repeats, REPEATS, 'the repeated recipients got their second message');
    assert.ok(st.closestPairMs !== null && st.closestPairMs >= PAIR_MS, `two sends to one recipient at least ${PAIR_MS} ms apart, closest ${st.closestPairMs} ms`);
    failed = false;
  });
}
