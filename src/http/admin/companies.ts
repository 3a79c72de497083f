/**
 * Operator API: companies, connector and channel (docs/operator-api.md), typed from TypeBox schemas
 * (components.ts pattern).
 *
 * | route | answers |
 * |---|---|
 * | POST /admin/companies | 201 `Company`; 401; 422 (schema, unsupported country, unknown time zone) |
 * | GET /admin/companies | 200 `{companies: Company[]}` (newest first, at most 1000); 401 |
 * | GET /admin/companies/{company_id} | 200 `Company`; 401; 404; 422 |
 * | PATCH /admin/companies/{company_id} | 200 `Company`; 401; 404; 422 |
 * | DELETE /admin/companies/{company_id}/rate-limits | 204; 401; 404; 422 |
 * | PUT /admin/companies/{company_id}/connector | 200 `ConnectorAnswer`; 401; 404; 422 |
 * | PUT /admin/companies/{company_id}/channel | 200 `ChannelAnswer` (a generated webhook `secret` once; whatsapp: `warnings` of sources that do not map); 401; 404; 409 number taken; 422 |
 * | POST /admin/companies/{company_id}/channel/resume | 200 `Company`; 401; 404; 409 not WhatsApp; 422 |
 *
 * A WhatsApp channel (docs/whatsapp.md "The channel") also takes `waba_id`, `throughput_per_second`
 * and `messaging_limit`; GET of one company shows them with the channel's state and the messaging
 * limit's budget in use.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OPERATOR } from '../../domain/actor.ts';
import {
  changeChannel, changeCompany, createCompany, getCompany, listCompanies, resetRateLimits, resumeChannel, setConnector, type Company as CompanyRow, type CompanyInput, type CompanyRateLimits,
} from '../../domain/companies.ts';
import { checkProviderUrl } from '../../delivery/network-guard.ts';
import { isSupportedCountry } from '../../domain/phone.ts';
import type { AppDeps } from '../deps.ts';
import { RULES, rateLimitKey } from '../rate-limit.ts';
import { isIanaTimeZone } from '../../local-time.ts';
import { generateWebhookSecret, webhookSecretProblem } from '../../providers/webhook.ts';
import { verifyTokenDigest } from '../../domain/receipts.ts';
import {
  DEFAULT_MESSAGING_LIMIT, DEFAULT_THROUGHPUT_PER_SECOND, whatsappChannelView, type WhatsappChannelView,
} from '../../domain/whatsapp-channel.ts';
import { unmappedSourceWarnings } from '../../domain/whatsapp-templates.ts';
import {
  addComponents, adminErrors, component, conflict, exampleOf, idParams, invalid, invalidInput, iso, noContent,
  notFound, ok, ref, TIME_EXAMPLE,
} from './components.ts';
import { AdminValidationError } from './errors.ts';
import { companyProps, DeliveryHours, FrequencyCap } from './schemas.ts';
import { frequencyCapProblem } from '../../domain/frequency-caps.ts';

const nullableString = (o: Record<string, unknown> = {}) => Type.Union([Type.String(), Type.Null()], o);

/** The push-messaging connector of a company (4.4 refuses sends while it is not connected). */
export const Connector = component('Connector', Type.Object({
  connected: Type.Boolean(),
  provider: nullableString({ description: 'the connected push provider, null when disconnected' }),
}), { connected: true, provider: 'pushy' });

/** A company's channel as answers show it: never its secrets. */
export const ChannelView = component('ChannelView', Type.Object({
  provider: Type.Union([Type.Literal('outbox'), Type.Literal('webhook'), Type.Literal('whatsapp')]),
  url: Type.Optional(Type.String({ description: 'webhook: where messages are POSTed' })),
  phone_number_id: Type.Optional(Type.String({ description: 'whatsapp: the sending number\'s id' })),
  api_base_url: Type.Optional(Type.String({ description: 'whatsapp: the Graph API base' })),
  waba_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'whatsapp: the WhatsApp Business Account that owns the number (its templates); null when not set' })),
  throughput_per_second: Type.Optional(Type.Integer({ description: "whatsapp: the number's Cloud API throughput" })),
  messaging_limit: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'whatsapp: new people per moving 24 h; null: unlimited' })),
}), { provider: 'webhook', url: 'https://hooks.acme-shoes.example/cms/messages' });

