/**
 * Preview == stored == delivered, byte for byte (docs/console.md "Editor and live preview", "Line
 * endings"): a template with CRLF and lone CR line endings, emoji, tabs and trailing spaces, put in
 * through every way there is (the console's form, the operator API's create and change, the CLI with a
 * template file written with CRLF), is stored with LF; the operator API's preview, the console's
 * preview and the message the webhook provider delivers to a receiver (test/helpers/receiver.ts) carry
 * the same bytes. A template stored with CRLF before (written straight to the database) is delivered
 * with LF too, and migration 033 rewrites it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { ADMIN_TOKEN, eventually, type TestServer } from '../helpers/server.ts';
import { runCli, tempDir } from '../cli/helpers.ts';
import { signedInClient } from '../console/helpers.ts';
import { completed, messagesOf, phone, startPipelineServer } from './helpers.ts';

let s: TestServer;
let receiver: WebhookReceiver;
before(async () => {
  s = await startPipelineServer('line_endings');
  receiver = await startReceiver();
});
after(async () => {
  await s.close();
  await receiver.close();
});

const run = Math.floor(Math.random() * 1000);
const BODY_IN = 'Hi {{ first_name }} 🎉\r\n\tTab and trailing   \r\nin {{ city }}\r\rend  \r\n';
const BODY_LF = 'Hi {{ first_name }} 🎉\n\tTab and trailing   \nin {{ city }}\n\nend  \n';
const HEADER_IN = '{{ first_name }}\r\nsays hi\t ';
const HEADER_LF = '{{ first_name }}\nsays hi\t ';
const FIRST_NAME = 'Zoë 👩‍💻';
const BODY_OUT = `Hi ${FIRST_NAME} 🎉\n\tTab and trailing   \nin Köln\t \n\nend  \n`;
const HEADER_OUT = `${FIRST_NAME}\nsays hi\t `;

const unescape = (t: string) => t.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
const bytes = (label: string, actual: string, expected: string) =>
  assert.equal(Buffer.compare(Buffer.from(actual, 'utf8'), Buffer.from(expected, 'utf8')), 0, `${label}: ${JSON.stringify(actual)} vs ${JSON.stringify(expected)}`);

/** The template of a source as stored (the database's own text, not read through the domain). */
async function storedTemplate(kind: 'automation' | 'campaign', id: number): Promise<{ body: string; header: { text?: string } }> {
  const table = kind === 'automation' ? 'automations' : 'campaigns';
  const column = kind === 'automation' ? 'automation_id' : 'campaign_id';
  const { rows } = await sql<{ t: string }>`SELECT template::text AS t FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${id}`.execute(s.service.deps.database.db);
  return JSON.parse(rows[0].t);
}

/** What the receiver got for the batch's one message: its raw JSON's `body` and header text. */
async function received(batchId: string): Promise<{ body: string; header: string }> {
  const r = await eventually(async () => receiver.seen.find((x) => x.body?.batch_id === batchId && x.answered === 200));
  assert.equal(r.signatureError, null);
  return { body: r.body.body, header: r.body.header.text };
}

