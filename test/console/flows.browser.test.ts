/**
 * The console's main flows in Chromium (Playwright), at 360 and 1280 px: sign in, create a campaign in
 * the editor (the live preview follows the typing), send it to a segment (form, review with the message
 * and the counts, confirm, the send's page), and the lists (campaigns, sends, segments, contacts); on
 * every page no sideways scrolling and no axe-core violations (helpers.ts checkPage). Each step is
 * saved as `test-results/flows/<step>-<width>.png` for a person to look at (docs/console.md uses them).
 *
 * The send flow is also done with the keyboard alone (Tab, Enter, and an arrow key in the segment
 * list): each step's focus starts on its main control (the segment list, then Confirm send, then the
 * send's heading), checked with `document.activeElement`.
 *
 * Skipped, with the reason, without a Chromium (helpers.ts CHROMIUM).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { browserSkipReason, checkPage, launchBrowser, newCompany, newUser, PASSWORD, RESULTS_DIR, withScreenshotOnFailure } from './helpers.ts';

const skip = browserSkipReason();
if (skip) console.log(`# SKIP console flow tests: ${skip}`);

const SHOTS = path.join(RESULTS_DIR, 'flows');
const run = Math.floor(Math.random() * 1000);
let n = 0;
const phone = () => `+49151${String(run).padStart(3, '0')}${String(8000 + ++n).padStart(5, '0')}`;

/**
 * The focused element of a page just reached: its autofocus is applied at its next rendering update,
 * which on a busy machine can come after its load event, so this waits (at most 5 s) until something
 * other than the body has the focus, then reads it as {@link focused} does.
 */
async function focusedOnArrival(page: Page): Promise<{ tag: string; id: string; text: string; data: string[] }> {
  await page.waitForFunction(() => document.activeElement !== null && document.activeElement !== document.body, null, { timeout: 5000 }).catch(() => {});
  return focused(page);
}

/** What has the focus: `tag#id` or `tag[data-…]`, and its text. */
async function focused(page: Page): Promise<{ tag: string; id: string; text: string; data: string[] }> {
  return page.evaluate(() => {
    const e = document.activeElement as HTMLElement | null;
    return { tag: e?.tagName.toLowerCase() ?? '', id: e?.id ?? '', text: (e?.textContent ?? '').trim(), data: e ? Object.keys(e.dataset) : [] };
  });
}

