/**
 * Helpers of the console tests: a cookie-keeping HTTP client that fills forms the way a
 * browser does (CSRF token from the page), set-up shortcuts through the operator API, and a Chromium
 * launcher for Playwright (`playwright-core` + the machine's Chromium, see {@link CHROMIUM}) that reports
 * when the browser is missing so browser tests can skip instead of failing.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.ts';

/** The password every test user gets (long enough for the console's rule). */
export const PASSWORD = 'correct horse battery staple';

let counter = 0;
/** A fresh email address for one test (unique across runs sharing a PostgreSQL database). */
export function freshEmail(tag = 'user'): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now().toString(36)}-${counter}@example.com`;
}

/** One HTTP answer as the client saw it. */
export interface Answer { status: number; headers: Headers; text: string; location: string | null }

/**
 * A minimal browser for plain HTTP tests: keeps cookies (by name; the console uses one path), does not
 * follow redirects (tests look at them), and can submit a page's form with its CSRF token.
 */
export class ConsoleClient {
  readonly base: string;
  readonly cookies = new Map<string, string>();

  constructor(base: string) {
    this.base = base;
  }

  /** A request; `form` is sent urlencoded. Remembers Set-Cookie answers (and deletions). */
  async request(method: string, p: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
    const h: Record<string, string> = { ...headers };
    if (this.cookies.size) h.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (form) {
      h['content-type'] ??= 'application/x-www-form-urlencoded';
      body = new URLSearchParams(form).toString();
    }
    const res = await fetch(this.base + p, { method, headers: h, body, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location') };
  }

  get(p: string): Promise<Answer> {
    return this.request('GET', p);
  }

  /** GETs `pagePath`, takes the CSRF token of its first form, and POSTs `form` (plus `_csrf`) to `action`. */
  async submit(pagePath: string, action: string, form: Record<string, string>): Promise<Answer> {
    const page = await this.get(pagePath);
    const token = csrfToken(page.text);
    return this.request('POST', action, { _csrf: token, ...form });
  }

  /** Signs in; throws unless the console answers with a redirect into the console. */
  async signIn(email: string, password = PASSWORD): Promise<void> {
    const r = await this.submit('/console/login', '/console/login', { email, password });
    if (r.status !== 303 || !r.location?.startsWith('/console/')) throw new Error(`sign-in failed: ${r.status} ${r.text.slice(0, 300)}`);
  }
}

/** Submits the review page's confirm form (its CSRF token, choices and one-time confirm token). */
export function confirmFrom(cl: ConsoleClient, review: Answer, action: string, form: Record<string, string>): Promise<Answer> {
  const token = /name="confirm_token" value="([^"]+)"/.exec(review.text)?.[1] ?? '';
  return cl.request('POST', action, { _csrf: csrfToken(review.text), ...form, confirm_token: token.replace(/&amp;/g, '&') });
}

/** The CSRF token of the first form in an HTML page. */
export function csrfToken(htmlText: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(htmlText);
  if (!m) throw new Error('no CSRF token on the page');
  return m[1];
}

/** Creates a company through the operator API (subscription active unless told otherwise). */
export async function newCompany(s: TestServer, fields: Record<string, unknown> = {}): Promise<number> {
  const c = await s.admin('POST', '/admin/companies', { name: 'Console Co', subscription_active: true, ...fields });
  return c.company_id;
}

/** A console role (src/console/permissions.ts). */
export type Role = 'owner' | 'developer' | 'marketer';

/** Invites an email through the operator API (role owner unless told); resolves to the invitation answer. */
export async function invite(s: TestServer, companyId: number, email: string, role?: Role): Promise<{ invitation_id: number; email: string; role: Role; company_id: number; invite_url: string; expires_at: string }> {
  return s.admin('POST', `/admin/companies/${companyId}/users/invitations`, role ? { email, role } : { email }, 201);
}

/** Invites (role owner unless told) and accepts over HTTP: a ready user of the company; resolves to its email. */
export async function newUser(s: TestServer, companyId: number, email = freshEmail(), role?: Role): Promise<string> {
  const inv = await invite(s, companyId, email, role);
  const p = new URL(inv.invite_url).pathname;
  const r = await new ConsoleClient(s.url).submit(p, p, { password: PASSWORD, password_confirm: PASSWORD });
  if (r.status !== 303) throw new Error(`accepting the invitation failed: ${r.status} ${r.text.slice(0, 300)}`);
  return email;
}

/** A signed-in client of a new user of the company (role owner unless told). */
export async function signedInClient(s: TestServer, companyId: number, role?: Role): Promise<ConsoleClient> {
  const email = await newUser(s, companyId, freshEmail(role ?? 'user'), role);
  const c = new ConsoleClient(s.url);
  await c.signIn(email);
  return c;
}

/** The user id of a console user's email (operator API lookup). */
export async function userIdOf(s: TestServer, email: string): Promise<number> {
  const found = await s.admin('GET', `/admin/users?email=${encodeURIComponent(email)}`);
  if (!found.users[0]) throw new Error(`no console user ${email}`);
  return found.users[0].user_id;
}

/** Inserts a completed batch with messages directly (for isolation tests that need no pipeline). */
export async function insertBatch(s: TestServer, companyId: number, messages: { phone: string; status: 'sent' | 'failed' | 'skipped'; reason?: string }[]): Promise<string> {
  const db = s.service.deps.database.db;
  const batchId = crypto.randomUUID();
  await db.insertInto('batches').values({
    batch_id: batchId, company_id: companyId, kind: 'automation', source_id: 1, status: 'completed',
    total: messages.length, items: '[]', template: '{}', completed_at: new Date(),
  }).execute();
  for (const [seq, m] of messages.entries()) {
    await db.insertInto('messages').values({
      message_id: crypto.randomUUID(), batch_id: batchId, company_id: companyId, seq, phone: m.phone, status: m.status,
      reason: m.reason ?? null, attempts: m.status === 'sent' ? 1 : 0, sent_at: m.status === 'sent' ? new Date() : null,
    }).execute();
  }
  return batchId;
}

// ---------------------------------------------------------------------------------------------------
// Browser

/**
 * The Chromium the browser tests drive: CHROMIUM_PATH when set, else Debian's headless shell (package
 * `chromium-headless-shell`, the same Chromium without the desktop browser around it: what Playwright
 * itself runs for headless tests) when installed, else Debian's `chromium` in its headless mode. The
 * shell took a third of the CPU per page navigation (30 against 85 ms) and a third per launch on this
 * machine; the seven browser files went from about 106 to 77 s of machine CPU.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH
  ?? ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((p) => fs.existsSync(p))
  ?? '/usr/bin/chromium';

/** Why browser tests cannot run here, or undefined when they can. */
export function browserSkipReason(): string | undefined {
  if (!fs.existsSync(CHROMIUM)) return `Chromium not found at ${CHROMIUM}: install the Debian package "chromium-headless-shell" or "chromium" (apt-get install -y chromium-headless-shell) to run the console browser tests`;
  return undefined;
}

/**
 * Whether Chromium runs as one process (`--single-process`: the browser, the renderer and the GPU
 * service share one process, as in serverless Chromium builds). The tests open localhost pages of one
 * site, so the renderer process isolation gives them nothing, and the IPC between the processes is a
 * good part of Chromium's CPU time here: three browser files took 33.5-36.3 s of machine CPU against
 * 39.9-41.0 s with the default processes (2026-11-28, AMD EPYC, 2 cores). `CHROMIUM_SINGLE_PROCESS=0`
 * turns it off (Chromium's default process model), for instance to rule it out when a browser test fails.
 */
const SINGLE_PROCESS = process.env.CHROMIUM_SINGLE_PROCESS !== '0';

const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', ...(SINGLE_PROCESS ? ['--single-process'] : []),
];

/** A headless Chromium with a new, empty profile directory; `close()` removes the directory. */
export async function launchBrowser(opts: { viewport?: { width: number; height: number } } = {}): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const { chromium } = await import('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: opts.viewport ?? { width: 1280, height: 900 },
    permissions: ['clipboard-read', 'clipboard-write'],
    timeout: 60_000,
  });
  context.setDefaultTimeout(15_000);
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Where failure screenshots go. */
export const RESULTS_DIR = path.resolve('test-results');

/**
 * Runs `steps` with the page; on failure saves a full-page screenshot as
 * `test-results/console-<name>.png` and rethrows.
 */
export async function withScreenshotOnFailure<T>(page: Page, name: string, steps: () => Promise<T>): Promise<T> {
  try {
    return await steps();
  } catch (err) {
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    const file = path.join(RESULTS_DIR, `console-${name.replace(/[^a-z0-9-]+/gi, '-')}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    if (err instanceof Error) err.message += `\n(screenshot: ${file}; page: ${page.url()})`;
    throw err;
  }
}

