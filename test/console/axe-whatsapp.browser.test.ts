/**
 * axe-core on the console pages that differ for a company whose channel is WhatsApp (fake Graph API)
 * with a synced catalogue of approved, pending, rejected and paused templates: the Templates page (also
 * with the submit form's errors shown) and the editor's template picker, at desktop (1280×800) and
 * phone (390×844) widths, with no violations of any impact (every other page: axe.browser.test.ts and
 * axe-signed-in.browser.test.ts). Skipped without Chromium.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { graphTemplate, startFakeGraph, type FakeGraph } from '../helpers/fake-graph.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { whatsappCompany } from '../helpers/whatsapp.ts';
import { AXE_TAGS, axeOnEveryPage, axeViolations, browserSkipReason, launchBrowser, newUser, PASSWORD, withScreenshotOnFailure } from './helpers.ts';

const skip = browserSkipReason();
if (skip) console.log(`# SKIP console axe test (WhatsApp): ${skip}`);

const TAGS = [...AXE_TAGS, 'wcag22aa'];

interface Finding { page: string; id: string; impact: string; targets: string }

/** Runs axe on the page (test/console/helpers.ts); returns its violations, the first five elements of each. */
async function axe(page: Page, name: string): Promise<Finding[]> {
  return (await axeViolations(page, TAGS)).map((v) => ({ page: name, id: v.id, impact: v.impact, targets: v.targets.slice(0, 5).join(' ') }));
}

describe('axe-core on the console pages of a WhatsApp company', () => {
  let s: TestServer;
  let browser: { context: BrowserContext; close(): Promise<void> };
  let graph: FakeGraph;
  let whatsappOwner: string;

  before(async () => {
    if (skip) return;
    s = await startTestServer();
    await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
    // The WhatsApp company (see the module comment).
    graph = await startFakeGraph();
    const wa = await whatsappCompany(s, graph, {
      company: { name: 'Axe WhatsApp' },
      templates: [
        graphTemplate('spring_sale', 'de', { status: 'REJECTED', category: 'MARKETING', rejected_reason: 'INVALID_FORMAT', body: 1 }),
        graphTemplate('winter_sale', 'de', { status: 'PAUSED', category: 'MARKETING', quality: 'RED', header: 'text', body: 3 }),
        graphTemplate('new_offer', 'en_US', { status: 'PENDING', category: 'MARKETING', quality: 'GREEN' }),
      ],
    });
    whatsappOwner = await newUser(s, wa.companyId);
    browser = await launchBrowser();
    await axeOnEveryPage(browser.context);
  });
  after(async () => {
    if (skip) return;
    await browser?.close();
    await s.close();
    await graph?.close();
  });

  test('a WhatsApp company: the Templates page (with form errors) and the editor\'s template picker have no violations', { skip }, async () => {
    const page = await browser.context.newPage();
    const findings: Finding[] = [];
    await withScreenshotOnFailure(page, 'axe-whatsapp', async () => {
      await browser.context.clearCookies();
      await page.goto(`${s.url}/console/login`);
      await page.getByLabel('Email').fill(whatsappOwner);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/console\/(?!login)/);
      for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
        await page.setViewportSize(viewport);
        const res = await page.goto(`${s.url}/console/whatsapp/templates`);
        assert.equal(res?.status(), 200);
        assert.ok(await page.locator('tr[data-template]').count() >= 9, 'the catalogue is listed');
        await page.evaluate(() => { for (const d of document.querySelectorAll('details')) d.open = true; });
        findings.push(...await axe(page, `${viewport.width}px templates`));
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${viewport.width}px: the Templates page is ${overflow}px wider than the screen`);
        await page.getByLabel('Name', { exact: true }).fill('Not Valid');
        await page.getByLabel('Body', { exact: true }).fill('Hi {{2}}');
        await page.getByRole('button', { name: 'Submit to Meta for review' }).click();
        await page.waitForSelector('#t_name-error');
        findings.push(...await axe(page, `${viewport.width}px templates with errors`));
        await page.goto(`${s.url}/console/campaigns/new`);
        await page.getByLabel('Approved template (name and language)').selectOption('order_shipped|en_US');
        assert.match(await page.locator('#wa_template-help').innerText(), /image header; 2 body parameters/);
        findings.push(...await axe(page, `${viewport.width}px campaign editor`));
      }
    });
    await page.close();
    // These pages are held to no violations at all, minor ones included.
    assert.deepEqual(findings.map((f) => `${f.page}: ${f.id} (${f.impact}) ${f.targets}`), [], 'violations');
  });
});
