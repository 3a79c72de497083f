/** Operator API: companies, connector and channel (operator-api.md). */
import type { FastifyInstance } from 'fastify';
import { createCompany, getCompany, listCompanies, setChannel, setConnector, updateCompany, type Company, type CompanyInput } from '../../domain/companies.ts';
import { DomainError } from '../../domain/errors.ts';
import { checkProviderUrl } from '../../domain/network-guard.ts';
import { isSupportedCountry } from '../../domain/phone.ts';
import { recordAudit } from '../../domain/audit.ts';
import type { AppDeps } from '../deps.ts';
import { RULES, rateLimitKey } from '../rate-limit.ts';
import { isIanaTimeZone } from '../../local-time.ts';
import { AdminValidationError } from './errors.ts';
import { generateWebhookSecret, webhookSecretProblem } from '../../providers/webhook.ts';
import { verifyTokenDigest } from '../../domain/receipts.ts';
import { companyProps, detailResponse, idParam } from './schemas.ts';

/** The answer shape of a company (secrets never included). */
function view(c: Company) {
  return {
    company_id: c.company_id,
    name: c.name,
    subscription_active: c.subscription_active,
    default_country: c.default_country,
    delivery_hours: c.delivery_hours,
    connector: c.connector,
    channel: c.channel,
    opt_out_keywords: c.opt_out_keywords,
    opt_in_keywords: c.opt_in_keywords,
    created_at: c.created_at,
  };
}

function checkInput(input: CompanyInput): void {
  if (input.default_country !== undefined && !isSupportedCountry(input.default_country)) {
    throw new DomainError(422, `default_country ${input.default_country} is not a supported ISO 3166-1 alpha-2 region`);
  }
  const tz = input.delivery_hours?.timezone;
  if (tz !== undefined && !isIanaTimeZone(tz)) {
    throw new DomainError(422, `delivery_hours.timezone ${tz} is not an IANA timezone`);
  }
}