/** axe-core's browser bundle, injected into pages by {@link axeViolations}. */
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The WCAG 2.1 A/AA rules and axe's best practices: what the console is held to. */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

/** One axe-core rule the page breaks: the rule, its impact and the elements (CSS selector paths). */
export interface AxeViolation { id: string; impact: string; targets: string[] }

/**
 * Runs axe-core on the page as it is (injected unless {@link axeOnEveryPage} did: a navigation drops
 * it) with the rules of `tags`; resolves to the violations. Only violations are collected
 * (`resultTypes`): nothing here reads the passed, incomplete and inapplicable checks.
 */
export async function axeViolations(page: Page, tags: readonly string[] = AXE_TAGS): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async (values) => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target: unknown }[] }[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values }, resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((x) => JSON.stringify(x.target)) }));
  }, [...tags]);
}

/**
 * Has the browser load axe-core into every page of `context` as the page starts, for a test that checks
 * every page it opens: the script is sent to the browser once instead of with each check (550 kB over
 * the DevTools protocol per page cost about 40 ms of CPU there).
 */
export async function axeOnEveryPage(context: BrowserContext): Promise<void> {
  await context.addInitScript({ content: AXE_SOURCE });
}

/**
 * Asserts the current page of a browser test fits its viewport (no sideways scrolling) and has no
 * axe-core violations (WCAG 2.1 A/AA and best practices; with `seriousOnly`, none of impact serious or
 * critical). `what` names the page in the failure message.
 */
export async function checkPage(page: Page, what: string, opts: { seriousOnly?: boolean } = {}): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${what}: the page is ${overflow}px wider than the screen`);
  const violations = await axeViolations(page);
  const counted = opts.seriousOnly ? violations.filter((v) => v.impact === 'serious' || v.impact === 'critical') : violations;
  assert.deepEqual(counted.map((v) => `${v.id} (${v.impact}): ${v.targets.join(', ')}`), [], `${what}: accessibility violations`);
}

/**
 * Screenshots for docs/console/: for each `[name, go]`, `go()` brings the page into the state to show,
 * then a full-page PNG is written as `<dir>/<name>.png` at 1280 px and `<dir>/<name>-phone.png` at 360 px.
 */
export async function takeScreenshots(page: Page, dir: string, shots: readonly (readonly [string, () => Promise<unknown>])[]): Promise<void> {
  for (const [name, go] of shots) {
    for (const [suffix, width] of [['', 1280], ['-phone', 360]] as const) {
      await page.setViewportSize({ width, height: 900 });
      await go();
      await page.screenshot({ path: path.join(dir, `${name}${suffix}.png`), fullPage: true });
    }
  }
}
