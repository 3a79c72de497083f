/**
 * Helpers of the webhook-field tests (docs/whatsapp.md "Webhook fields", "Inbound messages"): a
 * WhatsApp company of a given WhatsApp Business Account (WABA; several companies may share one), its
 * catalogue synced from the fake Graph API, Meta's account-level payloads (`entry[].id` = the WABA,
 * `changes[].field`), signed as Meta signs them, and reads of what the webhooks changed (the operator
 * API where it shows it, the database for the catalogue rows).
 */
import { sql } from 'kysely';
import { GRAPH_TOKEN, graphTemplate, postPayload, randomPhoneNumberId, rememberWaba, type FakeGraph, type GraphTemplate, type PostResult } from '../helpers/fake-graph.ts';
import type { TestServer } from '../helpers/server.ts';
import { TEMPLATE } from '../receipts/helpers.ts';

export interface WabaCompany { companyId: number; key: string; phoneNumberId: string; appSecret: string; wabaId: string; automationId?: number }

/** A random WABA id (digits). */
export const randomWabaId = () => '2' + String(Math.floor(Math.random() * 1e14)).padStart(14, '0');

/**
 * A company whose channel is WhatsApp on `graph` in WABA `wabaId` (set with the channel), with
 * `appSecret` (random unless given; null: none). With `automation`, an API automation of TEMPLATE is
 * created first. `templates` (default: `order_shipped` / `en_US`, approved) are put into the WABA on
 * the fake Graph API (unless the WABA has some already) and the company's catalogue is synced from there.
 */
export async function wabaCompany(s: TestServer, graph: FakeGraph, opts: { wabaId: string; appSecret?: string | null; automation?: boolean; templates?: GraphTemplate[] }): Promise<WabaCompany> {
  const { companyId, key } = await s.company();
  let automationId: number | undefined;
  if (opts.automation) {
    const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'wa', type: 'api', active: true, template: TEMPLATE }, 201);
    automationId = a.automation_id;
  }
  const phoneNumberId = randomPhoneNumberId();
  const appSecret = opts.appSecret === undefined ? 'app-secret-' + Math.random().toString(36).slice(2) : opts.appSecret;
  if (!graph.templates.has(opts.wabaId) || opts.templates) graph.templates.set(opts.wabaId, opts.templates ?? [graphTemplate('order_shipped', 'en_US', { body: 1 })]);
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, {
    provider: 'whatsapp', phone_number_id: phoneNumberId, access_token: graph.accessToken ?? GRAPH_TOKEN, api_base_url: graph.baseUrl,
    ...(appSecret ? { app_secret: appSecret } : {}), verify_token: 'verify-' + Math.random().toString(36).slice(2), waba_id: opts.wabaId,
  });
  rememberWaba(phoneNumberId, opts.wabaId);
  await s.admin('POST', `/admin/companies/${companyId}/whatsapp/templates/sync`, undefined, 200);
  return { companyId, key, phoneNumberId, appSecret: appSecret ?? '', wabaId: opts.wabaId, automationId };
}

/** A template of the company's copy as stored, or undefined. */
export async function templateRow(s: TestServer, companyId: number, templateId: string): Promise<any> {
  const { rows } = await sql<any>`SELECT template_id, name, language, status, category, quality_score, rejected_reason, synced_at
    FROM whatsapp_templates WHERE company_id = ${companyId} AND template_id = ${templateId}`.execute(s.service.deps.database.db);
  return rows[0];
}

/** The company's channel as GET /admin/companies/{id} shows it (state, paused_reason, quality_rating, messaging_limit, ...). */
export async function channelOf(s: TestServer, companyId: number): Promise<any> {
  return (await s.admin('GET', `/admin/companies/${companyId}`)).channel;
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