/** A WhatsApp limit: one of Meta's tiers, or null (unlimited). */
const messagingLimit = Type.Union([Type.Literal(250), Type.Literal(2000), Type.Literal(10000), Type.Literal(100000), Type.Null()]);

/** A company (secrets never included). */
export const Company = component('Company', Type.Object({
  company_id: Type.Integer(),
  name: Type.String(),
  subscription_active: Type.Boolean(),
  default_country: Type.String({ description: 'ISO 3166-1 alpha-2' }),
  delivery_hours: Type.Union([ref(DeliveryHours), Type.Null()]),
  connector: ref(Connector),
  channel: Type.Object({
    provider: Type.String({ description: 'outbox, webhook or whatsapp (PUT .../channel)' }),
    phone_number_id: Type.Optional(Type.String({ description: 'whatsapp (GET of one company): the sending number\'s id' })),
    api_base_url: Type.Optional(Type.String({ description: 'whatsapp (GET of one company): the Graph API base' })),
    waba_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'whatsapp (GET of one company): the WhatsApp Business Account id, or null' })),
    throughput_per_second: Type.Optional(Type.Integer({ description: 'whatsapp (GET of one company)' })),
    messaging_limit: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'whatsapp (GET of one company): new people per moving 24 h; null: unlimited' })),
    state: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused')], { description: 'whatsapp (GET of one company): paused when Meta said the number may not send' })),
    paused_reason: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'whatsapp (GET of one company): why it is paused; null while active' })),
    quality_rating: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "whatsapp (GET of one company): the number's quality as Meta last reported (GREEN, YELLOW, RED), or null" })),
    messaging_limit_used: Type.Optional(Type.Integer({ description: 'whatsapp (GET of one company): people counted in the moving 24 h now' })),
    messaging_limit_resets_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'whatsapp (GET of one company): when the oldest counted send leaves the 24 h window; null when nobody is counted' })),
  }),
  opt_out_keywords: Type.Array(Type.String()),
  opt_in_keywords: Type.Array(Type.String()),
  frequency_cap: Type.Union([ref(FrequencyCap), Type.Null()], { description: 'the cap of campaign messages per contact, or null (none)' }),
  created_at: Type.String({ format: 'date-time' }),
}), {
  company_id: 12, name: 'Acme Shoes', subscription_active: true, default_country: 'DE',
  delivery_hours: { start: '09:00', end: '20:00', timezone: 'Europe/Berlin' },
  connector: { connected: false, provider: null }, channel: { provider: 'outbox' },
  opt_out_keywords: ['STOP'], opt_in_keywords: ['START'], frequency_cap: { messages: 3, per: '7d' }, created_at: TIME_EXAMPLE,
});

/** The answer of PUT .../connector. */
export const ConnectorAnswer = component('ConnectorAnswer', Type.Object({
  company_id: Type.Integer(),
  connector: ref(Connector),
}), { company_id: 12, connector: { connected: true, provider: 'pushy' } });