describe('main flows in a browser', () => {
  let s: TestServer;
  let browser: { context: BrowserContext; close(): Promise<void> };
  const clock = new FakeClock(Date.now());
  before(async () => {
    if (skip) return;
    s = await startTestServer({ clock });
    await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
    browser = await launchBrowser();
    fs.mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    if (skip) return;
    await browser.close();
    await s.close();
  });

  /** A company in Berlin with a segment of `members` contacts (one opted out) and a signed-out user. */
  async function company(members = 3): Promise<{ companyId: number; email: string; segment: string }> {
    const companyId = await newCompany(s, { name: 'Acme Shoes', delivery_hours: { start: '08:00', end: '22:00', timezone: 'Europe/Berlin' } });
    const phones = Array.from({ length: members }, phone);
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: phones.map((p, i) => ({ phone: p, first_name: ['Ada', 'Grace', 'Linus'][i % 3], opted_out: i === members - 1 })) });
    const key = (await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'k' }, 201)).api_key as string;
    const seg = await s.api('/api/segments/create', { key, body: { name: 'Newsletter' } });
    await s.api(`/api/segments/${seg.json.segment_id}/contacts`, { key, body: { contacts: phones, mode: 'add' } });
    return { companyId, email: await newUser(s, companyId), segment: String(seg.json.segment_id) };
  }

  async function shot(page: Page, name: string, width: number): Promise<void> {
    await checkPage(page, `${name} at ${width} px`);
    await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
  }

  for (const width of [360, 1280]) {
    test(`at ${width} px: sign in, create a campaign, send it to a segment, the lists`, { skip }, async () => {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width, height: 900 });
      await withScreenshotOnFailure(page, `flows-${width}`, async () => {
        const { email } = await company();
        await browser.context.clearCookies();

        // Sign in: the email field has the focus.
        await page.goto(`${s.url}/console/login`);
        // Autofocus lands once the page has loaded: waited for, not assumed (a busy machine is slower).
        await page.waitForFunction(() => document.activeElement?.id === 'email', undefined, { timeout: 5_000 });
        assert.equal((await focused(page)).id, 'email');
        await shot(page, 'sign-in', width);
        await page.getByLabel('Email').fill(email);
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(/\/console\/overview$/);
        await shot(page, 'overview', width);

        // Create a campaign in the editor; the bubble follows the typing.
        await page.goto(`${s.url}/console/campaigns`);
        await page.getByRole('button', { name: 'New campaign' }).click();
        await page.getByLabel('Name', { exact: true }).fill('Spring sale');
        await page.getByLabel(/^Body \(Liquid/).fill('Hi {{ first_name | default: "there" }}, 20% off everything until Sunday.');
        await page.waitForFunction(() => document.querySelector('[data-bubble-body]')?.textContent?.includes('20% off'), undefined, { timeout: 5_000 });
        await shot(page, 'campaign-editor', width);
        await page.getByRole('button', { name: 'Create campaign' }).click();
        await page.waitForURL(/\/console\/campaigns\/\d+\?done=created$/);
        const campaignPath = new URL(page.url()).pathname;

        // Send it to the segment: form, review, confirm, the send's page.
        await page.goto(`${s.url}${campaignPath}/send`);
        await page.getByLabel('Segment', { exact: true }).selectOption({ label: 'Newsletter (3 members)' });
        await shot(page, 'campaign-send', width);
        await page.getByRole('button', { name: 'Review' }).click();
        await page.locator('[data-plan]').waitFor();
        assert.deepEqual(await page.locator('[data-count="send"], [data-count="skipped_opted_out"]').allTextContents(), ['2', '1']);
        assert.match(await page.locator('[data-sample]').innerText(), /Hi Ada, 20% off/);
        await shot(page, 'campaign-send-review', width);
        await page.getByRole('button', { name: 'Confirm send' }).click();
        await page.waitForURL(/\/console\/sends\/[0-9a-f-]{36}$/);
        const heading = await page.getByRole('heading', { level: 1 }).innerText();
        assert.match(heading, /^Spring sale — send of \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d$/, 'the send is named by its campaign and its time');
        assert.match(await page.locator('main').innerText(), /Europe\/Berlin/);
        await shot(page, 'send', width);

        // The lists.
        await page.goto(`${s.url}/console/campaigns`);
        const row = page.locator('tr', { hasText: 'Spring sale' });
        assert.match(await row.innerText(), /sending|sent/);
        await shot(page, 'campaigns', width);
        await page.goto(`${s.url}/console/sends`);
        assert.match(await page.locator('tbody tr').first().innerText(), /Spring sale/);
        await shot(page, 'sends', width);
        await page.goto(`${s.url}/console/segments`);
        await shot(page, 'segments', width);
        await page.goto(`${s.url}/console/contacts`);
        await shot(page, 'contacts', width);
      });
      await page.close();
    });
  }

  test('the send flow with the keyboard alone: focus starts on each step\'s main control', { skip }, async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await withScreenshotOnFailure(page, 'flows-keyboard', async () => {
      const { companyId, email } = await company();
      await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Winter', template: { body: 'Hi {{ first_name }}' } }, 201);
      await browser.context.clearCookies();
      await page.goto(`${s.url}/console/login`);
      // The field takes the focus when the page has loaded (autofocus); typing before that loses keys.
      await page.waitForFunction(() => document.activeElement?.id === 'email');
      await page.keyboard.type(email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/console\/overview$/);

      // From the campaigns list, Tab to "Send Winter" and press Enter.
      await page.goto(`${s.url}/console/campaigns`);
      let reached = false;
      for (let i = 0; i < 60 && !reached; i++) {
        await page.keyboard.press('Tab');
        reached = (await focused(page)).text === 'Send Winter';
      }
      assert.ok(reached, 'Send Winter is reachable with Tab');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/send$/);

      // The form: the segment list has the focus; choose with an arrow key, Tab to Review, Enter.
      assert.equal((await focusedOnArrival(page)).id, 'segment_id', 'the send form starts on the segment list');
      await page.keyboard.press('ArrowDown');
      reached = false;
      for (let i = 0; i < 20 && !reached; i++) {
        await page.keyboard.press('Tab');
        const f = await focused(page);
        reached = f.tag === 'button' && f.text === 'Review';
      }
      assert.ok(reached, 'Review is reachable with Tab');
      await page.keyboard.press('Enter');
      await page.locator('[data-plan]').waitFor();

      // The review: Confirm send has the focus; Enter confirms.
      const onReview = await focusedOnArrival(page);
      assert.deepEqual([onReview.tag, onReview.text, onReview.data.includes('confirm')], ['button', 'Confirm send', true]);
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/console\/sends\/[0-9a-f-]{36}$/);

      // The send's page: its heading has the focus (a screen reader announces which send this is).
      const onSend = await focusedOnArrival(page);
      assert.deepEqual([onSend.tag, onSend.data.includes('sendHeading')], ['h1', true]);
      assert.match(onSend.text, /^Winter — send of /);
      await checkPage(page, 'send page reached by keyboard');
    });
    await page.close();
  });
});
