/**
 * Screenshots of the segment pages into docs/console/ (or DIR), wide (1280 px) and
 * phone-sized (360 px):
 *
 *   node test/console/segments-screenshots.ts [DIR]
 *
 * Starts the service on a fresh embedded database, sets up a company with contacts and two segments,
 * and photographs in Chromium: the list with the create form (`segments`), a segment's page right after
 * members were added by pasted numbers, with the summary (`segment`), the same page with a refused CSV
 * upload (`segment-upload-error`) and the delete confirmation (`segment-delete`). Not a test.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { browserSkipReason, launchBrowser, newUser, PASSWORD, takeScreenshots } from './helpers.ts';

const dir = path.resolve(process.argv[2] ?? 'docs/console');
const skip = browserSkipReason();
if (skip) throw new Error(skip);
fs.mkdirSync(dir, { recursive: true });

const s = await startTestServer();
const browser = await launchBrowser({ viewport: { width: 1280, height: 900 } });
const names = ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Katherine Johnson', 'Edsger Dijkstra', 'Barbara Liskov', 'Donald Knuth', 'Margaret Hamilton'];
try {
  const c = await s.company({ name: 'Acme Shoes' });
  const phones = names.map((_, i) => `+49151123456${String(70 + i)}`);
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: names.map((n, i) => ({ phone: phones[i], first_name: n.split(' ')[0], last_name: n.split(' ')[1] })) });
  await s.admin('POST', `/admin/companies/${c.companyId}/segments`, { name: 'Newsletter' }, 201);
  const vip = await s.admin('POST', `/admin/companies/${c.companyId}/segments`, { name: 'VIP customers' }, 201);
  await s.admin('POST', `/admin/segments/${vip.segment_id}/members`, { mode: 'add', contacts: phones.slice(0, 3) });
  const semicolons = path.join(dir, '.segment-semicolons.csv');
  fs.writeFileSync(semicolons, 'phone;name\n+4915112345670;Ada\n');

  const page = await browser.context.newPage();
  const email = await newUser(s, c.companyId);
  await page.goto(`${s.url}/console/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/console\/(?!login)/);
  const segPage = `${s.url}/console/segments/${vip.segment_id}`;

  const shots: [string, () => Promise<unknown>][] = [
    ['segments', () => page.goto(`${s.url}/console/segments`)],
    ['segment', async () => {
      await page.goto(segPage);
      await page.getByLabel(/^Phone numbers/).fill([...phones.slice(2), '0151 1234 5699', 'call me later'].join('\n'));
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.locator('[data-summary]').waitFor();
    }],
    ['segment-upload-error', async () => {
      await page.goto(segPage);
      await page.getByLabel(/^Or a CSV file/).setInputFiles(semicolons);
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.locator('#file-error').waitFor();
      await page.locator('#file-error').scrollIntoViewIfNeeded();
    }],
    ['segment-delete', () => page.goto(`${segPage}/delete`)],
  ];
  await takeScreenshots(page, dir, shots);
  fs.rmSync(semicolons);
  console.log(`screenshots in ${dir}`);
} finally {
  await browser.close();
  await s.close();
}
