/**
 * The console's Overview page: messages per local day by status over the last 30
 * days, the top failure reasons and the opt-out rate, for batches and contacts written at known times
 * with the service's clock fixed (FakeClock). Days follow the company's delivery-hours time zone (UTC
 * without); another company's messages and contacts are never counted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { newCompany, signedInClient } from './helpers.ts';
import { addContacts, insertBatchAt, seedCompany } from './overview-data.ts';

/** The service's "now": 2026-03-10 11:00 in Berlin (CET, UTC+1). */
const NOW = Date.parse('2026-03-10T10:00:00Z');

/** The cells of the per-day table's row for `day` (Day, then the statuses, then Total). */
function dayRow(page: string, day: string): string[] | undefined {
  const row = page.split('<tr').find((r) => r.includes(`<time datetime="${day}">`) && r.includes('data-label="Read"'));
  if (!row) return undefined;
  return [...row.matchAll(/<span class="cell">(.*?)<\/span><\/td>/gs)].map((m) => m[1].replace(/<[^>]+>/g, ''));
}

function stat(page: string, name: string): string | undefined {
  return new RegExp(`data-stat="${name}">([^<]*)<`).exec(page)?.[1];
}

describe('console overview', () => {
  let s: TestServer;
  const clock = new FakeClock(NOW);
  before(async () => {
    s = await startTestServer({ clock, role: 'api' });
  });
  after(async () => {
    await s.close();
  });

  test('messages per Berlin day by status, top failure reasons and opt-out rate; another company is never counted', async () => {
    const berlin = await newCompany(s, { delivery_hours: { start: '08:00', end: '20:00', timezone: 'Europe/Berlin' } });
    const other = await newCompany(s, { delivery_hours: { start: '08:00', end: '20:00', timezone: 'Europe/Berlin' } });
    await seedCompany(s, berlin);
    // The other company: the same days, more of everything.
    await seedCompany(s, other);
    await insertBatchAt(s, other, '2026-03-10T08:00:00Z', Array.from({ length: 7 }, () => ({ status: 'failed' as const, error: 'timeout after 15000 ms' })));
    await addContacts(s, other, ['2026-03-06T09:00:00Z', '2026-03-06T09:00:00Z']);

    const c = await signedInClient(s, berlin);
    const home = await c.get('/console/');
    assert.equal(home.status, 302);
    assert.equal(home.location, '/console/overview');
    const r = await c.get('/console/overview');
    assert.equal(r.status, 200);
    const page = r.text;
    assert.match(page, /<h1>Overview<\/h1>/);
    assert.match(page, /<time datetime="2026-02-09">2026-02-09<\/time> to <time datetime="2026-03-10">2026-03-10<\/time>/);
    assert.match(page, /time zone Europe\/Berlin/);
    // 4 + 2 today, 1 on the first day, 4 on March 1st; nothing from before the period or from tomorrow.
    assert.equal(stat(page, 'total'), '11');
    assert.equal(stat(page, 'failed'), '3');
    assert.equal(stat(page, 'skipped'), '3');
    assert.equal(stat(page, 'delivered-share'), '27.3%'); // 1 read + 1 delivered today, 1 read on 02-09: 3 / 11
    //                                         day           read delivered sent pending skipped failed total
    assert.deepEqual(dayRow(page, '2026-03-10'), ['2026-03-10', '1', '1', '1', '0', '1', '2', '6']);
    assert.deepEqual(dayRow(page, '2026-03-09'), ['2026-03-09', '0', '0', '0', '0', '0', '0', '0']);
    assert.deepEqual(dayRow(page, '2026-03-01'), ['2026-03-01', '0', '0', '0', '1', '2', '1', '4']);
    assert.deepEqual(dayRow(page, '2026-02-09'), ['2026-02-09', '1', '0', '0', '0', '0', '0', '1']);
    assert.equal(dayRow(page, '2026-02-08'), undefined);
    assert.equal(dayRow(page, '2026-03-11'), undefined);
    assert.equal(page.match(/<tr><td data-label="Day">/g)?.length, 30);

    // The chart: an image with a title and a description that sums it up, one bar group per day.
    assert.match(page, /<svg class="chart"[^>]*role="img" aria-labelledby="chart-title chart-desc"/);
    assert.match(page, /<title id="chart-title">Messages per day by status, Feb 9 to Mar 10<\/title>/);
    assert.match(page, /<desc id="chart-desc">11 messages from Feb 9 to Mar 10: 2 read, 1 delivered, 1 sent, 1 pending, 3 skipped, 3 failed\. The busiest day was Mar 10 with 6\.<\/desc>/);
    assert.equal(page.match(/<g class="bar">/g)?.length, 30);
    assert.match(page, /<title>Mar 10: 6 messages \(1 read, 1 delivered, 1 sent, 1 skipped, 2 failed\)<\/title>/);

    // Top failure reasons: 131026 twice, then opted_out twice, then the single ones by code.
    const reasons = [...page.matchAll(/<td data-label="Reason"><span class="cell">(.*?)<\/span>.*?<td data-label="Messages" class="num"><span class="cell">(\d+)</gs)].map((m) => `${m[1]}: ${m[2]}`);
    assert.deepEqual(reasons, [
      'Undeliverable: the number may not use WhatsApp, or has an old app version: 2',
      'The contact opted out of campaigns: 2',
      'The receiver was unavailable (HTTP 503): 1',
      'Not a valid phone number: 1',
    ]);
    assert.doesNotMatch(page, /did not answer in time/); // the other company's timeouts

    // Opt-outs: 2 of 5 contacts, one of them within the period.
    assert.equal(stat(page, 'opt-out-rate'), '40%');
    assert.equal(stat(page, 'opted-out'), '2 of 5 contacts (40%)');
    assert.equal(stat(page, 'opted-out-in-period'), '1 (still opted out)');

    // The other company's user sees its own, larger numbers.
    const o = await signedInClient(s, other);
    const otherPage = (await o.get('/console/overview')).text;
    assert.equal(stat(otherPage, 'total'), '18');
    assert.equal(stat(otherPage, 'opted-out'), '4 of 7 contacts (57.1%)');
    assert.match(otherPage, /The provider did not answer in time/);
  });

  test('a company without delivery hours counts UTC days; an empty company shows zeros', async () => {
    const utc = await newCompany(s);
    await seedCompany(s, utc);
    const c = await signedInClient(s, utc);
    const page = (await c.get('/console/overview')).text;
    assert.match(page, /time zone UTC/);
    assert.match(page, /<time datetime="2026-02-09">2026-02-09<\/time> to <time datetime="2026-03-10">2026-03-10<\/time>/);
    // 23:30Z on 03-09 is yesterday in UTC; 02-08 23:30Z is before the period; 03-10 23:30Z is today.
    assert.deepEqual(dayRow(page, '2026-03-10'), ['2026-03-10', '1', '1', '0', '1', '0', '2', '5']);
    assert.deepEqual(dayRow(page, '2026-03-09'), ['2026-03-09', '0', '0', '1', '0', '1', '0', '2']);
    assert.deepEqual(dayRow(page, '2026-02-09'), ['2026-02-09', '0', '0', '0', '0', '0', '0', '0']);
    assert.equal(stat(page, 'total'), '11');

    const empty = await newCompany(s);
    const e = await signedInClient(s, empty);
    const emptyPage = (await e.get('/console/overview')).text;
    assert.equal(stat(emptyPage, 'total'), '0');
    assert.equal(stat(emptyPage, 'delivered-share'), '—');
    assert.equal(stat(emptyPage, 'opt-out-rate'), '—');
    assert.match(emptyPage, /<desc id="chart-desc">No messages from Feb 9 to Mar 10\.<\/desc>/);
    assert.match(emptyPage, /No message failed or was skipped in this period\./);
  });

  test('the period follows the clock', async () => {
    const companyId = await newCompany(s, { delivery_hours: { start: '08:00', end: '20:00', timezone: 'Europe/Berlin' } });
    await seedCompany(s, companyId);
    clock.set(Date.parse('2026-04-05T10:00:00Z')); // 26 days later: only the batches of March 10th and 11th (Berlin) remain
    try {
      const c = await signedInClient(s, companyId);
      const page = (await c.get('/console/overview')).text;
      assert.match(page, /<time datetime="2026-03-07">2026-03-07<\/time> to <time datetime="2026-04-05">2026-04-05<\/time>/);
      assert.equal(stat(page, 'total'), '7'); // 6 on 03-10 and the pending one of 03-11
      assert.deepEqual(dayRow(page, '2026-03-11'), ['2026-03-11', '0', '0', '0', '1', '0', '0', '1']);
    } finally {
      clock.set(NOW);
    }
  });

  test('without a session the page redirects to sign-in', async () => {
    const r = await fetch(`${s.url}/console/overview`, { redirect: 'manual' });
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), '/console/login?next=%2Fconsole%2Foverview');
  });
});
