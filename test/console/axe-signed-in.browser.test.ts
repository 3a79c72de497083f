/**
 * axe-core on the console pages, second half: 0 serious or critical violations on the rest of the
 * signed-in pages (after those axe.browser.test.ts checks) of an owner whose company has data on every
 * page, at desktop (1280×800) and phone (390×844) widths, in the machine's Chromium (Playwright). The
 * data, the pages, the split and the check: axe-pages.ts; the route coverage, the pages without a
 * session and the first signed-in pages: axe.browser.test.ts (two files so that neither runs longer
 * than 15 s). Minor and moderate findings are printed, not failed. Skipped without Chromium.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { axeShare, checkPagesWithAxe, setUpAxePages, type AxePages } from './axe-pages.ts';
import { axeOnEveryPage, browserSkipReason, launchBrowser } from './helpers.ts';

const skip = browserSkipReason();
if (skip) console.log(`# SKIP console axe test (signed-in, second half): ${skip}`);

describe('axe-core on every console page (second signed-in half)', () => {
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

  test('no serious or critical violations on the second signed-in half, at 1280×800 and at 390×844', { skip }, async () => {
    const share = axeShare(pages, 2);
    assert.ok(share.signedIn.length > 0, 'pages are checked here');
    await checkPagesWithAxe(browser.context, pages, share);
  });
});
