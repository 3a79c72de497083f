/**
 * Screenshots of the Overview page into docs/console/ (or DIR), wide (1280 px) and
 * phone-sized (390 px):
 *
 *   node test/console/overview-screenshots.ts [DIR]
 *
 * Starts the service on a fresh embedded database with a fake clock (2026-06-01 12:00 UTC), gives a
 * company a month of sends (one campaign batch a day, 150 to 900 messages, statuses and failure codes
 * spread like a real month) and 400 contacts of which some opted out, and photographs the page in
 * Chromium. Not a test.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FakeClock, startTestServer } from '../helpers/server.ts';
import { browserSkipReason, launchBrowser, newUser, PASSWORD } from './helpers.ts';
import { addContacts, insertBatchAt } from './overview-data.ts';

const dir = path.resolve(process.argv[2] ?? 'docs/console');
const skip = browserSkipReason();
if (skip) throw new Error(skip);
fs.mkdirSync(dir, { recursive: true });

const NOW = Date.parse('2026-06-01T12:00:00Z');
const s = await startTestServer({ clock: new FakeClock(NOW), role: 'api' });
const browser = await launchBrowser({ viewport: { width: 1280, height: 900 } });
try {
  const c = await s.company({ name: 'Acme Shoes', delivery_hours: { start: '09:00', end: '21:00', timezone: 'Europe/Berlin' } });
  const email = await newUser(s, c.companyId);
  await addContacts(s, c.companyId, Array.from({ length: 400 }, (_, i) => (i % 23 === 0 ? new Date(NOW - (i % 40) * 86_400_000).toISOString() : null)));
  // A month of sends: more on weekdays, a campaign peak mid-month, today's still partly pending.
  const failures = [
    { status: 'failed' as const, error: 'Message undeliverable (HTTP 400)', error_code: '131026' },
    { status: 'failed' as const, error: 'Re-engagement message (HTTP 400)', error_code: '131047' },
    { status: 'failed' as const, error: 'HTTP 503', error_code: '503' },
    { status: 'skipped' as const, reason: 'opted_out' },
    { status: 'skipped' as const, reason: 'invalid_phone' },
  ];
  for (let day = 29; day >= 0; day--) {
    const at = new Date(NOW - day * 86_400_000 - 3 * 3_600_000);
    const weekday = at.getUTCDay() % 6 !== 0;
    const size = (weekday ? 450 : 150) + (day === 14 ? 450 : 0) + ((day * 37) % 120);
    const messages = Array.from({ length: size }, (_, i) => {
      const h = (i * 7919 + day * 104729) % 1000;
      if (day === 0 && h < 300) return { status: 'pending' as const };
      if (h < 480) return { status: 'read' as const };
      if (h < 790) return { status: 'delivered' as const };
      if (h < 900) return { status: 'sent' as const };
      return failures[h % 5 === 0 || h > 975 ? 0 : h % 5];
    });
    await insertBatchAt(s, c.companyId, at.toISOString(), messages);
  }

  const page = await browser.context.newPage();
  await page.goto(`${s.url}/console/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/console\/(?!login)/);
  for (const [suffix, width] of [['', 1280], ['-phone', 390]] as const) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${s.url}/console/overview`);
    const file = path.join(dir, `overview${suffix}.png`);
    await page.screenshot({ path: file, fullPage: true });
    console.log(file);
  }
} finally {
  await browser.close();
  await s.close();
}
