/**
 * Console Contacts in Chromium at the desktop width (1280 px); a phone's: contacts.browser.test.ts, with axe-core on every page (contacts-flow.ts: search by
 * name, edit, import with progress, export, erase).
 */
import { after, before, describe, test } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { browserSkipReason, launchBrowser } from './helpers.ts';
import { contactsFlow } from './contacts-flow.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
});
after(async () => { await s.close(); });

const skip = browserSkipReason();

describe('in a browser', () => {
  let browser: { context: BrowserContext; close(): Promise<void> };
  before(async () => { if (!skip) browser = await launchBrowser(); });
  after(async () => { if (!skip) await browser.close(); });

  test(`at 1280 px: search by name, edit, import with progress, export, erase`, { skip }, () => contactsFlow(s, browser, 1280));
});
