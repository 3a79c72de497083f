/**
 * The editor's live preview in a real browser (docs/console.md "Editor and live preview"), Playwright
 * driving the machine's Chromium against the embedded default:
 * - the served copies of the server's modules, imported by Chromium, render a set of templates exactly
 *   as the server's src/domain/render.ts does (bodies, headers, WhatsApp parameters, errors);
 * - typing in the editor updates the bubble with no request to the server; the bubble equals, byte for
 *   byte, what the server renders for the same form (its "Preview changes" answer) and, once saved,
 *   what the operator API previews, emoji, tabs and trailing spaces included;
 * - a chosen contact is looked up once (one request), then typing again sends nothing;
 * - CRLF from the textarea is stored as LF, and the save shows the unknown-variable warning;
 * - the editor works with the keyboard alone;
 * - the bubble is beside the editor at 1280 px and below it at 360 px, nothing wider than the screen,
 *   and axe-core finds no violations.
 * Skipped, with the reason, without a Chromium (helpers.ts CHROMIUM).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { renderPreview, SAMPLE_PHONE, type RenderContact } from '../../src/domain/render.ts';
import { normaliseTemplate, type Template } from '../../src/domain/templates.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { browserSkipReason, checkPage, launchBrowser, newCompany, newUser, PASSWORD, withScreenshotOnFailure } from './helpers.ts';

const skip = browserSkipReason();
if (skip) console.log(`# SKIP editor preview browser tests: ${skip}`);

const run = Math.floor(Math.random() * 1000);
let n = 0;
const phone = () => `+49151${String(run).padStart(3, '0')}${String(9000 + ++n).padStart(5, '0')}`;

describe('the editor\'s live preview in a browser', () => {
  let s: TestServer;
  let browser: { context: BrowserContext; close(): Promise<void> };
  let companyId: number;
  let email: string;
  const ada = phone();

  before(async () => {
    if (skip) return;
    s = await startTestServer({ role: 'api' });
    await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
    companyId = await newCompany(s);
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: ada, first_name: 'Ada 🎉', variables: { city: 'Köln\t', order_id: 'A-7' } }] });
    email = await newUser(s, companyId, undefined, 'marketer');
    browser = await launchBrowser();
  });
  after(async () => {
    if (skip) return;
    await browser.close();
    await s.close();
  });

  /** A signed-in page of the browser's one context at `width`. */
  async function signedInPage(width = 1280): Promise<Page> {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width, height: 900 });
    if (!(await browser.context.cookies()).some((c) => c.name === 'cms_console_session')) {
      await page.goto(`${s.url}/console/login`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/console\/overview$/);
    }
    return page;
  }

  /** Opens `path` and waits until the live preview has taken over from the server's bubble. */
  async function openEditor(page: Page, path: string): Promise<void> {
    await page.goto(`${s.url}${path}`);
    await page.locator('[data-preview-note]', { hasText: 'Updated as you type' }).waitFor();
  }

  /** Records the requests the page sends from now on. */
  function requestsOf(page: Page): string[] {
    const seen: string[] = [];
    page.on('request', (r) => { if (!r.url().endsWith('/favicon.ico')) seen.push(`${r.method()} ${r.url()}`); });
    return seen;
  }

  const bubbleBody = (page: Page) => page.locator('[data-bubble-body]').textContent();
  /** Waits until the bubble's body is exactly `expected` (the preview renders once per frame), then asserts it. */
  async function bubbleIs(page: Page, expected: string): Promise<void> {
    await page.waitForFunction((e) => document.querySelector('[data-bubble-body]')?.textContent === e, expected, { timeout: 5_000 }).catch(() => {});
    assert.equal(await bubbleBody(page), expected);
  }
  const unescape = (t: string) => t.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

  test('the served modules render in Chromium exactly as the server renders', { skip }, async () => {
    const page = await signedInPage();
    await withScreenshotOnFailure(page, 'editor-preview-modules', async () => {
      await page.goto(`${s.url}/console/automations/new`);
      const contact: RenderContact = { phone: '+4915112345678', first_name: 'Zoë 🎉', last_name: null, variables: JSON.parse('{"city":"Köln\\t","n":3,"tags":["a","b"],"__proto__":{"x":1},"nested":{"k":"v"}}') };
      const cases: { template: Partial<Template> & { body: string }; contact: RenderContact }[] = [
        { template: { body: 'Hi {{ first_name }} 👋\n\tTabbed   \nin {{ city }}  ' }, contact },
        { template: { body: 'Line one\r\nline two\r\n' }, contact },
        { template: { body: '{% for i in (1..n) %}*{% endfor %} {{ tags | join: ", " }} {{ variables.nested.k | upcase }} {{ x }}{{ constructor }}' }, contact },
        { template: { body: '{{ last_name | default: "friend" }} {{ phone | slice: 0, 3 }} {{ "a,b" | split: "," | size }} {{ 7 | divided_by: 2 }} {{ 1.5 | times: 3 }}' }, contact },
        { template: { header: { type: 'text', text: '{{ first_name | upcase }}' }, body: 'Order {{ order_id | default: "?" }} for {{ first_name }}', buttons: [{ type: 'url', text: 'Track', url: 'https://e.com/t' }], whatsapp: { name: 'order', language: 'en' } }, contact },
        { template: { header: { type: 'image', url: 'https://e.com/i.png' }, body: '{{ first_name }}' }, contact: { phone: SAMPLE_PHONE, first_name: null, last_name: null, variables: null } },
        { template: { body: '{% if first_name %}yes{% else %}no{% endif %} {{ first_name | size }}' }, contact: { phone: SAMPLE_PHONE, first_name: null, last_name: null, variables: null } },
        { template: { body: 'Hi {{ first_name | shout }}' }, contact },
        { template: { body: 'Hi {% include "x" %}' }, contact },
        { template: { body: 'Hi {{ first_name' }, contact },
      ];
      const server = cases.map((c) => {
        try {
          return renderPreview(normaliseTemplate(c.template), c.contact);
        } catch (err) {
          return { error: (err as Error).message };
        }
      });
      const browserSide = await page.evaluate(async (list) => {
        const [renderUrl, templatesUrl] = ['/console/assets/shared/render.js', '/console/assets/shared/templates.js'];
        const r = await import(renderUrl);
        const t = await import(templatesUrl);
        return list.map((c: { template: unknown; contact: unknown }) => {
          try {
            return r.renderPreview(t.normaliseTemplate(c.template), c.contact);
          } catch (err) {
            return { error: (err as Error).message };
          }
        });
      }, JSON.parse(JSON.stringify(cases)));
      assert.deepEqual(browserSide, server);
      assert.equal((server[0] as { body: string }).body, 'Hi Zoë 🎉 👋\n\tTabbed   \nin Köln\t  ');
      assert.deepEqual((server[4] as { whatsapp: unknown }).whatsapp, { name: 'order', language: 'en', header_parameters: ['ZOË 🎉'], body_parameters: ['?', 'Zoë 🎉'], button_parameters: [null] });
      assert.ok('error' in server[7] && 'error' in server[8] && 'error' in server[9], 'errors are compared too');
    });
    await page.close();
  });

  test('typing updates the bubble without a request; it equals the server\'s render byte for byte; the save stores LF and shows the warning', { skip }, async () => {
    const page = await signedInPage();
    await withScreenshotOnFailure(page, 'editor-preview-typing', async () => {
      await openEditor(page, '/console/campaigns/new');
      assert.equal(await page.locator('[data-bubble-empty]').textContent(), 'Type a body to see the message here.');
      assert.equal(await page.locator('[data-server-preview]').isHidden(), true, 'the script-less fallback button is hidden');
      await page.getByLabel('Name', { exact: true }).fill('Spring');
      const requests = requestsOf(page);
      const body = page.locator('#body');
      await body.click();
      await page.keyboard.type('Hi {{ first_name | default: "you" }} 🌷');
      await bubbleIs(page, 'Hi you 🌷');
      await page.keyboard.press('Enter');
      await page.keyboard.insertText('\tTabbed');
      await page.keyboard.type(' {{ frist_name }}   ');
      await bubbleIs(page, 'Hi you 🌷\n\tTabbed    ');
      await page.keyboard.type('{{');
      assert.match((await page.locator('[data-bubble-error]').textContent())!, /^Fix the template to see the message: Not a valid Liquid template: /);
      await page.keyboard.press('Backspace');
      await page.keyboard.press('Backspace');
      await page.getByLabel('Sample first name').fill('Kim');
      await bubbleIs(page, 'Hi Kim 🌷\n\tTabbed    ');
      await page.getByLabel('Header type').selectOption('text');
      await page.getByLabel(/^Header text/).fill('  {{ first_name | upcase }}\t');
      await page.waitForFunction(() => document.querySelector('[data-bubble-header]')?.textContent === '  KIM\t', undefined, { timeout: 5_000 }).catch(() => {});
      assert.equal(await page.locator('[data-bubble-header]').textContent(), '  KIM\t');
      assert.deepEqual(requests, [], 'typing sent nothing to the server');
      const typed = await bubbleBody(page);

      // The server's render of the same form: its script-less "Preview changes" (a real form submission: CRLF).
      await page.evaluate(() => { (window as unknown as { before: boolean }).before = true; });
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.evaluate(() => (document.getElementById('template-form') as HTMLFormElement).requestSubmit(document.querySelector('[data-server-preview]') as HTMLButtonElement)),
      ]);
      const html = await answer.text();
      assert.match(answer.request().postData() ?? '', /%0D%0A%09Tabbed/, 'the textarea submitted CRLF');
      const serverBody = unescape(/data-bubble-body>([\s\S]*?)<\/div>/.exec(html)![1]);
      assert.equal(Buffer.compare(Buffer.from(serverBody), Buffer.from(typed!)), 0, `${JSON.stringify(serverBody)} vs ${JSON.stringify(typed)}`);
      assert.equal(unescape(/data-bubble-header>([\s\S]*?)<\/p>/.exec(html)![1]), '  KIM\t');
      await page.waitForFunction(() => !(window as unknown as { before?: boolean }).before && document.querySelector('[data-preview-note]')?.textContent?.startsWith('Updated as you type'));
      assert.equal(await bubbleBody(page), typed, 'the page the server answered shows the same');

      await page.getByRole('button', { name: 'Create campaign' }).click();
      await page.waitForURL(/\/console\/campaigns\/\d+\?done=created$/);
      const id = Number(/campaigns\/(\d+)/.exec(page.url())![1]);
      const raw = await s.service.deps.database.db.selectFrom('campaigns').select('template').where('campaign_id', '=', id).executeTakeFirstOrThrow();
      assert.equal((raw.template as unknown as Template).body, 'Hi {{ first_name | default: "you" }} 🌷\n\tTabbed {{ frist_name }}   ', 'stored with LF');
      assert.deepEqual(await page.locator('[data-warning]').allTextContents(), ['No contact of this company has the variable frist_name: it renders empty.']);
      const preview = await s.admin('POST', `/admin/campaigns/${id}/preview`, { first_name: 'Kim' });
      assert.equal(Buffer.compare(Buffer.from(preview.rendered.body), Buffer.from(typed!)), 0, 'the operator API previews the same bytes');
      await checkPage(page, 'campaign editor after the save, with its warning');
    });
    await page.close();
  });

  test('a chosen contact is looked up once; typing after that sends nothing', { skip }, async () => {
    const page = await signedInPage();
    await withScreenshotOnFailure(page, 'editor-preview-contact', async () => {
      const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Shipped', type: 'api', active: false, template: { body: 'Hi {{ first_name }}, order {{ order_id }} to {{ city }}.' } }, 201);
      await openEditor(page, `/console/automations/${a.automation_id}`);
      assert.equal(await bubbleBody(page), 'Hi , order  to .');
      const requests = requestsOf(page);
      await page.getByLabel(/^Contact phone \(empty/).fill(ada);
      await page.getByLabel(/^Contact phone \(empty/).press('Tab');
      await page.locator('[data-bubble-to]', { hasText: 'a contact of your company' }).waitFor();
      assert.equal(await bubbleBody(page), 'Hi Ada 🎉, order A-7 to Köln\t.');
      assert.equal(requests.length, 1, requests.join('\n'));
      assert.match(requests[0], /^GET .*\/console\/automations\/preview-contact\.json\?phone=/);
      await page.locator('#body').fill('Moin {{ first_name }} ({{ phone }})');
      await bubbleIs(page, `Moin Ada 🎉 (${ada})`);
      assert.equal(requests.length, 1, 'typing sent nothing more');
      const preview = await s.admin('POST', `/admin/automations/${a.automation_id}/preview`, { phone: ada });
      assert.equal(preview.rendered.body, 'Hi Ada 🎉, order A-7 to Köln\t.', 'the saved template, for the same contact, on the server');
      await page.getByLabel(/^Contact phone \(empty/).fill('call me');
      await page.getByLabel(/^Contact phone \(empty/).press('Tab');
      await page.locator('[data-contact-status]', { hasText: 'Not a phone number.' }).waitFor();
      assert.equal(await bubbleBody(page), `Moin  (${SAMPLE_PHONE})`, 'sample data meanwhile');
    });
    await page.close();
  });

  test('keyboard only: fill the editor, see the preview follow, create the automation', { skip }, async () => {
    const page = await signedInPage();
    await withScreenshotOnFailure(page, 'editor-preview-keyboard', async () => {
      await openEditor(page, '/console/automations/new');
      const focused = () => page.evaluate(() => {
        const e = document.activeElement as HTMLElement | null;
        return e ? (e.id || e.textContent?.trim() || e.tagName) : '';
      });
      /** Presses Tab until the element `target` (id or button text) has the focus. */
      const tabTo = async (target: string) => {
        for (let i = 0; i < 40; i++) {
          await page.keyboard.press('Tab');
          if (await focused() === target) return;
        }
        assert.fail(`Tab never reached ${target}`);
      };
      await tabTo('name');
      await page.keyboard.type('By keyboard');
      await tabTo('body');
      await page.keyboard.type('Hello {{ first_name }}');
      await page.keyboard.press('Enter');
      await page.keyboard.type('bye');
      await tabTo('editor_preview_first_name');
      await page.keyboard.type('Lea');
      await bubbleIs(page, 'Hello Lea\nbye');
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle + ' ' + getComputedStyle(document.activeElement!).boxShadow);
      assert.notEqual(outline, 'none none', 'the focused field shows it');
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Shift+Tab');
      for (let i = 0; i < 10 && (await focused()) !== 'Create automation'; i++) await page.keyboard.press('Shift+Tab');
      assert.equal(await focused(), 'Create automation');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/console\/automations\/\d+\?done=created$/);
      const id = Number(/automations\/(\d+)/.exec(page.url())![1]);
      assert.equal((await s.admin('GET', `/admin/automations/${id}`)).template.body, 'Hello {{ first_name }}\nbye');
    });
    await page.close();
  });

  for (const width of [1280, 360]) {
    test(`at ${width} px: the bubble is ${width === 1280 ? 'beside' : 'below'} the editor, nothing is wider than the screen, no axe violations`, { skip }, async () => {
      const page = await signedInPage(width);
      await withScreenshotOnFailure(page, `editor-preview-${width}`, async () => {
        const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: `Layout ${width}`, type: 'api', active: false, template: {
          header: { type: 'text', text: 'Hi {{ first_name }}' },
          body: 'Your order {{ order_id }} is on its way to {{ city | default: "you" }}.\n\nTrack it: https://shop.example/track/averyveryveryverylongpathwithoutanybreakopportunity\n\n\tThanks  ',
          buttons: [{ type: 'url', text: 'Track', url: 'https://shop.example/track' }], whatsapp: { name: 'order_shipped', language: 'en_US' },
        } }, 201);
        await openEditor(page, `/console/automations/${a.automation_id}?done=saved`);
        const form = (await page.locator('#template-form').boundingBox())!;
        const aside = (await page.locator('[data-live-preview]').boundingBox())!;
        if (width === 1280) {
          assert.ok(aside.x >= form.x + form.width, `beside: form ends at ${form.x + form.width}, preview starts at ${aside.x}`);
          assert.ok(aside.y < form.y + form.height / 2, 'level with the editor');
        } else {
          assert.ok(aside.y >= form.y + form.height, `below: form ends at ${form.y + form.height}, preview starts at ${aside.y}`);
        }
        assert.deepEqual(await page.locator('[data-bubble-whatsapp] dt').allTextContents(), ['Header {{1}}', 'Body {{1}}', 'Body {{2}}']);
        assert.deepEqual(await page.locator('[data-bubble-whatsapp] dd').allTextContents(), ['(empty)', '(empty)', 'you']);
        await checkPage(page, `automation editor at ${width} px`);
      });
      await page.close();
    });
  }
});
