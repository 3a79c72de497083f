/**
 * The console's Contacts flow in Chromium at one width, with axe-core on every page: search by name,
 * edit, import with progress, export, erase. Run at 360 px by contacts.browser.test.ts and at 1280 px by
 * contacts-desktop.browser.test.ts (one width per file keeps each file under 15 s); the same over HTTP,
 * in detail: contacts.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { BrowserContext } from 'playwright-core';
import type { TestServer } from '../helpers/server.ts';
import { ConsoleClient, freshEmail, newCompany, PASSWORD, withScreenshotOnFailure, checkPage } from './helpers.ts';

const run = Math.floor(Math.random() * 1000);
let n = 0;
const phone = () => `+49152${String(run).padStart(3, '0')}${String(10_000 + ++n).padStart(5, '0')}`;

/** Runs the flow on server `s` in `browser` at `width` px (900 px high); throws on the first failed step. */
export async function contactsFlow(s: TestServer, browser: { context: BrowserContext }, width: number): Promise<void> {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width, height: 900 });
  await withScreenshotOnFailure(page, `contacts-${width}`, async () => {
    const companyId = await newCompany(s);
    const ada = phone();
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: ada, first_name: 'Ada', last_name: 'Lovelace', variables: { tier: 'gold' } }, { phone: phone(), first_name: 'Grace' }] });
    const email = freshEmail('browser');
    const inv = await s.admin('POST', `/admin/companies/${companyId}/users/invitations`, { email, role: 'marketer' }, 201);
    const p = new URL(inv.invite_url).pathname;
    assert.equal((await new ConsoleClient(s.url).submit(p, p, { password: PASSWORD, password_confirm: PASSWORD })).status, 303);
    await browser.context.clearCookies();
    await page.goto(`${s.url}/console/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/(?!login)/);

    await page.goto(`${s.url}/console/contacts`);
    await checkPage(page, 'contacts');
    await page.getByLabel('Find a contact by phone number or name').fill('ada lov');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=ada/);
    await checkPage(page, 'search results');
    await page.getByRole('link', { name: ada }).click();
    await page.waitForURL(new RegExp(`/console/contacts/${encodeURIComponent(ada)}$`));
    await checkPage(page, 'contact');
    await page.getByLabel('Name 2').fill('bad name');
    await page.getByLabel('Value 2').fill('x');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('#variables-error').waitFor();
    await checkPage(page, 'contact edit with an error');
    await page.getByLabel('Name 2').fill('city');
    await page.getByLabel('Value 2').fill('London');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(/done=saved$/);
    assert.match(await page.locator('[data-variables]').textContent() ?? '', /city = London/);
    await page.getByRole('button', { name: 'Opt out of campaigns' }).click();
    await page.waitForURL(/done=opted_out$/);
    assert.equal(await page.locator('[data-opt-out-source]').textContent(), 'console');
    await checkPage(page, 'contact after opt-out');

    await page.goto(`${s.url}/console/contacts`);
    await page.getByRole('button', { name: 'Import CSV' }).click();
    await page.waitForURL(/\/contacts\/import$/);
    await checkPage(page, 'import form');
    const csv = ['phone;first_name', ...Array.from({ length: 300 }, (_, i) => `${phone()};Imported${i}`), 'garbage;Nobody'].join('\n');
    await page.getByLabel('CSV file').setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await page.waitForURL(/\/contacts\/imports\/\d+$/);
    await page.locator('[data-import-status="completed"]').waitFor({ timeout: 30_000 }); // the Refresh header reloads the page
    assert.equal(await page.locator('[data-count="created"]').textContent(), '300');
    assert.equal(await page.locator('[data-count="failed"]').textContent(), '1');
    await checkPage(page, 'import progress (completed)');

    await page.goto(`${s.url}/console/contacts`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export all as CSV' }).click()]);
    const exported = fs.readFileSync((await download.path())!, 'utf8');
    assert.equal(exported.trim().split('\n').length, 1 + 302);
    assert.match(exported, /Imported299/);

    await page.goto(`${s.url}/console/contacts/${encodeURIComponent(ada)}`);
    await page.getByRole('link', { name: 'Erase this contact…' }).click();
    await page.waitForURL(/\/erase$/);
    await checkPage(page, 'erase confirmation');
    await page.getByLabel(/I understand/).check();
    await page.getByRole('button', { name: 'Erase contact' }).click();
    await page.waitForURL(/\/console\/contacts\?done=erased_suppressed$/); // opted out above: the number stays opted out
    await checkPage(page, 'contacts after erasure');
    assert.equal((await page.goto(`${s.url}/console/contacts/${encodeURIComponent(ada)}`))?.status(), 404);
  });
  await page.close();
}
