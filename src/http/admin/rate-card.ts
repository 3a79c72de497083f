/**
 * Operator API: the WhatsApp rate card (docs/whatsapp.md "Pricing and the rate card";
 * src/domain/rate-card.ts).
 *
 * | route | answers |
 * |---|---|
 * | PUT /admin/whatsapp/rate-card (JSON `{rows}` or text/csv) | 200 `RateCard` (the stored card); 401; 415; 422 a bad row (`loc` holds its index) |
 * | GET /admin/whatsapp/rate-card | 200 `RateCard` (no rows before the first load); 401 |
 *
 * A 422 names each bad row: `["body", "rows", i, field]` for JSON, `["body", i, column]` for CSV,
 * where `i` is the row's 0-based index (CSV: the first row after the header is 0); a CSV that cannot
 * be read (no or wrong header) is `["body"]`. The PUT is the domain command `setRateCard`
 * (audit `whatsapp.rate_card.set`), run as the operator.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OPERATOR } from '../../domain/actor.ts';
import { getRateCard, RateCardError, readRateCardCsv, setRateCard, type RateCard as StoredCard, type RateInput } from '../../domain/rate-card.ts';
import type { AppDeps } from '../deps.ts';
import { AdminValidationError } from './errors.ts';
import { addComponents, adminErrors, component, exampleOf, invalid, iso, ok, ref, TIME_EXAMPLE } from './components.ts';

/** The largest rate card body (JSON or CSV) accepted: Meta's card has a few hundred rows. */
const MAX_CARD_BYTES = 1024 * 1024;

const category = Type.Union([Type.Literal('MARKETING'), Type.Literal('UTILITY'), Type.Literal('AUTHENTICATION')], { description: 'the template category' });
const rowFields = {
  country: Type.String({ pattern: '^[A-Z]{2}$', description: "the recipient's country, ISO 3166-1 alpha-2 (a country libphonenumber-js knows)" }),
  category,
  price: Type.Number({ minimum: 0, description: 'the price of one delivered message, in `currency` (a decimal ≥ 0, at most 10 decimals)' }),
  currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217; every row of a card has the same currency' }),
};

/** One rate of the card. */
export const Rate = component('Rate', Type.Object(rowFields), { country: 'DE', category: 'MARKETING', price: 0.1365, currency: 'EUR' });

/** The stored card. */
export const RateCard = component('RateCard', Type.Object({
  rows: Type.Array(ref(Rate), { description: 'by country, then category' }),
  currency: Type.Union([Type.String(), Type.Null()], { description: "the card's currency; null when the card is empty" }),
  updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when the card was last replaced; null before the first load' }),
}), {
  rows: [
    { country: 'DE', category: 'AUTHENTICATION', price: 0.0768, currency: 'EUR' },
    { country: 'DE', category: 'MARKETING', price: 0.1365, currency: 'EUR' },
    { country: 'DE', category: 'UTILITY', price: 0.0456, currency: 'EUR' },
  ],
  currency: 'EUR',
  updated_at: TIME_EXAMPLE,
});

const JsonBody = Type.Object({
  rows: Type.Array(Type.Object(rowFields, { additionalProperties: false }), { maxItems: 10_000, description: 'the whole card (replaces the stored one); an empty list empties it' }),
}, { additionalProperties: false });

const CSV_EXAMPLE = 'country,category,price,currency\nDE,MARKETING,0.1365,EUR\nDE,UTILITY,0.0456,EUR\nDE,AUTHENTICATION,0.0768,EUR\n';

/** The answer shape of a stored card. */
export function rateCardJson(card: StoredCard): Static<typeof RateCard> {
  return { rows: card.rows, currency: card.currency, updated_at: card.updated_at === null ? null : iso(card.updated_at) };
}

/** Registers the routes of the module comment. */
export function registerRateCardRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const tags = ['operator: whatsapp'];
  addComponents(app, [Rate, RateCard]);
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  // The CSV body needs a parser of its own: registered in a scope of its own (as contact-imports.ts).
  void app.register(async (scope) => {
    scope.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: MAX_CARD_BYTES }, (_req, body, done) => done(null, body));
    const s = scope.withTypeProvider<TypeBoxTypeProvider>();
    s.put('/admin/whatsapp/rate-card', {
      bodyLimit: MAX_CARD_BYTES,
      schema: {
        tags, operationId: 'set_whatsapp_rate_card',
        summary: "Replace the WhatsApp rate card (Meta's price per delivered template message by country and category)",
        description: 'Body: JSON `{"rows": [{country, category, price, currency}]}`, or `Content-Type: text/csv` with a header row naming '
          + 'the columns `country`, `category`, `price`, `currency` (delimiter `,` or `;`). The whole card is replaced in one transaction; '
          + 'every row must have the same currency, and a (country, category) pair may appear once. A bad row is 422 whose `loc` holds the '
          + "row's 0-based index: `[\"body\", \"rows\", i, field]` for JSON, `[\"body\", i, column]` for CSV (the first row after the header is 0).",
        consumes: ['application/json', 'text/csv'],
        body: {
          content: {
            'application/json': { schema: { ...JsonBody, examples: [{ rows: exampleOf(RateCard).rows }] } },
            'text/csv': { schema: Type.String({ description: 'the CSV file (UTF-8)', examples: [CSV_EXAMPLE] }) },
          },
        } as unknown as typeof JsonBody,
        response: {
          200: ok('The stored card', ref(RateCard), exampleOf(RateCard)),
          ...adminErrors,
          422: invalid({ type: 'value_error', loc: ['body', 'rows', 3, 'country'], msg: 'XX is not a country with a calling code' }),
        },
      },
    }, async (request) => {
      const csv = typeof request.body === 'string';
      let rows: RateInput[];
      try {
        rows = csv ? readRateCardCsv(request.body as unknown as string) : request.body.rows;
        return rateCardJson(await setRateCard(db, OPERATOR, rows, deps.clock.now()));
      } catch (err) {
        if (!(err instanceof RateCardError)) throw err;
        throw new AdminValidationError(err.problems.map((p) => ({
          type: 'value_error',
          loc: p.index === undefined ? ['body'] : csv ? ['body', p.index, p.field ?? ''] : ['body', 'rows', p.index, p.field ?? ''],
          msg: p.message,
        })));
      }
    });
  });

  r.get('/admin/whatsapp/rate-card', {
    schema: {
      tags, operationId: 'get_whatsapp_rate_card', summary: 'The WhatsApp rate card (no rows before the first load)',
      response: { 200: ok('The card', ref(RateCard), exampleOf(RateCard)), ...adminErrors },
    },
  }, async () => rateCardJson(await getRateCard(db)));
}
