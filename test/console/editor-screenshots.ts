/**
 * Screenshots of the automation editor with its live preview (docs/console.md "Editor and live
 * preview"):
 *
 *   node test/console/editor-screenshots.ts [DIR]
 *
 * Writes `editor-preview.png` (the editor and the bubble beside it at 1280 px, cropped to them: the
 * picture of docs/console.md) into DIR (default docs/console), and full pages at 1280 and 360 px
 * (`editor-preview-full.png`, `editor-preview-full-phone.png`) and the preview alone at 360 px
 * (`editor-preview-aside-phone.png`) into /tmp for a look at the layout.
 * Starts the service on a fresh embedded database, sets up a company with a contact and an automation,
 * picks the contact for the preview and types a change. Not a test.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { browserSkipReason, launchBrowser, newUser, PASSWORD } from './helpers.ts';

const dir = path.resolve(process.argv[2] ?? 'docs/console');
const skip = browserSkipReason();
if (skip) throw new Error(skip);
fs.mkdirSync(dir, { recursive: true });

const s = await startTestServer({ role: 'api' });
const browser = await launchBrowser({ viewport: { width: 1280, height: 900 } });
try {
  const c = await s.company({ name: 'Acme Shoes' });
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: '+4915112345678', first_name: 'Ada', variables: { city: 'Köln', order_id: 'A-1042' } }] });
  const auto = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'Order shipped', type: 'api', active: true, template: {
    header: { type: 'text', text: 'Hi {{ first_name }}!' },
    body: 'Your order {{ order_id }} is on its way to {{ city | default: "you" }}.\n\nIt should arrive within two days.',
    buttons: [{ type: 'url', text: 'Track it', url: 'https://shop.example/track' }], whatsapp: { name: 'order_shipped', language: 'en_US' },
  } });
  const page = await browser.context.newPage();
  const email = await newUser(s, c.companyId, undefined, 'marketer');
  await page.goto(`${s.url}/console/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/overview$/);

  for (const [width, file] of [[1280, 'editor-preview-full.png'], [360, 'editor-preview-full-phone.png']] as const) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${s.url}/console/automations/${auto.automation_id}`);
    await page.locator('[data-preview-note]', { hasText: 'Updated as you type' }).waitFor();
    await page.getByLabel(/^Contact phone \(empty/).fill('+4915112345678');
    await page.getByLabel(/^Contact phone \(empty/).press('Tab');
    await page.locator('[data-bubble-to]', { hasText: 'a contact of your company' }).waitFor();
    await page.locator('#body').click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(' Questions? Just reply.');
    await page.screenshot({ path: path.join('/tmp', file), fullPage: true });
    if (width === 360) await page.locator('[data-live-preview]').screenshot({ path: '/tmp/editor-preview-aside-phone.png' });
    if (width === 1280) {
      await page.setViewportSize({ width, height: 800 });
      const top = await page.evaluate(() => document.querySelector('.editor-layout')!.getBoundingClientRect().top + window.scrollY - 12);
      await page.evaluate((y) => window.scrollTo(0, y), top);
      const box = (await page.locator('.editor-layout').boundingBox())!;
      await page.screenshot({ path: path.join(dir, 'editor-preview.png'), clip: { x: box.x - 8, y: 0, width: box.width + 16, height: 780 } });
    }
  }
  console.log(`screenshot in ${dir}/editor-preview.png; full pages in /tmp/editor-preview-full*.png`);
} finally {
  await browser.close();
  await s.close();
}
