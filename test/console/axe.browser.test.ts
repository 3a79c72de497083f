/**
 * axe-core on the console pages, first half: every GET route of the console has a page to check (the
 * pages are enumerated from the app's routes, bench/console-pages.ts: a route whose parameter has no
 * id fails here; add the data in axe-pages.ts), and 0 serious or critical violations on the pages
 * without a session (sign-in, an invitation, a password reset link) and the first signed-in pages of
 * an owner whose company has data on every page, at desktop (1280×800) and phone (390×844) widths, in
 * the machine's Chromium (Playwright). The data, the pages and the check: axe-pages.ts; the rest of
 * the signed-in pages: axe-signed-in.browser.test.ts (two files so that neither runs longer than
 * 15 s). Minor and moderate findings are printed, not failed. Skipped without Chromium.
 *
 * The pages that differ for a WhatsApp company: axe-whatsapp.browser.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { axeShare, checkPagesWithAxe, setUpAxePages, type AxePages } from './axe-pages.ts';
import { axeOnEveryPage, browserSkipReason, launchBrowser } from './helpers.ts';

const skip = browserSkipReason();
if (skip) console.log(`# SKIP console axe test: ${skip}`);

describe('axe-core on every console page (pages without a session, first signed-in half)', () => {
  let pages: AxePages;
  let browser: { context: BrowserContext; close(): Promise<void> };

  before(async () => {
    if (skip) return;
    pages = await setUpAxePages();
    browser = await launchBrowser();
    await axeOnEveryPage(browser.context);
  });
  after(async () => {
    if (skip) return;
    await browser?.close();
    await pages?.s.close();
  });

  test('every GET route of the console has data to show', { skip }, () => {
    assert.deepEqual(pages.missing, [], 'routes with a parameter this test has no id for: add the data in axe-pages.ts setUpAxePages');
    assert.ok(pages.signedInPages.includes('/console/overview'));
    assert.ok(pages.anonymousPages.includes('/console/login'));
    assert.ok(pages.signedInPages.length >= 20, `only ${pages.signedInPages.length} pages found`);
  });

  test('no serious or critical violations on the pages without a session and the first signed-in half, at 1280×800 and at 390×844', { skip }, async () => {
    const share = axeShare(pages, 1);
    assert.ok(share.anonymous.length > 0 && share.signedIn.length > 0, 'both kinds of page are checked here');
    await checkPagesWithAxe(browser.context, pages, share);
  });
});
