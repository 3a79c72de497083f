/**
 * The database connection lost under load, without stopping the shared cluster (complements
 * pg-restart.test.ts, and runs in every `npm run test:faults`).
 *
 * The same scenario (`outageScenario`, helpers.ts: one API process, one worker, webhook deliveries,
 * paced load), but the service reaches PostgreSQL through a TCP proxy owned by the test: 5 s in, the
 * proxy resets every connection (TCP RST, what clients of a PostgreSQL killed with `-m immediate`
 * often see) and refuses new ones for 10 s, then accepts again.
 *
 * Proves the same as the PostgreSQL restart: 503 with Retry-After while the database is unreachable,
 * recovery by itself, nothing accepted lost, and no process dies on a reset connection.
 */
import { after, test } from 'node:test';
import { Harness, outageScenario, PgProxy, report, SKIP } from './helpers.ts';

const h = new Harness('reset');
let failed = false;
after(async () => { await h.cleanup(failed); });

test('database connections reset and refused for 10 s under load: 503 with Retry-After meanwhile, no process dies, recovery, nothing accepted lost', {
  skip: SKIP, timeout: 300_000,
}, async () => {
  const url = await h.database();
  const proxy = new PgProxy(url);
  await proxy.start();
  h.cleanups.push(() => proxy.cut());
  try {
    await outageScenario({
      h, label: 'db-reset', serviceDbUrl: proxy.url, checkDbUrl: url, downMs: 10_000, phoneBase: 4_000_000,
      cut: () => proxy.cut(),
      restore: () => proxy.restore(),
    });
  } catch (err) {
    failed = true;
    for (const p of h.procs) report(`${p.opts.name} (pid ${p.pid}, ${p.starts} starts) last output:\n${p.tail.slice(-15).join('\n')}`);
    throw err;
  }
});
