/**
 * A company whose channel is WhatsApp on the fake Graph API, with a synced template catalogue
 * (docs/whatsapp.md "Template catalogue"): created through the operator API, fresh random
 * phone_number_id and waba_id (companies on a shared database never collide), app secret and verify
 * token set, the default templates (plus `opts.templates`) approved in the fake Graph's WABA, and
 * the catalogue synced through POST .../whatsapp/templates/sync.
 *
 * Default templates (status APPROVED): `order_shipped` in `en` and `en_US` with an image header, two
 * body parameters and two URL buttons with a placeholder each; `order_update` (`en`, `en_US`): one
 * body parameter, no header, no buttons; `hello` (`en`, `en_US`): no parameters at all. An entry of
 * `opts.templates` with the name and language of a default replaces it.
 *
 * Tests whose WhatsApp channel points at their own receiver (not the fake Graph API) put templates
 * straight into the catalogue with {@link approveTemplates} instead of syncing.
 */
import { insertTemplates } from '../../src/db/whatsapp-templates.ts';
import { parseMetaTemplate } from '../../src/domain/whatsapp-templates.ts';
import { GRAPH_TOKEN, graphTemplate, randomPhoneNumberId, rememberWaba, type FakeGraph, type GraphTemplate } from './fake-graph.ts';
import type { TestServer } from './server.ts';

export interface WhatsappCompany {
  companyId: number;
  key: string;
  keyId: number;
  phoneNumberId: string;
  wabaId: string;
  appSecret: string;
  verifyToken: string;
  accessToken: string;
}

export interface WhatsappCompanyOptions {
  /** Templates to put into the WABA beside (or instead of, same name and language) the defaults. */
  templates?: GraphTemplate[];
  /** Company fields (POST /admin/companies) other than the defaults of `s.company`. */
  company?: Record<string, unknown>;
  /** Channel fields beside (or replacing) the helper's (e.g. throughput_per_second, messaging_limit). */
  channel?: Record<string, unknown>;
  /** Skip the sync (the catalogue stays empty). */
  noSync?: boolean;
}

/** The default templates of {@link whatsappCompany}. */
export function defaultTemplates(): GraphTemplate[] {
  return ['en', 'en_US'].flatMap((lang) => [
    graphTemplate('order_shipped', lang, { header: 'image', body: 2, buttons: [true, true] }),
    graphTemplate('order_update', lang, { body: 1 }),
    graphTemplate('hello', lang, {}),
  ]);
}

/** A random WABA id (15 digits). */
export function randomWabaId(): string {
  return '2' + String(Math.floor(Math.random() * 1e14)).padStart(14, '0');
}

/** Creates the company (see the module comment) and returns its ids and secrets. */
export async function whatsappCompany(s: TestServer, graph: FakeGraph, opts: WhatsappCompanyOptions = {}): Promise<WhatsappCompany> {
  const { companyId, key, keyId } = await s.company(opts.company);
  const phoneNumberId = randomPhoneNumberId();
  const wabaId = randomWabaId();
  const appSecret = 'app-secret-' + Math.random().toString(36).slice(2);
  const verifyToken = 'verify-' + Math.random().toString(36).slice(2);
  const extra = opts.templates ?? [];
  const templates = [...defaultTemplates().filter((d) => !extra.some((t) => t.name === d.name && t.language === d.language)), ...extra];
  graph.templates.set(wabaId, templates);
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, {
    provider: 'whatsapp', phone_number_id: phoneNumberId, access_token: graph.accessToken ?? GRAPH_TOKEN, api_base_url: graph.baseUrl,
    app_secret: appSecret, verify_token: verifyToken, waba_id: wabaId, ...opts.channel,
  });
  rememberWaba(phoneNumberId, opts.channel && 'waba_id' in opts.channel ? (opts.channel.waba_id as string | null) : wabaId);
  if (!opts.noSync) await s.admin('POST', `/admin/companies/${companyId}/whatsapp/templates/sync`, undefined, 200);
  return { companyId, key, keyId, phoneNumberId, wabaId, appSecret, verifyToken, accessToken: graph.accessToken ?? GRAPH_TOKEN };
}

/**
 * Puts `templates` (Meta's shape; default: {@link defaultTemplates}) into the company's catalogue
 * directly, as a sync would store them: for a test whose channel does not point at the fake Graph API.
 */
export async function approveTemplates(s: TestServer, companyId: number, templates: GraphTemplate[] = defaultTemplates()): Promise<void> {
  await insertTemplates(s.service.deps.database.db, companyId, templates.map((t, i) => parseMetaTemplate(t, i)), Date.now());
}
