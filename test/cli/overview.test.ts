/**
 * `cms overview --company ID` against the real server: the JSON is the operator
 * API's answer; the text shows the period, totals, opt-out rate, the days and the reasons; an unknown
 * company exits 1 with the server's detail.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { seedCompany } from '../console/overview-data.ts';
import { cliFor } from './helpers.ts';

/** Runs `cms <args>` against the test server (test/cli/helpers.ts); resolves to stdout, stderr and the exit code. */
async function cms(s: TestServer, args: string[]): Promise<{ out: string; err: string; code: number | null }> {
  const r = await cliFor(s)(args);
  return { out: r.stdout, err: r.stderr, code: r.code };
}

describe('cms overview', () => {
  let s: TestServer;
  let companyId: number;
  before(async () => {
    s = await startTestServer({ clock: new FakeClock(Date.parse('2026-03-10T10:00:00Z')), role: 'api' });
    companyId = (await s.admin('POST', '/admin/companies', { name: 'CLI Co', delivery_hours: { start: '08:00', end: '20:00', timezone: 'Europe/Berlin' } })).company_id;
    await seedCompany(s, companyId);
  });
  after(async () => {
    await s.close();
  });

  test('--json prints the operator API answer', async () => {
    const { out, code } = await cms(s, ['overview', '--company', String(companyId), '--json']);
    assert.equal(code, 0);
    assert.deepEqual(JSON.parse(out), await s.admin('GET', `/admin/companies/${companyId}/overview`));
  });

  test('text: period, totals, opt-out rate, days and reasons', async () => {
    const { out, code } = await cms(s, ['overview', '--company', String(companyId)]);
    assert.equal(code, 0);
    assert.match(out, /^Company \d+: 2026-02-09 to 2026-03-10 \(days in Europe\/Berlin\)$/m);
    assert.match(out, /^messages 11: read 2 · delivered 1 · sent 1 · pending 1 · skipped 3 · failed 3$/m);
    assert.match(out, /^opt-out rate: 2 of 5 contacts \(40\.0%\); 1 opted out in the period$/m);
    assert.match(out, /^2026-03-10\t1\t1\t1\t0\t1\t2\t6$/m);
    assert.match(out, /^status\tcode\tcount\treason$/m);
    assert.match(out, /^failed\t131026\t2\tUndeliverable: the number may not use WhatsApp, or has an old app version$/m);
  });

  test('an unknown company: the server\'s 404 detail, exit code 1', async () => {
    const { err, code } = await cms(s, ['overview', '--company', '2147483000']);
    assert.equal(code, 1);
    assert.match(err, /Company not found/);
  });
});
