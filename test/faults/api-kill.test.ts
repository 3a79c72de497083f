/**
 * kill -9 of API processes under load (second case).
 *
 * PostgreSQL database of its own, two API processes and one worker; no balancer: the load generator
 * sends request i to API (i mod 2), 30 requests per second. Five times, 1 to 3 s after both processes
 * serve, one of them (in turn) is killed with SIGKILL and started again on the same port; requests sent to it meanwhile are refused, those in flight at the
 * kill get no answer.
 *
 * Proves: every request answered `accepted` has its whole batch in the database and processed (the
 * batch completed, one message per answered contact, every message sent and received); no answer is a
 * 5xx; and no batch is left half-done — batches of requests that were committed but whose answer was
 * lost with the process complete too (counted and reported).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  brief, createTenants, Harness, judge, phoneOf, readState, report, runLoad, SKIP, sleep, sqlOn, summarize, unfinished, waitFor,
  type Proc, type Sent,
} from './helpers.ts';

const RATE = 30;
const KILLS = 5;
const MAX_LOAD_MS = 90_000;
const CONTACTS = 10;

const h = new Harness('api');
let failed = false;
after(async () => { await h.cleanup(failed); });

test('kill -9 of API processes under load: every accepted batch is processed whole', { skip: SKIP, timeout: 240_000 }, async () => {
  try {
    const url = await h.database();
    const receiver = await h.receiver();
    const apis: Proc[] = [1, 2].map((n) => h.proc({ name: `api-${n}`, role: 'api', databaseUrl: url }));
    const worker = h.proc({ name: 'worker', role: 'worker', databaseUrl: url });
    await Promise.all(apis.map((a) => a.start()));
    await worker.start();
    // 30 requests per second over 6 companies: 5 per second each, below 20 per second.
    const tenants = await createTenants(apis[0].url, 6, receiver);

    // Load until KILLS kills have happened and the last killed process serves again (at most MAX_LOAD_MS).
    let stopLoad = false;
    const phoneBase = 1_000_000;
    const load = runLoad({
      targets: () => apis.map((a) => a.url), tenants, requests: 100_000, ratePerSecond: RATE, contacts: CONTACTS,
      maxInFlight: 128, timeoutMs: 30_000, phoneBase, stop: () => stopLoad,
    });

    // Kills: whenever both processes serve, 1 to 3 s later one of them (in turn) is killed and started again.
    const kills: { at: number; api: string; restartMs: number }[] = [];
    const t0 = Date.now();
    for (let k = 0; k < KILLS && Date.now() - t0 < MAX_LOAD_MS; k++) {
      await waitFor('both API processes serve', async () => apis.every((a) => a.ready), 60_000, 100);
      await sleep(1_000 + Math.random() * 2_000);
      const a = apis[k % 2];
      const kill = { at: Date.now(), api: a.opts.name, restartMs: 0 };
      await a.kill9();
      kills.push(kill);
      kill.restartMs = await a.start();
    }
    await sleep(2_000);
    stopLoad = true;
    const sent: Sent[] = await load;
    const answers = summarize(sent);
    report(`api-kill: ${kills.length} kills; answers ${JSON.stringify(answers)}; API restarts ${kills.map((k) => k.restartMs).join(', ')} ms`);
    assert.ok(kills.length >= 3, 'several kills happened under load');
    const unexpected = sent.filter((s) => s.status !== 0 && s.status !== 200);
    assert.deepEqual(unexpected.map((s) => `${s.status} ${s.body}`), [], 'every answer is 200 (no 5xx); the rest found no process');
    assert.ok(sent.every((s) => !s.timedOut), 'no request hung');
    assert.ok((answers['200'] ?? 0) >= sent.length / 3, 'most requests were accepted');

    await waitFor('all batches completed', async () => {
      const u = await unfinished(url);
      return u.batches === 0 && u.pending === 0 ? u : undefined;
    }, 120_000, 500);
    const state = await readState(url);
    const v = judge(sent, state, receiver);
    report(`api-kill: verdict ${brief(v)}`);
    assert.deepEqual(v.acceptedMissing, [], 'every accepted batch is in the database');
    assert.deepEqual(v.batchesNotCompleted, []);
    assert.deepEqual(v.wrongSize, [], 'one message per accepted contact');
    assert.equal(v.notSent.length, 0, 'every message sent');
    assert.equal(v.sentNotReceived.length, 0, 'every message recorded sent was received');
    assert.equal(receiver.badSignatures, 0);

    // Requests without an answer: which of them were committed anyway (their phones are in the database)?
    const unanswered = sent.filter((s) => s.status === 0);
    const phones = new Set((await sqlOn<{ phone: string }>(url, 'SELECT phone FROM messages')).map((r) => r.phone));
    const committedUnanswered = unanswered.filter((s) => phones.has(phoneOf(phoneBase + s.i * CONTACTS)));
    const refused = unanswered.filter((s) => s.error === 'ECONNREFUSED').length;
    report(`api-kill: ${v.acceptedBatches} accepted batches all complete (${v.messages} messages); ${unanswered.length} requests unanswered `
      + `(${refused} refused while a process was down, ${unanswered.length - refused} cut in flight), of which ${committedUnanswered.length} had been committed and were processed too; `
      + `${state.batches.size} batches in the database = ${v.acceptedBatches} accepted + ${committedUnanswered.length} committed unanswered`);
    assert.equal(state.batches.size, v.acceptedBatches + committedUnanswered.length, 'no batch in the database comes from anywhere else');
  } catch (err) {
    failed = true;
    for (const p of h.procs) report(`${p.opts.name} (pid ${p.pid}, ${p.starts} starts) last output:\n${p.tail.slice(-10).join('\n')}`);
    throw err;
  }
});
