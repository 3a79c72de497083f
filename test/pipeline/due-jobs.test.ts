/**
 * Jobs that come due later wake their workers (src/db/driver-tricks.ts trick 6,
 * src/queue/due-job-wakeups.ts, docs/architecture.md "Queue polling"). pg-boss notifies a queue's
 * workers only when a job is inserted ready to run; with the wake-ups on, the workers' own poll is a
 * 30 s backstop. So a deferred job that becomes due is run within the waits below only if the
 * wake-up statement's notification reached the workers: these tests fail if it does not. With the
 * driver tricks off the service's loops poll every second instead (the last test shows that).
 *
 * A job "comes due" here by moving its `start_after` into the past, as time passing would.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { notifyDueQueues } from '../../src/db/driver-tricks.ts';
import { BOSS_SCHEMA } from '../../src/queue/boss.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';

/** Makes the job `id` of queue `name` due now (as if its start time had passed). */
async function makeDue(s: TestServer, name: string, id: string): Promise<void> {
  await sql`UPDATE ${sql.table(`${BOSS_SCHEMA}.job`)} SET start_after = now() - interval '1 second' WHERE name = ${name} AND id = ${id}::uuid`
    .execute(s.service.deps.database.db);
}

/** Well under the workers' own 30 s poll: a job run within it was woken. */
const WOKEN_WITHIN_MS = 10_000;

/**
 * Sends a `batch-control` job an hour ahead, for a batch that does not exist (the handler finds
 * nothing to do and completes), makes it due, and waits until the service's workers have run it.
 */
async function deferredControlJobRuns(s: TestServer): Promise<void> {
  const { boss } = s.service.deps;
  const id = (await boss.send('batch-control', { batch_id: randomUUID() }, { startAfter: 3_600 }))!;
  assert.equal((await boss.getJobById('batch-control', id))?.state, 'created');
  await makeDue(s, 'batch-control', id);
  const job = await eventually(async () => {
    const j = await boss.getJobById('batch-control', id);
    return j?.state === 'completed' ? j : undefined;
  }, WOKEN_WITHIN_MS);
  assert.equal(job.state, 'completed');
}

describe('jobs that come due wake their workers', () => {
  let s: TestServer;
  before(async () => { s = await startTestServer({ own: true }); });
  after(() => s?.close());

  test('the wake-up statement names only queues with a job due, and its notification wakes a sleeping worker', async () => {
    const { boss, database } = s.service.deps;
    const queue = `due-jobs-test-${randomUUID()}`;
    await boss.createQueue(queue, { notify: true });
    const ran: string[] = [];
    await boss.work(queue, { pollingIntervalSeconds: 0.5, notifyPollingIntervalSeconds: 30 }, async (jobs) => { for (const j of jobs) ran.push(j.id); });
    try {
      const id = (await boss.send(queue, { n: 1 }, { startAfter: 3_600 }))!;
      assert.deepEqual(await notifyDueQueues(database.db, BOSS_SCHEMA, [queue]), [], 'a job an hour away is not due');
      assert.equal(ran.length, 0, 'the deferred job did not run');

      await makeDue(s, queue, id);
      assert.deepEqual(await notifyDueQueues(database.db, BOSS_SCHEMA, [queue, `${queue}-none`]), [queue]);
      await eventually(async () => ran.includes(id), WOKEN_WITHIN_MS);
      assert.deepEqual(ran, [id], 'the worker ran the job once');
    } finally {
      await boss.offWork(queue);
      await boss.deleteQueue(queue);
    }
  });

  test("the workers' own wake-up rounds run a job of the service's queues that comes due", () => deferredControlJobRuns(s));
});

describe('with the driver tricks off the workers find a job that comes due by polling', () => {
  let s: TestServer;
  before(async () => { s = await startTestServer({ own: true, env: { DB_DRIVER_TRICKS: 'off' } }); });
  after(() => s?.close());

  test('a deferred control job made due is run without any wake-up', async () => {
    assert.equal(s.service.deps.database.driverTricks, false);
    await deferredControlJobRuns(s);
  });
});
