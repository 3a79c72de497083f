/**
 * Users and roles in a real browser: Playwright drives the machine's Chromium at
 * phone (360 px) and desktop (1280 px) widths through: the owner invites a marketer (the link shown
 * once, copied with the Copy button), the marketer accepts and signs in, has no Credentials in the
 * navigation and gets the 403 page when opening it; the owner creates a password reset link for the
 * marketer, who sets a new password with it and signs in again. On every page: no sideways scrolling
 * and no axe-core violations (WCAG 2.1 A/AA and best practices). Skipped, with the reason, without
 * a Chromium (helpers.ts CHROMIUM).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { browserSkipReason, freshEmail, launchBrowser, newCompany, newUser, PASSWORD, withScreenshotOnFailure, checkPage } from './helpers.ts';

const skip = browserSkipReason();
if (skip) console.log(`# SKIP console browser tests: ${skip}`);

const NEW_PASSWORD = 'marketing is my passion';

describe('users and roles in a browser', () => {
  let s: TestServer;
  let browser: { context: BrowserContext; close(): Promise<void> };
  before(async () => {
    if (skip) return;
    s = await startTestServer({ role: 'api' });
    await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
    browser = await launchBrowser();
  });
  after(async () => {
    if (skip) return;
    await browser.close();
    await s.close();
  });


  async function signIn(page: Page, email: string, password: string): Promise<void> {
    await page.goto(`${s.url}/console/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/overview$/);
  }

  async function signOut(page: Page): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/console\/login\?done=signed_out$/);
  }

  for (const width of [360, 1280]) {
    test(`at ${width} px: invite a marketer, accept, no Credentials for them, owner resets their password`, { skip }, async () => {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width, height: 900 });
      await withScreenshotOnFailure(page, `users-${width}`, async () => {
        const companyId = await newCompany(s, { name: 'Acme Shoes' });
        const ownerEmail = await newUser(s, companyId, freshEmail('owner'), 'owner');
        const marketerEmail = freshEmail('marketer');
        await browser.context.clearCookies();

        // The owner invites a marketer.
        await signIn(page, ownerEmail, PASSWORD);
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
        await page.waitForURL(/\/console\/settings\/users$/);
        await checkPage(page, 'users');
        await page.getByRole('button', { name: 'Create invitation link' }).click();
        await page.locator('#email-error').waitFor();
        assert.equal(await page.getByLabel('Email').getAttribute('aria-invalid'), 'true');
        await checkPage(page, 'users with an error');
        await page.getByLabel('Email').fill(marketerEmail);
        await page.getByRole('radio', { name: /^marketer:/ }).check();
        await page.getByRole('button', { name: 'Create invitation link' }).click();
        await page.waitForURL(/\/console\/settings\/users$/);
        const link = await page.locator('#new-link-value').inputValue();
        assert.match(link, /\/console\/invite\/[A-Za-z0-9_-]{43}$/);
        await page.getByRole('button', { name: 'Copy' }).click();
        await page.getByText('Copied to the clipboard.').waitFor();
        await checkPage(page, 'users with a new link');
        await page.reload();
        assert.equal(await page.locator('#new-link-value').count(), 0, 'the link is shown once');
        await signOut(page);

        // The marketer accepts, signs in, and has no credentials.
        await page.goto(link);
        await page.getByText('with the role marketer').waitFor();
        await checkPage(page, 'invitation');
        await page.getByLabel('New password', { exact: true }).fill(PASSWORD);
        await page.getByLabel('Repeat the password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Create account' }).click();
        await page.waitForURL(/\/console\/login\?done=joined$/);
        await signIn(page, marketerEmail, PASSWORD);
        const nav = page.getByRole('navigation', { name: 'Main' });
        assert.equal(await nav.getByRole('link', { name: 'Credentials' }).count(), 0);
        assert.equal(await nav.getByRole('link', { name: 'Webhooks' }).count(), 0);
        assert.equal(await nav.getByRole('link', { name: 'Users' }).count(), 0);
        assert.equal(await nav.getByRole('link', { name: 'Campaigns' }).count(), 1);
        const refused = await page.goto(`${s.url}/console/settings/integrations/credentials`);
        assert.equal(refused?.status(), 403);
        await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
        await checkPage(page, '403 page');
        await signOut(page);

        // The owner makes a reset link; the marketer uses it.
        await signIn(page, ownerEmail, PASSWORD);
        await page.goto(`${s.url}/console/settings/users`);
        await page.getByRole('link', { name: marketerEmail }).click();
        await page.waitForURL(/\/console\/settings\/users\/\d+$/);
        await checkPage(page, 'user page');
        await page.getByRole('button', { name: 'Create reset link' }).click();
        await page.waitForURL(/\/console\/settings\/users\/\d+$/);
        const reset = await page.locator('#new-link-value').inputValue();
        assert.match(reset, /\/console\/password-reset\/[A-Za-z0-9_-]{43}$/);
        await checkPage(page, 'user page with a reset link');
        await signOut(page);

        await page.goto(reset);
        await checkPage(page, 'password reset');
        await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
        await page.getByLabel('Repeat the new password').fill(`${NEW_PASSWORD}?`);
        await page.getByRole('button', { name: 'Set password' }).click();
        await page.locator('#password-error').waitFor();
        await checkPage(page, 'password reset with an error');
        await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
        await page.getByLabel('Repeat the new password').fill(NEW_PASSWORD);
        await page.getByRole('button', { name: 'Set password' }).click();
        await page.waitForURL(/\/console\/login\?done=reset$/);
        await page.getByText('Your new password is set').waitFor();
        await signIn(page, marketerEmail, NEW_PASSWORD);
      });
      await page.close();
    });
  }
});
