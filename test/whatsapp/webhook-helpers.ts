/**
 * Helpers of the webhook-field tests (docs/whatsapp.md "Webhook fields", "Inbound messages"): a
 * WhatsApp company of a WhatsApp Business Account (WABA) with templates in its catalogue copy, Meta's
 * account-level payloads (`entry[].id` = the WABA, `changes[].field`), signed as Meta signs them, and
 * reads of what the webhooks changed.
 *
 * The channel's `waba_id` and the catalogue rows are written with SQL through the test server's
 * database handle (the operator routes that set them belong to the catalogue work).
 */
import { sql } from 'kysely';
import { postPayload, randomPhoneNumberId, type FakeGraph, type PostResult } from '../helpers/fake-graph.ts';
import type { TestServer } from '../helpers/server.ts';
import { TEMPLATE } from '../receipts/helpers.ts';

export interface WabaCompany { companyId: number; key: string; phoneNumberId: string; appSecret: string; wabaId: string; automationId?: number }

/** A random WABA id (digits). */
export const randomWabaId = () => '2' + String(Math.floor(Math.random() * 1e14)).padStart(14, '0');

/**
 * A company whose channel is WhatsApp on `graph` in WABA `wabaId`, with `appSecret` (random unless
 * given). With `automation`, an API automation of TEMPLATE is created first and `order_shipped` /
 * `en_US` is APPROVED in its catalogue copy, so sends go out.
 */
export async function wabaCompany(s: TestServer, graph: FakeGraph, opts: { wabaId: string; appSecret?: string | null; automation?: boolean }): Promise<WabaCompany> {
  const { companyId, key } = await s.company();
  let automationId: number | undefined;
  if (opts.automation) {
    const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'wa', type: 'api', active: true, template: TEMPLATE }, 201);
    automationId = a.automation_id;
  }
  const phoneNumberId = randomPhoneNumberId();
  const appSecret = opts.appSecret === undefined ? 'app-secret-' + Math.random().toString(36).slice(2) : opts.appSecret;
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, {
    provider: 'whatsapp', phone_number_id: phoneNumberId, access_token: 'EAAG-test-token', api_base_url: graph.baseUrl,
    ...(appSecret ? { app_secret: appSecret } : {}), verify_token: 'verify-' + Math.random().toString(36).slice(2),
  });
  await sql`UPDATE companies SET channel = channel || jsonb_build_object('waba_id', ${opts.wabaId}::text) WHERE company_id = ${companyId}`.execute(s.service.deps.database.db);
  if (opts.automation) await insertTemplate(s, companyId, { template_id: String(Date.now()) + String(companyId), name: 'order_shipped', language: 'en_US', status: 'APPROVED' });
  return { companyId, key, phoneNumberId, appSecret: appSecret ?? '', wabaId: opts.wabaId, automationId };
}

/** One template of a company's catalogue copy (`synced_at` 2026-01-01 unless given). */
export async function insertTemplate(s: TestServer, companyId: number, t: { template_id: string; name: string; language: string; status: string; category?: string; quality_score?: string; synced_at?: string }): Promise<void> {
  await sql`
    INSERT INTO whatsapp_templates (company_id, template_id, name, language, status, category, quality_score, rejected_reason, parameters, components, synced_at)
    VALUES (${companyId}, ${t.template_id}, ${t.name}, ${t.language}, ${t.status}, ${t.category ?? 'UTILITY'}, ${t.quality_score ?? 'UNKNOWN'}, NULL,
            '{"header":0,"body":1,"buttons":[]}'::jsonb, '[{"type":"BODY","text":"Hi {{1}}"}]'::jsonb, ${t.synced_at ?? '2026-01-01T00:00:00Z'}::timestamptz)`.execute(s.service.deps.database.db);
}

/** A template of the company's copy as stored, or undefined. */
export async function templateRow(s: TestServer, companyId: number, templateId: string): Promise<any> {
  const { rows } = await sql<any>`SELECT template_id, name, language, status, category, quality_score, rejected_reason, synced_at
    FROM whatsapp_templates WHERE company_id = ${companyId} AND template_id = ${templateId}`.execute(s.service.deps.database.db);
  return rows[0];
}

/** The channel's state row (undefined: never written, i.e. active without a quality rating) and its configuration JSON. */
export async function channelOf(s: TestServer, companyId: number): Promise<{ state: any; channel: any }> {
  const db = s.service.deps.database.db;
  const { rows } = await sql<any>`SELECT state, reason, quality_rating FROM whatsapp_channel_state WHERE company_id = ${companyId}`.execute(db);
  const { rows: c } = await sql<any>`SELECT channel FROM companies WHERE company_id = ${companyId}`.execute(db);
  return { state: rows[0], channel: typeof c[0].channel === 'string' ? JSON.parse(c[0].channel) : c[0].channel };
}

/** One account-level change: `field` and its `value`, for the entry of WABA `wabaId` (entry time: unix seconds). */
export interface AccountChangeSpec { wabaId: string; field: string; value: unknown; time?: number }

/** Meta's payload for account-level changes, one entry per change. */
export function accountPayload(changes: AccountChangeSpec[]) {
  return {
    object: 'whatsapp_business_account',
    entry: changes.map((c) => ({ id: c.wabaId, time: c.time ?? Math.floor(Date.now() / 1000), changes: [{ value: c.value, field: c.field }] })),
  };
}

/** Posts account-level changes signed with `appSecret`. */
export function postAccount(serviceUrl: string, appSecret: string, changes: AccountChangeSpec[], opts: { signature?: string | null } = {}): Promise<PostResult> {
  return postPayload(serviceUrl, appSecret, accountPayload(changes), opts);
}

/** A message_template_status_update value as Meta sends it. */
export function templateStatus(event: string, template: { id: string; name: string; language: string }, reason = 'NONE') {
  return { event, message_template_id: Number(template.id), message_template_name: template.name, message_template_language: template.language, reason };
}

/** The value of `cms_whatsapp_webhook_changes_total{field, handling}` on the server's /metrics (0 when absent). */
export async function changesCounted(s: TestServer, field: string, handling: 'applied' | 'ignored'): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const m = new RegExp(`^cms_whatsapp_webhook_changes_total\\{field="${field}",handling="${handling}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}
