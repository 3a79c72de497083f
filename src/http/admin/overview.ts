/**
 * Operator API: a company's overview, the numbers of the console's Overview page
 * (src/console/queries/overview.ts): messages per local day by status over the last 30 days (the
 * company's delivery-hours time zone, UTC without), the top failure reasons with plain-words labels,
 * and the opt-out rate. As of the service's clock. Read-only, not audit-logged.
 *
 * | route | answers |
 * |---|---|
 * | GET /admin/companies/{company_id}/overview | 200 `CompanyOverview`; 401; 404 company; 422 |
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { getCompany } from '../../domain/companies.ts';
import { companyOverview, OVERVIEW_DAYS, TOP_REASONS } from '../../console/queries/overview.ts';
import type { AppDeps } from '../deps.ts';
import { addComponents, adminErrors, component, exampleOf, idParams, invalid, notFound, ok, ref } from './components.ts';

const count = (description: string) => Type.Integer({ minimum: 0, description });
const statusCounts = {
  pending: count('waiting: not handed to the provider yet, held for delivery hours, or waiting for a retry'),
  sent: count('handed to the provider, no receipt yet'),
  delivered: count('delivered to the phone (receipt)'),
  read: count('read (receipt)'),
  failed: count('failed: the provider refused it, or every retry failed'),
  skipped: count('not sent: opted out, invalid number, or cancelled'),
  total: count('all of the above'),
};
const day = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'a local calendar day, YYYY-MM-DD' });

const zero = { pending: 0, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 0, total: 0 };

/** The answer: see the module comment. */
export const CompanyOverview = component('CompanyOverview', Type.Object({
  timezone: Type.String({ description: "the IANA time zone the days are counted in: the company's delivery hours', or UTC" }),
  from: Type.String({ ...day, description: 'first day of the period (included)' }),
  to: Type.String({ ...day, description: "last day of the period (included): today in the company's time zone" }),
  days: Type.Array(Type.Object({ date: day, ...statusCounts }), {
    minItems: OVERVIEW_DAYS, maxItems: OVERVIEW_DAYS,
    description: `one entry per day of the period, oldest first (${OVERVIEW_DAYS} days): the messages of the batches accepted that day, by their status now`,
  }),
  totals: Type.Object(statusCounts, { description: 'the sums over the period' }),
  failure_reasons: Type.Array(Type.Object({
    status: Type.Union([Type.Literal('failed'), Type.Literal('skipped')]),
    code: Type.String({ description: "failed: the provider's error code (WhatsApp's numeric code, a webhook's HTTP status) or, without one, the error text; skipped: the reason (`opted_out`, `invalid_phone`, `cancelled`)" }),
    example: Type.Union([Type.String(), Type.Null()], { description: 'an error text seen with this code (null for skips)' }),
    label: Type.String({ description: 'what it means, in plain words' }),
    count: count('messages of the period with this reason'),
  }), { maxItems: TOP_REASONS, description: `the most frequent reasons of the period, most frequent first (at most ${TOP_REASONS})` }),
  opt_out: Type.Object({
    contacts: count('contacts of the company now'),
    opted_out: count('contacts opted out of campaigns now'),
    rate: Type.Number({ minimum: 0, maximum: 1, description: 'opted_out / contacts (0 without contacts)' }),
    opted_out_in_period: count('contacts who opted out within the period and still are'),
  }),
}), {
  timezone: 'Europe/Berlin', from: '2026-02-09', to: '2026-03-10',
  // 30 days, 2026-02-09 to 2026-03-10: quiet until the last day's campaign.
  days: [...Array.from({ length: 29 }, (_, i) => ({ date: new Date(Date.UTC(2026, 1, 9 + i)).toISOString().slice(0, 10), ...zero })),
    { date: '2026-03-10', pending: 3, sent: 120, delivered: 2310, read: 4122, failed: 41, skipped: 96, total: 6692 }],
  totals: { pending: 3, sent: 120, delivered: 2310, read: 4122, failed: 41, skipped: 96, total: 6692 },
  failure_reasons: [
    { status: 'skipped', code: 'opted_out', example: null, label: 'The contact opted out of campaigns', count: 96 },
    { status: 'failed', code: '131026', example: 'Message undeliverable (HTTP 400)', label: 'Undeliverable: the number may not use WhatsApp, or has an old app version', count: 41 },
  ],
  opt_out: { contacts: 10250, opted_out: 311, rate: 0.0303, opted_out_in_period: 57 },
});

/** Registers the route of the module comment. */
export function registerOverviewRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, [CompanyOverview]);

  r.get('/admin/companies/:company_id/overview', {
    schema: {
      tags: ['operator: companies'], operationId: 'get_company_overview',
      summary: 'Messages per day by status (last 30 days), top failure reasons and opt-out rate of a company',
      params: idParams('company_id', 'the company', 12),
      response: {
        200: ok("The company's overview as of now", ref(CompanyOverview), exampleOf(CompanyOverview)),
        ...adminErrors,
        404: notFound('Company not found'),
        422: invalid({ type: 'type', loc: ['path', 'company_id'], msg: 'must be integer' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    return companyOverview(db, company.company_id, company.delivery_hours?.timezone ?? null, new Date(deps.clock.now()));
  });
}
