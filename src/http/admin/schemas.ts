/**
 * Schemas shared by several operator API route files (docs/operator-api.md), as TypeBox (see components.ts
 * for how routes use them). `idParam` and `detailResponse` are the older plain forms, kept for route
 * files not yet written in the components.ts pattern; new code uses `idParams` and `notFound(...)`.
 */
import { Type } from 'typebox';
import { HHMM_PATTERN } from '../../local-time.ts';
import { CAP_MESSAGES_MAX, CAP_PER_PATTERN } from '../../domain/frequency-caps.ts';
import { component, idParams, ref } from './components.ts';

/** Path parameters `{ [name]: row id }` (alias of components.ts `idParams`). */
export const idParam = <K extends string>(name: K) => idParams(name);

/** A company's delivery hours: messages of campaigns leave only between start and end, local time. */
export const DeliveryHours = component('DeliveryHours', Type.Object({
  start: Type.String({ pattern: HHMM_PATTERN, description: 'HH:MM, 24-hour' }),
  end: Type.String({ pattern: HHMM_PATTERN, description: 'HH:MM, 24-hour; before start means the window runs over midnight' }),
  timezone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin' }),
}, { additionalProperties: false }), { start: '09:00', end: '20:00', timezone: 'Europe/Berlin' });

/** A company's frequency cap (docs/audience.md "Frequency caps"). */
export const FrequencyCap = component('FrequencyCap', Type.Object({
  messages: Type.Integer({ minimum: 1, maximum: CAP_MESSAGES_MAX, description: 'campaign messages a contact may get within `per`' }),
  per: Type.String({ pattern: CAP_PER_PATTERN, description: 'the window: a number and a unit (m, h or d), at most 366d', examples: ['7d'] }),
}, { additionalProperties: false }), { messages: 3, per: '7d' });

const keywords = (description: string, example: string[]) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50, description, examples: [example] });

/** The writable fields of a company (POST requires `name`; PATCH takes any of them). */
export const companyProps = {
  name: Type.String({ minLength: 1, maxLength: 255, examples: ['Acme Shoes'] }),
  subscription_active: Type.Boolean({ description: 'false: the public API refuses sends (400 no active subscription)' }),
  default_country: Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 region of national numbers (default DE)', examples: ['DE'] }),
  delivery_hours: Type.Union([ref(DeliveryHours), Type.Null()], { description: 'null: campaigns are delivered at any hour' }),
  opt_out_keywords: keywords('Inbound texts (trimmed, case-insensitive) that opt a contact out of campaigns', ['STOP', 'UNSUBSCRIBE']),
  opt_in_keywords: keywords('Inbound texts (trimmed, case-insensitive) that opt a contact back in', ['START']),
  frequency_cap: Type.Union([ref(FrequencyCap), Type.Null()], { description: "null (the default): no cap; else a campaign message to a contact who already got `messages` campaign messages (sent or further) within `per` ends skipped, reason `frequency_cap`" }),
};

/** `{"detail": "..."}` as a plain schema (older form; new routes use components.ts `notFound`/`conflict`). */
export const detailResponse = {
  type: 'object', properties: { detail: { type: 'string' } },
} as const;
