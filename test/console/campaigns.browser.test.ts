/**
 * Automations, campaigns and campaign sends in a real browser: Playwright drives
 * the machine's Chromium through create → live preview → test send, and campaign send → review → confirm →
 * cancel, at phone (360 px) and desktop widths; on every page no sideways scrolling and no axe-core
 * violations (WCAG 2.1 A/AA and best practices). Skipped, with the reason, without a Chromium (helpers.ts CHROMIUM).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { eventually, FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { browserSkipReason, launchBrowser, newCompany, newUser, PASSWORD, withScreenshotOnFailure, checkPage } from './helpers.ts';

const skip = browserSkipReason();
if (skip) console.log(`# SKIP console browser tests: ${skip}`);

const run = Math.floor(Math.random() * 1000);
let n = 0;
const phone = () => `+49151${String(run).padStart(3, '0')}${String(7000 + ++n).padStart(5, '0')}`;

describe('automations and campaigns in a browser', () => {
  let s: TestServer;
  let browser: { context: BrowserContext; close(): Promise<void> };
  const clock = new FakeClock(Date.parse('2026-06-01T10:00:00Z'));
  before(async () => {
    if (skip) return;
    s = await startTestServer({ clock });
    await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
    browser = await launchBrowser();
  });
  after(async () => {
    if (skip) return;
    await browser.close();
    await s.close();
  });


  for (const width of [360, 1280]) {
    test(`at ${width} px: automation create, preview, test send; campaign send, review, confirm, cancel`, { skip }, async () => {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width, height: 900 });
      await withScreenshotOnFailure(page, `campaigns-${width}`, async () => {
        const companyId = await newCompany(s, { delivery_hours: { start: '08:00', end: '22:00', timezone: 'Europe/Berlin' } });
        const known = phone();
        await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: known, first_name: 'Ada', variables: { city: 'Köln' } }] });
        const email = await newUser(s, companyId);
        await browser.context.clearCookies();
        await page.goto(`${s.url}/console/login`);
        await page.getByLabel('Email').fill(email);
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(/\/console\/overview$/);

        await page.goto(`${s.url}/console/automations`);
        await checkPage(page, 'automations (empty)');
        await page.getByRole('button', { name: 'New automation' }).click();
        await page.waitForURL(/\/console\/automations\/new$/);
        await checkPage(page, 'new automation');
        await page.getByLabel('Name', { exact: true }).fill('Welcome');
        await page.getByLabel(/^Body \(Liquid/).fill('Hi {{ first_name | nope }}');
        await page.getByRole('button', { name: 'Create automation' }).click();
        await page.locator('#body-error').waitFor();
        await checkPage(page, 'new automation with an error');
        await page.getByLabel(/^Body \(Liquid/).fill('Hi {{ first_name }} from {{ city }}');
        await page.getByRole('button', { name: 'Create automation' }).click();
        await page.waitForURL(/\/console\/automations\/\d+\?done=created$/);
        await checkPage(page, 'automation page');
        await page.getByLabel(/^Contact phone \(empty/).fill(known);
        await page.getByLabel(/^Contact phone \(empty/).press('Tab');
        await page.locator('[data-bubble-to]', { hasText: 'a contact of your company' }).waitFor();
        await page.getByLabel(/^Body \(Liquid/).fill('Moin {{ first_name }}');
        await page.waitForFunction(() => document.querySelector('[data-bubble-body]')?.textContent === 'Moin Ada', undefined, { timeout: 5_000 }).catch(() => {});
        assert.equal(await page.locator('[data-bubble-body]').textContent(), 'Moin Ada', 'the live preview shows the unsaved change');
        await checkPage(page, 'automation: live preview of unsaved changes');
        await page.goto(page.url());
        await page.getByRole('button', { name: 'Activate' }).click();
        await page.waitForURL(/done=activated$/);
        await page.getByLabel('Contact phone', { exact: true }).fill(known);
        await page.getByRole('button', { name: 'Preview', exact: true }).click();
        assert.equal(await page.locator('[data-preview-body]').textContent(), 'Hi Ada from Köln');
        await checkPage(page, 'automation preview');
        await page.getByLabel('Phone number', { exact: true }).fill(known);
        await page.getByRole('button', { name: 'Send test message' }).click();
        await page.waitForURL(/\/console\/sends\/[0-9a-f-]{36}$/);
        const testBatch = page.url().split('/').pop()!;
        const done = await eventually(async () => {
          const b = await s.admin('GET', `/admin/batches/${testBatch}`);
          return b.status === 'completed' ? b : undefined;
        });
        assert.equal(done.counts.sent, 1);
        const [m] = (await s.admin('GET', `/admin/batches/${testBatch}/messages`)).messages;
        assert.equal(m.rendered.body, 'Hi Ada from Köln');

        const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Summer', template: { body: 'Summer {{ first_name }}' } }, 201);
        await page.goto(`${s.url}/console/campaigns`);
        await checkPage(page, 'campaigns');
        await page.getByRole('link', { name: 'Send Summer' }).click();
        await page.waitForURL(/\/send$/);
        await checkPage(page, 'campaign send form');
        await page.getByLabel('Phone numbers').check();
        await page.getByLabel(/^Numbers/).fill(`${phone()}\n${phone()}`);
        await page.getByLabel('At a date and time').check();
        await page.getByLabel(/^Date and time/).fill('2026-06-01T15:00');
        await page.getByRole('button', { name: 'Review' }).click();
        await page.locator('[data-plan]').waitFor();
        assert.equal(await page.locator('[data-count="send"]').textContent(), '2');
        await checkPage(page, 'campaign send review');
        await page.getByRole('button', { name: 'Confirm send' }).click();
        await page.waitForURL(/\/console\/sends\/[0-9a-f-]{36}$/);
        const batchId = page.url().split('/').pop()!;
        await eventually(async () => (await s.admin('GET', `/admin/batches/${batchId}`)).status === 'processing');
        await page.reload();
        await page.getByRole('link', { name: 'Cancel what has not been sent yet' }).click();
        await page.waitForURL(/\/cancel$/);
        await checkPage(page, 'cancel confirmation');
        await page.getByRole('button', { name: 'Cancel the send' }).click();
        await page.waitForURL(new RegExp(`/console/sends/${batchId}$`));
        await checkPage(page, 'cancelled send');
        const b = await s.admin('GET', `/admin/batches/${batchId}`);
        assert.deepEqual([b.status, b.counts.skipped], ['completed', 2]);
        assert.ok(camp.campaign_id);
      });
      await page.close();
    });
  }
});
