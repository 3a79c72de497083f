/**
 * The embedded default killed with kill -9 three times under load (fourth case).
 *
 * One `cms serve --role all` process on PGlite in its own DATA_DIR, companies with a webhook channel to
 * a local receiver, paced load of 50-contact sends. Three times, a few seconds into the load, the
 * process is killed with SIGKILL and started again at once on the same DATA_DIR (requests meanwhile are
 * refused). After the last restart the load goes on briefly, then stops.
 *
 * Proves: each restart is clean (the process serves again on the same data; PGlite recovers from its
 * WAL, the stale `cms.pid` of the killed process is taken over); every request answered `accepted` has
 * its batch completed with one `sent` message per contact, every one of them received; read back
 * afterwards from the data directory itself, no batch is left unfinished.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  admin, brief, createTenants, Harness, judge, readPgliteState, report, runLoad, SKIP, sleep, summarize, waitFor,
  type DbState, type Sent,
} from './helpers.ts';

const KILLS = 3;
const RATE = 6;
const CONTACTS = 50;

const h = new Harness('pglite');
let failed = false;
after(async () => { await h.cleanup(failed); });

test('PGlite (role all) killed with kill -9 three times under load: clean restarts, nothing accepted is lost', { skip: SKIP, timeout: 300_000 }, async () => {
  try {
    const receiver = await h.receiver({ delayMs: 20 });
    const cms = h.proc({ name: 'cms', role: 'all' });
    const firstStartMs = await cms.start();
    const tenants = await createTenants(cms.url, 3, receiver);

    let stopLoad = false;
    const load = runLoad({
      targets: () => [cms.url], tenants, requests: 100_000, ratePerSecond: RATE, contacts: CONTACTS, maxInFlight: 32,
      timeoutMs: 30_000, phoneBase: 2_000_000, stop: () => stopLoad,
    });
    const kills: { at: number; restartMs: number }[] = [];
    for (let k = 0; k < KILLS; k++) {
      await sleep(3_000 + Math.random() * 3_000);
      const kill = { at: Date.now(), restartMs: 0 };
      await cms.kill9();
      kills.push(kill);
      kill.restartMs = await cms.start(90_000);
    }
    const lastRestart = Date.now();
    await sleep(3_000);
    stopLoad = true;
    const sent: Sent[] = await load;
    const answers = summarize(sent);
    report(`pglite-kill: ${kills.length} kills; first start ${firstStartMs} ms, restarts ${kills.map((k) => k.restartMs).join(', ')} ms; answers ${JSON.stringify(answers)}`);
    const unexpected = sent.filter((s) => s.status !== 0 && s.status !== 200);
    assert.deepEqual(unexpected.map((s) => `${s.status} ${s.body}`), [], 'every answer is 200; the rest found no process');
    assert.ok(sent.every((s) => !s.timedOut), 'no request hung');
    const accepted = sent.filter((s) => s.status === 200);
    assert.ok(accepted.length >= 30, 'requests were accepted between the kills');

    // Every accepted batch completes after the last restart (the operator API of the restarted process).
    let open = accepted.map((s) => s.batchId!);
    await waitFor('every accepted batch completed', async () => {
      const still: string[] = [];
      for (const id of open) {
        const b = await admin(cms.url, 'GET', `/admin/batches/${id}`);
        if (b.status !== 'completed') still.push(id);
      }
      open = still;
      return still.length === 0;
    }, 150_000, 1_000);
    const completedMs = Date.now() - lastRestart;

    // Stop it gracefully and read the data directory itself: every batch, answered or not.
    await cms.stop();
    assert.equal(cms.child!.exitCode, 0, 'a graceful stop after the restarts exits 0');
    const state: DbState = await readPgliteState(path.join(cms.opts.dataDir, 'pglite'));
    const v = judge(sent, state, receiver);
    const dups = v.duplicates.size;
    report(`pglite-kill: verdict ${brief(v)}; all accepted batches completed ${(completedMs / 1000).toFixed(1)} s after the last restart; `
      + `${dups} messages delivered twice over ${KILLS} kills; ${state.batches.size - accepted.length} batches committed without an answer`);
    assert.deepEqual(v.acceptedMissing, [], 'every accepted batch is in the database');
    assert.deepEqual(v.batchesNotCompleted, []);
    assert.deepEqual(v.wrongSize, [], 'one message per accepted contact');
    assert.equal(v.notSent.length, 0, 'every message sent');
    assert.equal(v.sentNotReceived.length, 0, 'every message recorded sent was received');
    assert.equal(receiver.badSignatures, 0);
    assert.ok(dups <= 250 * KILLS, 'duplicates at most one chunk per kill');
  } catch (err) {
    failed = true;
    for (const p of h.procs) report(`${p.opts.name} (pid ${p.pid}, ${p.starts} starts) last output:\n${p.tail.slice(-15).join('\n')}`);
    throw err;
  }
});
