/**
 * Rate limits exact across processes (acceptance: "two API processes, one company,
 * 0 over-admissions").
 *
 * Two `cms serve --role api` processes on one PostgreSQL database of their own, one company, and 32
 * request loops (16 per process) sending trigger-automation requests back to back for ~6 s (a few
 * 1-second windows, far more than 20 requests per second offered). Every answer is recorded with the
 * test's own Date.now() just before the request was written (`start`) and just after the answer was
 * read (`end`).
 *
 * What is checked, and why it is sound:
 *
 * - The limiter decides each request at some instant between `start` and `end` of that request as the
 *   client saw it (the server's clock and the test's are the same machine clock; Date.now() in both, so
 *   there is no skew between them beyond a clock step, which would have to happen during the run).
 *   Hence any set of admitted (200) requests whose whole [start, end] intervals fit inside 1,000 ms
 *   were admitted within one 1-second window, and there may be at most 20 such. The margin for
 *   observation skew is exactly each request's own latency: a request is only counted in a window
 *   if its entire observed interval lies inside it, so no admission is ever attributed to a window it
 *   might not belong to. (Counting the 200 answers by arrival time alone would not be sound: an
 *   answer can arrive after the next window has begun.)
 * - Over the whole run, from the first `start` to the last `end`, at most 20 per started second can be
 *   admitted: admitted <= 20 x ceil(span / 1000).
 * - Inside the database, a trigger that the test adds to its own copy of `rate_limit_logs` records
 *   every admission as it happens, with the database time the limiter stamped it with (read under the
 *   row lock that serialises the decisions): the exact admission instants. Their number must equal the 200 answers,
 *   and no 1,000 ms sliding window of them may hold more than 20.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, createTenants, Harness, report, SKIP, sendOne, sqlOn, summarize, type Sent } from './helpers.ts';

const LIMIT = 20;
const WINDOW_MS = 1_000;
const DURATION_MS = 6_000;
const LOOPS_PER_PROCESS = 16;

const h = new Harness('ratelimit');
let failed = false;
after(async () => { await h.cleanup(failed); });

/** Most items of `times` (sorted, ms) inside any half-open window [t, t + windowMs). */
function maxInWindow(times: number[], windowMs: number): number {
  let best = 0;
  for (let i = 0, j = 0; j < times.length; j++) {
    while (times[j] - times[i] >= windowMs) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

test('two API processes, one company: never more than 20 admitted in any 1-second window', { skip: SKIP, timeout: 120_000 }, async (t) => {
  try {
    const url = await h.database();
    // The default pool size (DB_POOL_MAX 10) of each process.
    const apis = [1, 2].map((n) => h.proc({ name: `api-${n}`, role: 'api', databaseUrl: url, env: { DB_POOL_MAX: '10' } }));
    await Promise.all(apis.map((a) => a.start()));
    const [tenant] = await createTenants(apis[0].url, 1);
    await sqlOn(url, `
      CREATE TABLE faults_admissions (bucket text NOT NULL, token numeric NOT NULL, at timestamptz NOT NULL);
      CREATE FUNCTION faults_log_admission() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- One statement may admit several requests of a bucket (the limiter decides the requests of one
        -- event-loop turn together): NEW.admitted of them, all at its time NEW.decided_us (µs).
        INSERT INTO faults_admissions
          SELECT NEW.bucket, NEW.decided_us, clock_timestamp() FROM generate_series(1, NEW.admitted);
        RETURN NULL;
      END $$;
      CREATE TRIGGER faults_admissions AFTER INSERT OR UPDATE ON rate_limit_logs FOR EACH ROW EXECUTE FUNCTION faults_log_admission();`);
    await admin(apis[0].url, 'DELETE', `/admin/companies/${tenant.companyId}/rate-limits`);

    const sent: Sent[] = [];
    const deadline = Date.now() + DURATION_MS;
    let n = 0;
    const loop = async (target: string) => {
      while (Date.now() < deadline) {
        const i = n++;
        sent.push(await sendOne(target, tenant, i, [{ phone: `+4915123${String(i).padStart(6, '0')}`, first_name: 'R' }], 15_000));
      }
    };
    await Promise.all(apis.flatMap((a) => Array.from({ length: LOOPS_PER_PROCESS }, () => loop(a.url))));

    const answers = summarize(sent);
    const ok = sent.filter((s) => s.status === 200).sort((a, b) => a.start - b.start);
    const perProcess = apis.map((a) => ok.filter((s) => s.target === a.url).length);
    const first = Math.min(...sent.map((s) => s.start));
    const last = Math.max(...sent.map((s) => s.end));
    const latencies = sent.map((s) => s.end - s.start).sort((a, b) => a - b);

    // Sound check on observed intervals: requests whose whole [start, end] fits in [ok[i].start, +999].
    let provable = 0;
    for (const a of ok) {
      const inside = ok.filter((b) => b.start >= a.start && b.end <= a.start + WINDOW_MS - 1).length;
      provable = Math.max(provable, inside);
    }
    const byArrival = maxInWindow(ok.map((s) => s.end).sort((a, b) => a - b), WINDOW_MS);
    const bound = LIMIT * Math.ceil((last - first + 1) / WINDOW_MS);

    // The admission instants recorded by the database.
    // The limiter's token is the database clock (µs) read under the row lock at the admission; `at` is
    // when the trigger ran, a few µs later (kept for the report).
    const rows = await sqlOn<{ ms: string; token: string }>(url, `SELECT (floor(token) / 1000)::text AS ms, (extract(epoch FROM at) * 1000)::text AS token FROM faults_admissions ORDER BY token`);
    const dbTimes = rows.map((r) => Number(r.ms));
    const dbMax = maxInWindow(dbTimes, WINDOW_MS);
    // How old the time the limiter decided with (its token, the API process's clock when the request
    // reached the limiter) was when the database actually admitted it.
    const staleness = rows.map((r) => Math.abs(Number(r.token) - Number(r.ms))).sort((a, b) => a - b);
    if (dbMax > LIMIT) {
      // Show the fullest window: when each admission happened, and the limiter time it was decided with.
      const from = dbTimes.findIndex((t0) => dbTimes.filter((x) => x >= t0 && x < t0 + WINDOW_MS).length === dbMax);
      const t0 = dbTimes[from];
      const inWin = rows.filter((r) => Number(r.ms) >= t0 && Number(r.ms) < t0 + WINDOW_MS);
      report(`rate-limit: ${inWin.length} admissions in [${new Date(t0).toISOString()}, +1 s) by the database clock; `
        + `(admitted at +ms, decided with limiter time +ms): ${inWin.map((r) => `(${(Number(r.ms) - t0).toFixed(0)}, ${Math.floor(Number(r.token)) - Math.floor(t0)})`).join(' ')}`);
    }

    report(`rate-limit: ${sent.length} requests in ${((last - first) / 1000).toFixed(1)} s over 2 processes, answers ${JSON.stringify(answers)} `
      + `(admitted per process ${perProcess.join(' + ')}); latency p50 ${latencies[Math.floor(latencies.length / 2)]} ms, p99 ${latencies[Math.floor(latencies.length * 0.99)]} ms; `
      + `most admissions provably inside one window ${provable}; by answer arrival ${byArrival}; by database clock ${dbMax} (of ${dbTimes.length}); bound over the run ${bound}; `
      + `limiter time older than the admission by p50 ${staleness[Math.floor(staleness.length / 2)].toFixed(0)} ms, max ${staleness.at(-1)!.toFixed(0)} ms`);

    await t.test('as observed by the clients: at most 20 admissions provably within one window, and over the run', () => {
      assert.deepEqual(Object.keys(answers).sort(), ['200', '429'], 'only 200 and 429 answers, and both occur');
      assert.ok(perProcess.every((k) => k > 0), 'both processes admitted requests');
      assert.ok(provable <= LIMIT, `at most ${LIMIT} admissions provably within one window (found ${provable})`);
      assert.ok(ok.length <= bound, `admitted ${ok.length} <= ${bound} over the run`);
      assert.ok(ok.length >= LIMIT * Math.floor(DURATION_MS / WINDOW_MS) * 0.75, 'the limit was used (not a limiter that refuses everything)');
    });
    await t.test('at the instants the database admitted them: at most 20 in any 1-second window', () => {
      assert.equal(dbTimes.length, ok.length, 'one recorded admission per 200 answer');
      assert.ok(dbMax <= LIMIT, `at most ${LIMIT} admissions in any 1-second window of the database clock (found ${dbMax}); `
        + `the limiter decides with the API process's clock read before it waits for a pooled connection and the row lock `
        + `(up to ${staleness.at(-1)!.toFixed(0)} ms earlier here), so a late admission is logged as if it were earlier and its slot frees early`);
    });
  } catch (err) {
    failed = true;
    for (const p of h.procs) report(`${p.opts.name} (pid ${p.pid}) last output:\n${p.tail.slice(-10).join('\n')}`);
    throw err;
  }
});