test('CRLF, emoji, tabs and trailing spaces: every way in stores LF; preview, stored and delivered are the same bytes', async () => {
  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: receiver.url, secret: receiver.secret });
  const to = phone(run, 1);
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: to, first_name: FIRST_NAME, variables: { city: 'Köln\t ' } }] });
  const console = await signedInClient(s, companyId, 'marketer');
  const template = { header: { type: 'text', text: HEADER_IN }, body: BODY_IN };

  // 1. The operator API.
  const viaApi = (await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'api', type: 'api', active: true, template }, 201)).automation_id as number;
  // 2. The console's form (a textarea submits CRLF; this sends the bytes as they come).
  const created = await console.submit('/console/automations/new', '/console/automations/new', {
    name: 'console', type: 'api', header_type: 'text', header_text: HEADER_IN, header_url: '', body: BODY_IN,
    b1_text: '', b1_url: '', b2_text: '', b2_url: '', wa_name: '', wa_language: '', wa_body_parameters: '', wa_header_parameters: '',
  });
  assert.equal(created.status, 303, created.text.slice(0, 300));
  const viaConsole = Number(/automations\/(\d+)/.exec(created.location!)![1]);
  await s.admin('PATCH', `/admin/automations/${viaConsole}`, { active: true });
  // 3. The CLI, with a template file written on Windows (CRLF between its lines, CRLF in its strings).
  const dir = await tempDir();
  const file = path.join(dir, 'template.json');
  await writeFile(file, JSON.stringify(template, null, 2).replace(/\n/g, '\r\n'));
  const cli = await runCli(['--json', 'automation', 'create', '--company', String(companyId), '--name', 'cli', '--template', file], { env: { CMS_URL: s.url, ADMIN_TOKEN } });
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(cli.code, 0, cli.stderr);
  const viaCli = JSON.parse(cli.stdout).automation_id as number;
  // 4. The operator API's change of an automation made with plain text.
  const viaPatch = (await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'patch', type: 'api', active: true, template: { body: 'x' } }, 201)).automation_id as number;
  const patched = await s.admin('PATCH', `/admin/automations/${viaPatch}`, { template });
  bytes('PATCH answer', patched.template.body, BODY_LF);

  for (const [way, id] of [['api', viaApi], ['console', viaConsole], ['cli', viaCli], ['patch', viaPatch]] as const) {
    const stored = await storedTemplate('automation', id);
    bytes(`${way}: stored body`, stored.body, BODY_LF);
    bytes(`${way}: stored header`, stored.header.text!, HEADER_LF);
    const preview = (await s.admin('POST', `/admin/automations/${id}/preview`, { phone: to })).rendered;
    bytes(`${way}: operator preview`, preview.body, BODY_OUT);
    bytes(`${way}: operator preview header`, preview.header.text, HEADER_OUT);
    const page = await console.get(`/console/automations/${id}?preview=1&preview_phone=${encodeURIComponent(to)}`);
    bytes(`${way}: console preview`, unescape(/data-preview-body>([\s\S]*?)<\/pre>/.exec(page.text)![1]), BODY_OUT);
    const res = await s.api('/api/automations/send', { key, body: { automation_id: id, contacts: [{ phone: to }] } });
    assert.equal(res.status, 200, res.text);
    const batchId = res.json.batch_id as string;
    const got = await received(batchId);
    bytes(`${way}: delivered body`, got.body, BODY_OUT);
    bytes(`${way}: delivered header`, got.header, HEADER_OUT);
    await completed(s, batchId);
    const [m] = await messagesOf(s, batchId);
    bytes(`${way}: the message's rendered body`, m.rendered.body, BODY_OUT);
  }

  // Campaigns: created with CRLF, changed with CRLF, sent to the receiver.
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'c', template }, 201);
  bytes('campaign: stored on create', (await storedTemplate('campaign', camp.campaign_id)).body, BODY_LF);
  await s.admin('PATCH', `/admin/campaigns/${camp.campaign_id}`, { template: { body: `${BODY_IN}!` } });
  bytes('campaign: stored on change', (await storedTemplate('campaign', camp.campaign_id)).body, `${BODY_LF}!`);
  const preview = (await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/preview`, { phone: to })).rendered.body;
  const send = await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { contacts: [to] });
  const got = await received(send.batch_id);
  bytes('campaign: preview', preview, `${BODY_OUT}!`);
  bytes('campaign: delivered', got.body, preview);
});

test('a template stored with CRLF before is delivered with LF, and migration 033 rewrites it', async () => {
  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: receiver.url, secret: receiver.secret });
  const to = phone(run, 2);
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: to, first_name: FIRST_NAME, variables: { city: 'Köln\t ' } }] });
  const db = s.service.deps.database.db;
  const old = JSON.stringify({ header: { type: 'text', text: HEADER_IN }, body: BODY_IN, buttons: [] });
  const { rows } = await sql<{ automation_id: number }>`
    INSERT INTO automations (company_id, name, type, active, template) VALUES (${companyId}, 'old', 'api', true, ${old}::jsonb) RETURNING automation_id`.execute(db);
  const id = rows[0].automation_id;
  bytes('stored before', (await storedTemplate('automation', id)).body, BODY_IN);
  bytes('the operator API reads LF', (await s.admin('GET', `/admin/automations/${id}`)).template.body, BODY_LF);
  const res = await s.api('/api/automations/send', { key, body: { automation_id: id, contacts: [{ phone: to }] } });
  assert.equal(res.status, 200, res.text);
  bytes('delivered', (await received(res.json.batch_id)).body, BODY_OUT);

  const migration = fs.readFileSync(new URL('../../src/db/migrations/033_template_line_endings.sql', import.meta.url), 'utf8');
  for (const statement of migration.split(/;\s*\n/).map((x) => x.trim()).filter((x) => /\bUPDATE\b/.test(x))) await sql.raw(statement).execute(db);
  const after = await storedTemplate('automation', id);
  bytes('stored after the migration', after.body, BODY_LF);
  bytes('header after the migration', after.header.text!, HEADER_LF);
});
