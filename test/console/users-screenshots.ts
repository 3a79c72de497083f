/**
 * Screenshots of the users and roles pages into docs/console/ (or DIR), wide
 * (1280 px) and phone-sized (360 px):
 *
 *   node test/console/users-screenshots.ts [DIR]
 *
 * Starts the service on a fresh embedded database with a fake clock, sets up a company with an owner,
 * a developer, a marketer and a pending invitation, and photographs in Chromium: the users list with a
 * new invitation link, a user's page with a reset link, the removal confirmation, the password reset
 * page, and the 403 page a marketer gets for Credentials. Not a test.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { FakeClock, startTestServer } from '../helpers/server.ts';
import { browserSkipReason, launchBrowser, newUser, PASSWORD, userIdOf, takeScreenshots } from './helpers.ts';

const dir = path.resolve(process.argv[2] ?? 'docs/console');
const skip = browserSkipReason();
if (skip) throw new Error(skip);
fs.mkdirSync(dir, { recursive: true });

const s = await startTestServer({ clock: new FakeClock(Date.parse('2026-06-01T10:00:00Z')), role: 'api' });
const browser = await launchBrowser({ viewport: { width: 1280, height: 900 } });

async function signIn(page: Page, email: string): Promise<void> {
  await browser.context.clearCookies();
  await page.goto(`${s.url}/console/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/overview$/);
}

try {
  const c = await s.company({ name: 'Acme Shoes' });
  const owner = await newUser(s, c.companyId, 'ada@acme-shoes.example', 'owner');
  const developer = await newUser(s, c.companyId, 'grace@acme-shoes.example', 'developer');
  const marketer = await newUser(s, c.companyId, 'joan@acme-shoes.example', 'marketer');
  await s.admin('POST', `/admin/companies/${c.companyId}/users/invitations`, { email: 'alan@acme-shoes.example', role: 'developer' }, 201);
  const developerId = await userIdOf(s, developer);
  const page = await browser.context.newPage();
  await signIn(page, owner);

  const shots: [string, () => Promise<unknown>][] = [
    ['users', async () => {
      await page.goto(`${s.url}/console/settings/users`);
      await page.getByLabel('Email').fill('mary@acme-shoes.example');
      await page.getByRole('radio', { name: /^marketer:/ }).check();
      await page.getByRole('button', { name: 'Create invitation link' }).click();
      await page.locator('#new-link-value').waitFor();
    }],
    ['users-user', async () => {
      await page.goto(`${s.url}/console/settings/users/${developerId}`);
      await page.getByRole('button', { name: 'Create reset link' }).click();
      await page.locator('#new-link-value').waitFor();
    }],
    ['users-remove', () => page.goto(`${s.url}/console/settings/users/${developerId}/remove`)],
  ];
  await takeScreenshots(page, dir, shots);

  const reset = await s.admin('POST', `/admin/users/${developerId}/password-resets`, undefined, 201);
  await signIn(page, marketer);
  const after: [string, () => Promise<unknown>][] = [
    ['users-forbidden', () => page.goto(`${s.url}/console/settings/integrations/credentials`)],
    ['users-password-reset', () => page.goto(reset.reset_url)],
  ];
  await takeScreenshots(page, dir, after);
  console.log(`screenshots in ${dir}`);
} finally {
  await browser.close();
  await s.close();
}