/** The answer of PUT .../channel; `secret` only when the webhook secret was generated (shown this once). */
export const ChannelAnswer = component('ChannelAnswer', Type.Object({
  company_id: Type.Integer(),
  channel: ref(ChannelView),
  secret: Type.Optional(Type.String({ description: 'webhook without a given secret: the generated `whsec_` secret, shown only in this answer' })),
  warnings: Type.Optional(Type.Array(Type.String(), { description: "whatsapp: one per automation or campaign of the company whose template does not map to an approved template of the catalogue (such sources are refused when changed; docs/whatsapp.md); [] when all map" })),
}), { company_id: 12, channel: { provider: 'webhook', url: 'https://hooks.acme-shoes.example/cms/messages' }, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw7NBHv1y5Tzk=' });

/** The answer shape of a company (secrets never included); `whatsapp` adds the channel's details. */
function view(c: CompanyRow, whatsapp?: WhatsappChannelView | null): Static<typeof Company> {
  return {
    company_id: c.company_id,
    name: c.name,
    subscription_active: c.subscription_active,
    default_country: c.default_country,
    delivery_hours: c.delivery_hours,
    connector: c.connector,
    channel: whatsapp ? { ...c.channel, ...whatsapp } : c.channel,
    opt_out_keywords: c.opt_out_keywords,
    opt_in_keywords: c.opt_in_keywords,
    frequency_cap: c.frequency_cap,
    created_at: iso(c.created_at),
  };
}

/** The rules the schema cannot say: a supported region, an IANA time zone (422 at the field). */
function checkInput(input: CompanyInput): void {
  if (input.default_country !== undefined && !isSupportedCountry(input.default_country)) {
    throw invalidInput(['body', 'default_country'], `default_country ${input.default_country} is not a supported ISO 3166-1 alpha-2 region`, 'value_error', input.default_country);
  }
  const cap = input.frequency_cap === undefined ? undefined : frequencyCapProblem(input.frequency_cap);
  if (cap) throw invalidInput(['body', 'frequency_cap', cap.field], cap.msg, 'value_error', input.frequency_cap?.[cap.field]);
  const tz = input.delivery_hours?.timezone;
  if (tz !== undefined && !isIanaTimeZone(tz)) {
    throw invalidInput(['body', 'delivery_hours', 'timezone'], `delivery_hours.timezone ${tz} is not an IANA timezone`, 'value_error', tz);
  }
}

const companyParams = idParams('company_id', 'the company', 12);
const missingName = { type: 'missing', loc: ['body', 'name'], msg: 'Field required' };
const badCountry = { type: 'value_error', loc: ['body', 'default_country'], msg: 'default_country XX is not a supported ISO 3166-1 alpha-2 region', input: 'XX' };
const badCompanyId = { type: 'type', loc: ['path', 'company_id'], msg: 'must be integer' };
const companyNotFound = notFound('Company not found');
const webhookUrl = 'https://hooks.acme-shoes.example/cms/messages';

/** Registers the routes of the module comment. */
export function registerCompanyRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const tags = ['operator: companies'];
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, [DeliveryHours, FrequencyCap, Connector, ChannelView, Company, ConnectorAnswer, ChannelAnswer]);
  const companyLimits: CompanyRateLimits = {
    async resetCompany(companyId) {
      for (const rule of Object.values(RULES)) await deps.rateLimiter.reset(rateLimitKey(companyId, rule));
    },
  };
  const example = exampleOf(Company);

  r.post('/admin/companies', {
    schema: {
      tags, operationId: 'create_company', summary: 'Create a company',
      body: Type.Object({
        name: companyProps.name,
        subscription_active: Type.Optional(companyProps.subscription_active),
        default_country: Type.Optional(companyProps.default_country),
        delivery_hours: Type.Optional(companyProps.delivery_hours),
        opt_out_keywords: Type.Optional(companyProps.opt_out_keywords),
        opt_in_keywords: Type.Optional(companyProps.opt_in_keywords),
        frequency_cap: Type.Optional(companyProps.frequency_cap),
      }, { examples: [{ name: 'Acme Shoes', subscription_active: true, default_country: 'DE', delivery_hours: { start: '09:00', end: '20:00', timezone: 'Europe/Berlin' } }] }),
      response: {
        201: ok('The new company (channel outbox, connector disconnected)', ref(Company), example),
        ...adminErrors,
        422: invalid(missingName),
      },
    },
  }, async (request, reply) => {
    checkInput(request.body);
    const company = await createCompany(db, OPERATOR, request.body); // audited as company.create
    return reply.code(201).send(view(company));
  });

  r.get('/admin/companies', {
    schema: {
      tags, operationId: 'list_companies', summary: 'List companies (newest first, at most 1000)',
      response: {
        200: ok('The companies', Type.Object({ companies: Type.Array(ref(Company)) }), { companies: [example] }),
        ...adminErrors,
      },
    },
  }, async () => ({ companies: (await listCompanies(db)).map((c) => view(c)) }));

  r.get('/admin/companies/:company_id', {
    schema: {
      tags, operationId: 'get_company', summary: 'Read a company', params: companyParams,
      response: { 200: ok('The company', ref(Company), example), ...adminErrors, 404: companyNotFound, 422: invalid(badCompanyId) },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    return view(company, await whatsappChannelView(db, company.company_id, deps.clock.now()));
  });

  r.patch('/admin/companies/:company_id', {
    schema: {
      tags, operationId: 'update_company', summary: 'Change a company (only the fields given)', params: companyParams,
      body: Type.Partial(Type.Object(companyProps), { examples: [{ subscription_active: false, opt_out_keywords: ['STOP', 'ABMELDEN'] }] }),
      response: { 200: ok('The company as changed', ref(Company), example), ...adminErrors, 404: companyNotFound, 422: invalid(badCountry) },
    },
  }, async (request) => {
    checkInput(request.body);
    const company = await changeCompany(db, deps.auth, OPERATOR, request.params.company_id, request.body); // audited as company.update
    return view(company);
  });

  r.delete('/admin/companies/:company_id/rate-limits', {
    schema: {
      tags, operationId: 'reset_rate_limits', summary: "Reset a company's rate-limit windows (all four operations)", params: companyParams,
      response: { 204: noContent('The windows are empty: the next request of each operation is admitted'), ...adminErrors, 404: companyNotFound, 422: invalid(badCompanyId) },
    },
  }, async (request, reply) => {
    await resetRateLimits(db, companyLimits, OPERATOR, request.params.company_id); // audited as rate_limits.reset
    return reply.code(204).send();
  });

  r.put('/admin/companies/:company_id/connector', {
    schema: {
      tags, operationId: 'set_connector', summary: 'Connect or disconnect the push-messaging connector', params: companyParams,
      body: Type.Object({
        connected: Type.Boolean(),
        provider: Type.Optional(Type.String({ maxLength: 64, description: 'the push provider (kept only while connected)' })),
      }, { examples: [{ connected: true, provider: 'pushy' }] }),
      response: {
        200: ok('The connector as set', ref(ConnectorAnswer), exampleOf(ConnectorAnswer)),
        ...adminErrors, 404: companyNotFound,
        422: invalid({ type: 'missing', loc: ['body', 'connected'], msg: 'Field required' }),
      },
    },
  }, async (request) => {
    const company = await setConnector(db, deps.auth, OPERATOR, request.params.company_id, request.body.connected, request.body.provider ?? null); // audited as connector.set
    return { company_id: company.company_id, connector: company.connector };
  });

  r.put('/admin/companies/:company_id/channel', {
    schema: {
      tags, operationId: 'set_channel', params: companyParams,
      summary: 'Choose the delivery channel (provider) of a company; secrets are stored encrypted and never echoed (a generated webhook secret is returned once)',
      body: Type.Object({
        provider: Type.Union([Type.Literal('outbox'), Type.Literal('webhook'), Type.Literal('whatsapp')]),
        url: Type.Optional(Type.String({ pattern: '^https?://\\S+$', maxLength: 2048, description: 'webhook (required): where messages are POSTed; a private or loopback address only with PROVIDER_ALLOWED_HOSTS' })),
        secret: Type.Optional(Type.String({ minLength: 16, maxLength: 512, description: 'webhook: `whsec_` + base64 (Standard Webhooks; the decoded bytes are the HMAC key) or any other text (its UTF-8 bytes are the key, never base64-decoded); without one a `whsec_` secret is generated and answered once' })),
        phone_number_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,32}$', description: 'whatsapp (required): the sending number\'s id' })),
        access_token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'whatsapp (required): a Graph API token' })),
        api_base_url: Type.Optional(Type.String({ pattern: '^https?://\\S+$', maxLength: 2048, description: 'whatsapp: the Graph API base (default https://graph.facebook.com/v21.0)' })),
        app_secret: Type.Optional(Type.String({ minLength: 8, maxLength: 512, description: "whatsapp: the Meta app's secret; verifies X-Hub-Signature-256 of POST /webhooks/whatsapp" })),
        verify_token: Type.Optional(Type.String({ minLength: 8, maxLength: 512, description: 'whatsapp: the verify token of the GET /webhooks/whatsapp handshake' })),
        waba_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,32}$', description: 'whatsapp: the WhatsApp Business Account that owns the number (its templates are synced from there)' })),
        throughput_per_second: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: `whatsapp: the number's Cloud API throughput (default ${DEFAULT_THROUGHPUT_PER_SECOND})` })),
        messaging_limit: Type.Optional(Type.Unsafe<250 | 2000 | 10000 | 100000 | null>({ ...messagingLimit, description: `whatsapp: new people per moving 24 h: 250, 2000, 10000, 100000 or null for unlimited (default ${DEFAULT_MESSAGING_LIMIT})` })),
      }, {
        description: 'outbox: no other field; webhook: url and secret (optional: without one a whsec_ secret is generated and returned once in `secret`); whatsapp: phone_number_id, access_token, api_base_url (optional), app_secret and verify_token (optional; needed for webhooks in, docs/whatsapp.md), waba_id, throughput_per_second and messaging_limit (optional)',
        examples: [{ provider: 'webhook', url: webhookUrl }],
      }),
      response: {
        200: ok('The channel as stored, without secrets; `secret` only when one was generated', ref(ChannelAnswer), exampleOf(ChannelAnswer)),
        ...adminErrors, 404: companyNotFound,
        409: conflict('phone_number_id is the WhatsApp channel of another company', 'phone_number_id 106540352242922 is already the WhatsApp channel of another company'),
        422: invalid({ type: 'value_error', loc: ['body', 'url'], msg: 'url resolves to a private or loopback address (10.0.0.7); allow it with PROVIDER_ALLOWED_HOSTS' }),
      },
    },
  }, async (request) => {
    const b = request.body;
    const needed = b.provider === 'webhook' ? ['url'] as const : b.provider === 'whatsapp' ? ['phone_number_id', 'access_token'] as const : [];
    const missing = needed.filter((f) => b[f] === undefined);
    if (missing.length) throw new AdminValidationError(missing.map((f) => ({ type: 'missing', loc: ['body', f], msg: 'Field required' })));
    for (const field of ['url', 'api_base_url'] as const) {
      const value = b[field];
      if (value === undefined) continue;
      const problem = await checkProviderUrl(value, deps.addressPolicy);
      if (problem) throw invalidInput(['body', field], `${field} ${problem}`, 'value_error', value);
    }
    let stored: Record<string, unknown>;
    let shown: Static<typeof ChannelView>;
    let generated: string | undefined;
    if (b.provider === 'webhook') {
      const problem = b.secret === undefined ? undefined : webhookSecretProblem(b.secret);
      if (problem) throw invalidInput(['body', 'secret'], problem);
      // Without a secret, one is generated and returned once, in this answer only.
      const secret = b.secret ?? (generated = generateWebhookSecret());
      stored = { provider: 'webhook', url: b.url, secret_sealed: deps.sealSecret(secret) };
      shown = { provider: 'webhook', url: b.url };
    } else if (b.provider === 'whatsapp') {
      const base = b.api_base_url ?? 'https://graph.facebook.com/v21.0';
      const limits = { throughput_per_second: b.throughput_per_second ?? DEFAULT_THROUGHPUT_PER_SECOND, messaging_limit: b.messaging_limit === undefined ? DEFAULT_MESSAGING_LIMIT : b.messaging_limit };
      stored = { provider: 'whatsapp', phone_number_id: b.phone_number_id, api_base_url: base, access_token_sealed: deps.sealSecret(b.access_token!), ...(b.waba_id !== undefined ? { waba_id: b.waba_id } : {}), ...limits };
      // Webhooks in (docs/decisions.md#9-whatsapp-webhooks-in): both sealed; the verify token's SHA-256 lets the GET
      // handshake find its channel without opening every channel's secrets.
      if (b.app_secret !== undefined) stored.app_secret_sealed = deps.sealSecret(b.app_secret);
      if (b.verify_token !== undefined) {
        stored.verify_token_sealed = deps.sealSecret(b.verify_token);
        stored.verify_token_sha256 = verifyTokenDigest(b.verify_token);
      }
      shown = { provider: 'whatsapp', phone_number_id: b.phone_number_id, api_base_url: base, waba_id: b.waba_id ?? null, ...limits };
    } else {
      stored = { provider: 'outbox' };
      shown = { provider: 'outbox' };
    }
    const company = await changeChannel(db, OPERATOR, request.params.company_id, { stored, shown }); // audited as channel.set (without secrets)
    const warnings = b.provider === 'whatsapp' ? { warnings: await unmappedSourceWarnings(db, company.company_id) } : {};
    return { company_id: company.company_id, channel: shown, ...(generated ? { secret: generated } : {}), ...warnings };
  });

  r.post('/admin/companies/:company_id/channel/resume', {
    schema: {
      tags, operationId: 'resume_channel', params: companyParams,
      summary: 'Set a paused WhatsApp channel active (its waiting messages are tried again); an active channel stays as it is',
      response: {
        200: ok('The company, channel active', ref(Company), example),
        ...adminErrors, 404: companyNotFound,
        409: conflict('The channel is not WhatsApp', "the company's channel is not WhatsApp: there is nothing to resume"),
        422: invalid(badCompanyId),
      },
    },
  }, async (request) => {
    const companyId = request.params.company_id;
    await resumeChannel(db, OPERATOR, companyId, deps.clock.now()); // audited as channel.resume
    const company = await getCompany(db, companyId);
    return view(company, await whatsappChannelView(db, companyId, deps.clock.now()));
  });
}
