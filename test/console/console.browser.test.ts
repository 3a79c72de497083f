/**
 * The console in a real browser: Playwright (`playwright-core`) drives the
 * machine's Chromium as a new user would. Skipped, with the reason, when no Chromium is installed (helpers.ts CHROMIUM).
 * A failing step saves a full-page screenshot under test-results/.
 *
 * The authenticator writes `last_used_at` every 5 s, so the "last used" step reloads the page until it
 * changes (up to 20 s).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { browserSkipReason, freshEmail, invite, launchBrowser, newCompany, newUser, PASSWORD, withScreenshotOnFailure, checkPage } from './helpers.ts';

const skip = browserSkipReason();
if (skip) console.log(`# SKIP console browser tests: ${skip}`);


describe('console in a browser', () => {
  let s: TestServer;
  let browser: { context: BrowserContext; close(): Promise<void> };
  before(async () => {
    if (skip) return;
    s = await startTestServer();
    await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  /** A new page with no cookies from earlier tests. */
  async function freshPage(): Promise<Page> {
    await browser.context.clearCookies();
    for (const p of browser.context.pages()) await p.close();
    return browser.context.newPage();
  }

  async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
    await page.goto(`${s.url}/console/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/overview$/);
  }

  /** The "Last used" cell of a key's row. */
  const lastUsed = (page: Page, keyId: string) => page.locator(`tr[data-key-id="${keyId}"] td[data-label="Last used"]`);

  test('a new user accepts the invitation, signs in, creates a key, uses it, sees it used, revokes it, and the API refuses it', { skip }, async () => {
    const page = await freshPage();
    await withScreenshotOnFailure(page, 'key-lifecycle', async () => {
      const companyId = await newCompany(s, { name: 'Acme Shoes' });
      const email = freshEmail('ada');
      const inv = await invite(s, companyId, email);

      // The invitation link: choose a password.
      await page.goto(inv.invite_url);
      await assertHeading(page, 'Join Acme Shoes');
      await page.getByLabel('New password').fill(PASSWORD);
      await page.getByLabel('Repeat the password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL(/\/console\/login\?done=joined$/);
      assert.match(await page.getByRole('status').innerText(), /Your account is ready/);

      // Sign in: lands on the Overview; Credentials is in Settings › Integrations & developers.
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/console\/overview$/);
      await assertHeading(page, 'Overview');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Credentials' }).click();
      await page.waitForURL(/\/console\/settings\/integrations\/credentials$/);
      await assertHeading(page, 'Credentials');
      const crumbs = await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('listitem').allInnerTexts();
      assert.deepEqual(crumbs.map((t) => t.trim()), ['Settings', 'Integrations & developers', 'Credentials']);
      const status = await page.locator('dl.facts').innerText();
      assert.match(status, /Subscription\s+active/);
      assert.match(status, /Push-messaging connector\s+not connected/i);
      assert.match(status, /Channel in use\s+Outbox/);

      // Create a key: shown once, with a working copy button.
      await page.getByLabel(/^Label/).fill('shop integration');
      await page.getByRole('button', { name: 'Create API key' }).click();
      await assertHeading(page, 'Your new API key “shop integration”', 2);
      const apiKey = await page.getByLabel('API key', { exact: true }).inputValue();
      assert.match(apiKey, /^cms_live_[0-9A-Za-z]{38}$/);
      assert.match(await page.locator('.new-key').innerText(), /shown only this once/);
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByText('Copied to the clipboard.').waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), apiKey);
      // POST-redirect-GET: the page is a GET; reloading it creates no second key and does
      // not show the key again.
      assert.match(page.url(), /\/credentials$/);
      await page.reload();
      await assertHeading(page, 'Credentials');
      assert.equal(await page.getByText(apiKey).count(), 0);
      assert.equal(await page.locator('tr', { hasText: 'shop integration' }).count(), 1);
      const row = page.locator('tr', { hasText: 'shop integration' });
      const keyId = await row.getAttribute('data-key-id');
      assert.ok(keyId);
      assert.match(await row.innerText(), new RegExp(apiKey.slice(0, 13)));
      assert.equal((await lastUsed(page, keyId).innerText()).trim(), 'Never');

      // The key works against the public API.
      const created = await s.api('/api/segments/create', { key: apiKey, body: { name: 'Newsletter' } });
      assert.equal(created.status, 200, created.text);
      assert.equal(created.json.name, 'Newsletter');

      // Reloading shows the key's last use (flushed by the authenticator every 5 s); the key is not shown again.
      await page.goto(`${s.url}/console/settings/integrations/credentials`);
      assert.equal(await page.getByText(apiKey).count(), 0);
      const used = await eventually(async () => {
        await page.reload();
        const text = (await lastUsed(page, keyId).innerText()).trim();
        return text !== 'Never' && text;
      }, 20_000, 500);
      assert.match(used, /^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}:\d{2} UTC$/);

      // Revoke, with confirmation.
      await row.getByRole('link', { name: /Revoke/ }).click();
      await assertHeading(page, 'Revoke API key?');
      assert.match(await page.locator('main').innerText(), /shop integration/);
      await page.getByRole('button', { name: 'Revoke key' }).click();
      await page.waitForURL(/\/credentials\?done=revoked$/);
      assert.match(await page.getByRole('status').first().innerText(), /revoked/);
      assert.match(await page.locator(`tr[data-key-id="${keyId}"]`).innerText(), /revoked/i);
      assert.equal(await page.locator(`tr[data-key-id="${keyId}"]`).getByRole('link', { name: /Revoke/ }).count(), 0);

      // The API refuses the revoked key.
      const refused = await s.api('/api/segments/create', { key: apiKey, body: { name: 'Too late' } });
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.json, { detail: 'Invalid API key' });

      // The segment made with the key is listed with its member count.
      await mainNav(page, 'Segments').click();
      await assertHeading(page, 'Segments');
      const segRow = page.locator('tr', { hasText: 'Newsletter' });
      assert.equal((await segRow.locator('td[data-label="Members"]').innerText()).trim(), '0');
      await segRow.getByRole('link', { name: 'Newsletter' }).click();
      await assertHeading(page, 'Newsletter');
    });
  });

  test('a user opens a batch and sees each message with its final status and reason, and finds messages by phone', { skip }, async () => {
    const page = await freshPage();
    await withScreenshotOnFailure(page, 'batch', async () => {
      const c = await s.company({ name: 'Batch Co' });
      const automation = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'Shipped', type: 'api', active: true, template: { body: 'Hi {{ first_name }}', buttons: [] } });
      const sent = await s.api('/api/automations/send', {
        key: c.key,
        body: { automation_id: automation.automation_id, contacts: [{ phone: '+4915112345678', first_name: 'Ada' }, { phone: 'not a number' }] },
      });
      assert.equal(sent.status, 200, sent.text);
      const batchId: string = sent.json.batch_id;
      await eventually(async () => (await s.admin('GET', `/admin/batches/${batchId}`)).status === 'completed', 30_000, 200);

      const email = await newUser(s, c.companyId);
      await signIn(page, email);
      await mainNav(page, 'Sends').click();
      await assertHeading(page, 'Sends');
      const row = page.locator(`tr[data-batch-id="${batchId}"]`);
      const rowText = await row.innerText();
      assert.match(rowText, /Shipped/, 'the send is named by its automation');
      assert.match(rowText, /completed/);
      assert.equal((await row.locator('td[data-label="Sent"]').innerText()).trim(), '1');
      assert.equal((await row.locator('td[data-label="Skipped"]').innerText()).trim(), '1');

      await row.getByRole('link', { name: 'Shipped' }).click();
      await page.waitForURL(new RegExp(`/console/sends/${batchId}$`));
      await assertHeading(page, /^Shipped — send of \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d$/);
      const messages = page.getByRole('region', { name: 'Messages' }).locator('tbody tr');
      assert.equal(await messages.count(), 2);
      assert.match(await messages.nth(0).innerText(), /\+4915112345678[\s\S]*sent/);
      assert.match(await messages.nth(1).innerText(), /not a number[\s\S]*skipped[\s\S]*Not a valid phone number/);

      // Search by phone, from the Sends page (national format: the company's default country is DE).
      await mainNav(page, 'Sends').click();
      await page.getByLabel('Find messages to a phone number').fill('0151 12345678');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/\/console\/sends\?phone=/);
      assert.match(await page.getByRole('status').innerText(), /1 message found/);
      assert.match(await page.getByRole('region', { name: 'Messages found' }).innerText(), /\+4915112345678[\s\S]*sent/);
    });
  });

  test('phone-sized screen: no page scrolls sideways, and axe finds no accessibility violations', { skip }, async () => {
    const page = await freshPage();
    await withScreenshotOnFailure(page, 'phone-a11y', async () => {
      const c = await s.company({ name: 'Small Screen Co' });
      await s.admin('PUT', `/admin/companies/${c.companyId}/connector`, { connected: true, provider: 'pushy' });
      await s.api('/api/segments/create', { key: c.key, body: { name: 'VIP customers' } });
      const automation = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'A', type: 'api', active: true, template: { body: 'Hi', buttons: [] } });
      const sent = await s.api('/api/automations/send', { key: c.key, body: { automation_id: automation.automation_id, contacts: [{ phone: '+4915112345670' }, { phone: 'x' }] } });
      const batchId: string = sent.json.batch_id;
      await eventually(async () => (await s.admin('GET', `/admin/batches/${batchId}`)).status === 'completed', 30_000, 200);
      const email = await newUser(s, c.companyId);
      const seg = await s.service.deps.database.db.selectFrom('segments').select('segment_id').where('company_id', '=', c.companyId).executeTakeFirstOrThrow();

      await page.setViewportSize({ width: 360, height: 740 });
      await page.goto(`${s.url}/console/login`);
      await checkPage(page, 'sign-in');
      await signIn(page, email);
      await checkPage(page, 'overview');
      await mainNav(page, 'Credentials').click();
      await page.getByRole('button', { name: 'Create API key' }).click();
      await assertHeading(page, 'Your new API key', 2);
      await checkPage(page, 'credentials with a new key');
      for (const p of ['/console/settings/integrations/credentials', `/console/settings/integrations/credentials/${c.keyId}/revoke`, '/console/segments',
        `/console/segments/${seg.segment_id}`, '/console/sends', '/console/sends?phone=%2B4915112345670', `/console/sends/${batchId}`, '/console/account/password', '/console/nope']) {
        await page.goto(s.url + p);
        await checkPage(page, p);
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      for (const p of ['/console/settings/integrations/credentials', `/console/sends/${batchId}`]) {
        await page.goto(s.url + p);
        await checkPage(page, `${p} (wide)`);
      }
      const inv = await invite(s, c.companyId, freshEmail());
      await browser.context.clearCookies();
      await page.goto(inv.invite_url);
      await checkPage(page, 'invitation');
    });
  });

  test('keyboard only: skip link, create a key, sign out', { skip }, async () => {
    const page = await freshPage();
    await withScreenshotOnFailure(page, 'keyboard', async () => {
      const companyId = await newCompany(s);
      const email = await newUser(s, companyId);
      await page.goto(`${s.url}/console/login`);
      // Focus starts in the email field (autofocus); type, Tab to the password, Enter submits. The browser
      // may apply autofocus just after the load event: keys typed before it would be lost, so wait for it.
      await page.waitForFunction(() => document.activeElement?.id === 'email');
      await page.keyboard.type(email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      // Sign-in lands on the Overview; Tab to Credentials in the main navigation and follow it.
      await page.waitForURL(/\/console\/overview$/);
      for (let i = 0; i < 20 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'Credentials'; i++) await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/credentials$/);
      // The first Tab reaches the skip link; following it moves focus to the main content.
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
      await page.keyboard.press('Enter');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
      // Tab on to the label field, type, Enter creates the key.
      for (let i = 0; i < 20 && (await page.evaluate(() => document.activeElement?.id)) !== 'label'; i++) await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'label');
      await page.keyboard.type('typed with keys');
      await page.keyboard.press('Enter');
      await assertHeading(page, 'Your new API key “typed with keys”', 2);
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'new-key-title', 'the new key is announced');
      // Sign out is a button in the header, reachable with Shift+Tab from the main content.
      await page.getByRole('button', { name: 'Sign out' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/console\/login\?done=signed_out$/);
      await page.goto(`${s.url}/console/segments`);
      await page.waitForURL(/\/console\/login\?next=/);
    });
  });

  /** A link of the main navigation. */
  const mainNav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });

  /** Asserts the page's main heading. */
  async function assertHeading(page: Page, text: string | RegExp, level = 1): Promise<void> {
    await page.getByRole('heading', { level, name: text }).first().waitFor();
  }

});