export function registerCompanyRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const tags = ['operator: companies'];

  app.post<{ Body: CompanyInput & { name: string } }>('/admin/companies', {
    schema: { tags, summary: 'Create a company', body: { type: 'object', required: ['name'], properties: companyProps } },
  }, async (request, reply) => {
    checkInput(request.body);
    const company = await createCompany(db, request.body);
    await recordAudit(db, { actor: 'admin', action: 'company.create', target: `company:${company.company_id}`, company_id: company.company_id, details: { ...request.body } });
    return reply.code(201).send(view(company));
  });

  app.get('/admin/companies', { schema: { tags, summary: 'List companies' } }, async () => ({ companies: (await listCompanies(db)).map(view) }));

  app.get<{ Params: { company_id: number } }>('/admin/companies/:company_id', {
    schema: { tags, summary: 'Read a company', params: idParam('company_id') },
  }, async (request) => view(await getCompany(db, request.params.company_id)));

  app.patch<{ Params: { company_id: number }; Body: CompanyInput }>('/admin/companies/:company_id', {
    schema: { tags, summary: 'Change a company', params: idParam('company_id'), body: { type: 'object', properties: companyProps } },
  }, async (request) => {
    checkInput(request.body);
    const company = await updateCompany(db, request.params.company_id, request.body);
    deps.auth.invalidate();
    await recordAudit(db, { actor: 'admin', action: 'company.update', target: `company:${company.company_id}`, company_id: company.company_id, details: { ...request.body } });
    return view(company);
  });

  app.delete<{ Params: { company_id: number } }>('/admin/companies/:company_id/rate-limits', {
    schema: { tags, summary: "Reset a company's rate-limit windows (all four operations)", params: idParam('company_id') },
  }, async (request, reply) => {
    const company = await getCompany(db, request.params.company_id);
    for (const rule of Object.values(RULES)) await deps.rateLimiter.reset(rateLimitKey(company.company_id, rule));
    await recordAudit(db, { actor: 'admin', action: 'rate_limits.reset', target: `company:${company.company_id}`, company_id: company.company_id });
    return reply.code(204).send();
  });

  app.put<{ Params: { company_id: number }; Body: { connected: boolean; provider?: string } }>('/admin/companies/:company_id/connector', {
    schema: {
      tags, summary: 'Connect or disconnect the push-messaging connector', params: idParam('company_id'),
      body: { type: 'object', required: ['connected'], properties: { connected: { type: 'boolean' }, provider: { type: 'string', maxLength: 64 } } },
    },
  }, async (request) => {
    const company = await setConnector(db, request.params.company_id, request.body.connected, request.body.provider ?? null);
    deps.auth.invalidate();
    await recordAudit(db, { actor: 'admin', action: 'connector.set', target: `company:${company.company_id}`, company_id: company.company_id, details: { ...company.connector } });
    return { company_id: company.company_id, connector: company.connector };
  });

  app.put<{ Params: { company_id: number }; Body: Record<string, string> }>('/admin/companies/:company_id/channel', {
    schema: {
      tags, summary: 'Choose the delivery channel (provider) of a company; secrets are stored encrypted and never echoed (a generated webhook secret is returned once)',
      params: idParam('company_id'),
      body: {
        type: 'object', required: ['provider'],
        description: 'outbox: no other field; webhook: url and secret (optional: without one a whsec_ secret is generated and returned once in `secret`); whatsapp: phone_number_id, access_token, api_base_url (optional), app_secret and verify_token (optional; needed for webhooks in, docs/whatsapp.md)',
        properties: {
          provider: { type: 'string', enum: ['outbox', 'webhook', 'whatsapp'] },
          url: { type: 'string', pattern: '^https?://\\S+$', maxLength: 2048 },
          secret: { type: 'string', minLength: 16, maxLength: 512, description: 'webhook: `whsec_` + base64 (Standard Webhooks; the decoded bytes are the HMAC key) or any other text (its UTF-8 bytes are the key, never base64-decoded)' },
          phone_number_id: { type: 'string', pattern: '^[0-9]{1,32}$' },
          access_token: { type: 'string', minLength: 1, maxLength: 4096 },
          api_base_url: { type: 'string', pattern: '^https?://\\S+$', maxLength: 2048 },
          app_secret: { type: 'string', minLength: 8, maxLength: 512, description: "whatsapp: the Meta app's secret; verifies X-Hub-Signature-256 of POST /webhooks/whatsapp" },
          verify_token: { type: 'string', minLength: 8, maxLength: 512, description: 'whatsapp: the verify token of the GET /webhooks/whatsapp handshake' },
        },
      },
      response: {
        409: { description: 'phone_number_id is the WhatsApp channel of another company', ...detailResponse },
      },
    },
  }, async (request) => {
    const b = request.body;
    const needed = b.provider === 'webhook' ? ['url'] : b.provider === 'whatsapp' ? ['phone_number_id', 'access_token'] : [];
    const missing = needed.filter((f) => b[f] === undefined);
    if (missing.length) throw new AdminValidationError(missing.map((f) => ({ type: 'missing', loc: ['body', f], msg: 'Field required' })));
    for (const field of ['url', 'api_base_url'] as const) {
      if (b[field] === undefined) continue;
      const problem = await checkProviderUrl(b[field], deps.addressPolicy);
      if (problem) throw new DomainError(422, `${field} ${problem}`);
    }
    let stored: Record<string, unknown>;
    let shown: Record<string, unknown>;
    let generated: string | undefined;
    if (b.provider === 'webhook') {
      const problem = b.secret === undefined ? undefined : webhookSecretProblem(b.secret);
      if (problem) throw new AdminValidationError([{ type: 'value_error', loc: ['body', 'secret'], msg: problem }]);
      // Without a secret, one is generated and returned once, in this answer only (issue 13).
      if (b.secret === undefined) generated = generateWebhookSecret();
      stored = { provider: 'webhook', url: b.url, secret_sealed: deps.sealSecret(b.secret ?? generated!) };
      shown = { provider: 'webhook', url: b.url };
    } else if (b.provider === 'whatsapp') {
      const base = b.api_base_url ?? 'https://graph.facebook.com/v21.0';
      stored = { provider: 'whatsapp', phone_number_id: b.phone_number_id, api_base_url: base, access_token_sealed: deps.sealSecret(b.access_token) };
      // Webhooks in (receipts-and-events.md §3): both sealed; the verify token's SHA-256 lets the GET
      // handshake find its channel without opening every channel's secrets.
      if (b.app_secret !== undefined) stored.app_secret_sealed = deps.sealSecret(b.app_secret);
      if (b.verify_token !== undefined) {
        stored.verify_token_sealed = deps.sealSecret(b.verify_token);
        stored.verify_token_sha256 = verifyTokenDigest(b.verify_token);
      }
      shown = { provider: 'whatsapp', phone_number_id: b.phone_number_id, api_base_url: base };
    } else {
      stored = { provider: 'outbox' };
      shown = stored;
    }
    const company = await setChannel(db, request.params.company_id, stored);
    await recordAudit(db, { actor: 'admin', action: 'channel.set', target: `company:${company.company_id}`, company_id: company.company_id, details: shown });
    return { company_id: company.company_id, channel: shown, ...(generated ? { secret: generated } : {}) };
  });
}
