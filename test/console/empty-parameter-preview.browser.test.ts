/**
 * The editor's live preview names the WhatsApp parameters that would be empty (docs/whatsapp.md
 * "Empty parameters"), in a real browser: with sample data without a first name the note under the
 * parameters names `first_name` and the `default` filter, as the server's bubble does (same text);
 * typing a sample first name, or the filter, removes it without a request to the server. axe-core
 * finds no violations with the note shown. Skipped, with the reason, without a Chromium.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startFakeGraph, type FakeGraph } from '../helpers/fake-graph.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { whatsappCompany } from '../helpers/whatsapp.ts';
import { browserSkipReason, checkPage, launchBrowser, newUser, PASSWORD, withScreenshotOnFailure } from './helpers.ts';

const skip = browserSkipReason();
if (skip) console.log(`# SKIP empty-parameter preview browser tests: ${skip}`);

describe('the live preview names empty WhatsApp parameters', () => {
  let s: TestServer;
  let graph: FakeGraph;
  let browser: { context: BrowserContext; close(): Promise<void> };
  let companyId: number;
  let email: string;

  before(async () => {
    if (skip) return;
    s = await startTestServer({ role: 'api' });
    await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
    graph = await startFakeGraph();
    companyId = (await whatsappCompany(s, graph)).companyId;
    email = await newUser(s, companyId, undefined, 'marketer');
    browser = await launchBrowser();
  });
  after(async () => {
    if (skip) return;
    await browser.close();
    await s.close();
    await graph.close();
  });

  const notes = (page: Page) => page.locator('[data-empty-parameter]').allTextContents();

  test('the note follows the sample data and the template as they are typed, equal to the server\'s', { skip }, async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await withScreenshotOnFailure(page, 'empty-parameter-preview', async () => {
      await page.goto(`${s.url}/console/login`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/console\/overview$/);
      const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, {
        name: 'Greeting', template: { body: 'Hi {{ first_name }}, your order is late', whatsapp: { name: 'order_update', language: 'en' } },
      }, 201);
      const served = await (await page.request.get(`${s.url}/console/campaigns/${camp.campaign_id}`)).text();
      const serverNote = /<li data-empty-parameter>([\s\S]*?)<\/li>/.exec(served)![1].replace(/<[^>]+>/g, '').replace(/&quot;/g, '"');
      await page.goto(`${s.url}/console/campaigns/${camp.campaign_id}`);
      await page.locator('[data-preview-note]', { hasText: 'Updated as you type' }).waitFor();
      const expected = 'first_name is empty: the WhatsApp body parameter {{1}} ({{ first_name }}) would be empty. Give it a default: {{ first_name | default: "there" }}';
      assert.deepEqual(await notes(page), [expected], 'the browser\'s render names the variable');
      assert.equal(serverNote, expected, 'as the server\'s bubble does');
      await checkPage(page, 'campaign editor with an empty WhatsApp parameter');

      const requests: string[] = [];
      page.on('request', (r) => { if (!r.url().endsWith('/favicon.ico')) requests.push(r.url()); });
      await page.locator('#editor_preview_first_name').fill('Kim');
      await page.waitForFunction(() => document.querySelectorAll('[data-empty-parameter]').length === 0, undefined, { timeout: 5_000 });
      assert.deepEqual(await page.locator('[data-bubble-whatsapp] dd').allTextContents(), ['Kim']);
      await page.locator('#editor_preview_first_name').clear();
      await page.locator('[data-empty-parameter]').waitFor();
      await page.locator('#body').fill('Hi {{ first_name | default: "there" }}, your order is late');
      await page.waitForFunction(() => document.querySelectorAll('[data-empty-parameter]').length === 0, undefined, { timeout: 5_000 });
      assert.deepEqual(await page.locator('[data-bubble-whatsapp] dd').allTextContents(), ['there']);
      assert.deepEqual(requests, [], 'typing sent nothing to the server');
      assert.deepEqual(errors, [], 'the live preview ran without an error');
    });
    await page.close();
  });
});
