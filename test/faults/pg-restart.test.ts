/**
 * PostgreSQL stopped with `-m immediate` and started again under load (third case).
 *
 * Runs only with FAULTS_PG_RESTART=1: it stops the whole local cluster (every database on it, other
 * people's too) for ~10 s. PostgreSQL is started again in a `finally` whatever happens. The cluster is
 * FAULTS_PG_CLUSTER ("<version> <name>", default: the newest version under /etc/postgresql, `main`).
 *
 * The scenario is `outageScenario` (helpers.ts): one API process and one worker on a database of their
 * own, webhook deliveries, paced load; 5 s in, `pg_ctlcluster ... stop -m immediate` (no checkpoint,
 * every connection cut), 10 s later `start`; 15 s more load. Neither process is restarted by the test.
 *
 * Proves: while PostgreSQL is down every answer is 503 {"detail":"Service unavailable"} with
 * Retry-After (no 500, no hang beyond the client's 20 s bound) and /readyz says 503; the same processes
 * answer 200 again by themselves once it is back; everything answered `accepted` — before, around and
 * after the outage — is processed: every batch completed, every message sent and received; no process
 * dies on the way. db-reset.test.ts runs the same scenario without touching the cluster.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { Harness, outageScenario, pgReady, report, SKIP, waitFor } from './helpers.ts';

const run = promisify(execFile);
const ENABLED = process.env.FAULTS_PG_RESTART === '1';

function cluster(): [string, string] {
  const given = process.env.FAULTS_PG_CLUSTER?.trim().split(/\s+/);
  if (given?.length === 2) return [given[0], given[1]];
  const versions = fs.readdirSync('/etc/postgresql').sort((a, b) => Number(a) - Number(b));
  return [versions.at(-1)!, 'main'];
}

async function pgctl(action: 'start' | 'stop'): Promise<void> {
  const [version, name] = cluster();
  const args = ['--skip-systemctl-redirect', version, name, action, ...(action === 'stop' ? ['-m', 'immediate'] : [])];
  await run('pg_ctlcluster', args, { timeout: 60_000 });
}

const h = new Harness('pg');
let failed = false;
after(async () => { await h.cleanup(failed); });

test('PostgreSQL stopped (-m immediate) and restarted under load: 503 with Retry-After meanwhile, recovery, nothing accepted lost', {
  skip: SKIP || (ENABLED ? false : 'stops the shared PostgreSQL cluster: set FAULTS_PG_RESTART=1'),
  timeout: 300_000,
}, async () => {
  let stopped = false;
  try {
    const url = await h.database();
    await outageScenario({
      h, label: 'pg-restart', serviceDbUrl: url, checkDbUrl: url, downMs: 10_000, phoneBase: 3_000_000,
      async cut() {
        stopped = true;
        await pgctl('stop');
      },
      async restore() {
        await pgctl('start');
        await waitFor('PostgreSQL accepts connections', pgReady, 60_000, 200);
        stopped = false;
      },
    });
  } catch (err) {
    failed = true;
    for (const p of h.procs) report(`${p.opts.name} (pid ${p.pid}, ${p.starts} starts) last output:\n${p.tail.slice(-15).join('\n')}`);
    throw err;
  } finally {
    if (stopped || !(await pgReady())) {
      await pgctl('start').catch((err) => report(`starting PostgreSQL again failed: ${(err as Error).message}`));
      await waitFor('PostgreSQL accepts connections', pgReady, 60_000, 200).catch(() => report('PostgreSQL is NOT accepting connections'));
    }
  }
});
