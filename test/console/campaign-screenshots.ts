/**
 * Screenshots of the automation, campaign and campaign-send pages into
 * docs/console/ (or DIR), wide (1280 px) and phone-sized (360 px):
 *
 *   node test/console/campaign-screenshots.ts [DIR]
 *
 * Starts the service on a fresh embedded database with a fake clock, sets up a company with contacts,
 * a segment, an automation and a campaign, and photographs each page in Chromium. Not a test.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FakeClock, startTestServer } from '../helpers/server.ts';
import { browserSkipReason, launchBrowser, newUser, PASSWORD, takeScreenshots } from './helpers.ts';

const dir = path.resolve(process.argv[2] ?? 'docs/console');
const skip = browserSkipReason();
if (skip) throw new Error(skip);
fs.mkdirSync(dir, { recursive: true });

const s = await startTestServer({ clock: new FakeClock(Date.parse('2026-06-01T10:00:00Z')) });
const browser = await launchBrowser({ viewport: { width: 1280, height: 900 } });
try {
  const c = await s.company({ name: 'Acme Shoes', delivery_hours: { start: '09:00', end: '21:00', timezone: 'Europe/Berlin' } });
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [
    { phone: '+4915112345678', first_name: 'Ada', variables: { city: 'Köln', size: 38 } },
    { phone: '+4915112345679', first_name: 'Grace', opted_out: true },
    { phone: '+4915112345680', first_name: 'Alan' },
  ] });
  const seg = await s.api('/api/segments/create', { key: c.key, body: { name: 'VIP customers' } });
  await s.api(`/api/segments/${seg.json.segment_id}/contacts`, { key: c.key, body: { contacts: ['+4915112345678', '+4915112345679', '+4915112345680'], mode: 'add' } });
  const auto = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'Order shipped', type: 'api', active: true, template: {
    header: { type: 'text', text: 'Hi {{ first_name }}' }, body: 'Your order is on its way to {{ city | default: "you" }}.',
    buttons: [{ type: 'url', text: 'Track', url: 'https://shop.example/track' }], whatsapp: { name: 'order_shipped', language: 'en_US', body_parameters: 1, header_parameters: 1 },
  } });
  const camp = await s.admin('POST', `/admin/companies/${c.companyId}/campaigns`, { name: 'Summer sale', template: { body: 'Summer sale, {{ first_name }}: 20% off in size {{ size }}.' } });
  const page = await browser.context.newPage();
  const email = await newUser(s, c.companyId);
  await page.goto(`${s.url}/console/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/credentials$/);

  const shots: [string, () => Promise<unknown>][] = [
    ['automations', () => page.goto(`${s.url}/console/automations`)],
    ['automation-edit-preview', () => page.goto(`${s.url}/console/automations/${auto.automation_id}?preview=1&preview_phone=%2B4915112345678`)],
    ['campaigns', () => page.goto(`${s.url}/console/campaigns`)],
    ['campaign-send', () => page.goto(`${s.url}/console/campaigns/${camp.campaign_id}/send`)],
    ['campaign-send-review', async () => {
      await page.goto(`${s.url}/console/campaigns/${camp.campaign_id}/send`);
      await page.getByLabel('Segment', { exact: true }).selectOption(String(seg.json.segment_id));
      await page.getByLabel('At a date and time').check();
      await page.getByLabel(/^Date and time/).fill('2026-06-02T08:00');
      await page.getByRole('button', { name: 'Review' }).click();
      await page.locator('[data-plan]').waitFor();
    }],
  ];
  await takeScreenshots(page, dir, shots);
  console.log(`screenshots in ${dir}`);
} finally {
  await browser.close();
  await s.close();
}
