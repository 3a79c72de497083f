/** JSON Schemas shared by the operator API routes (operator-api.md). */
import { HHMM_PATTERN } from '../../local-time.ts';

export const idParam = (name: string) => ({
  type: 'object', required: [name], properties: { [name]: { type: 'integer', minimum: 1, maximum: 2147483647 } },
}) as const;

export const deliveryHoursSchema = {
  anyOf: [
    { type: 'null' },
    {
      type: 'object',
      required: ['start', 'end', 'timezone'],
      additionalProperties: false,
      properties: {
        start: { type: 'string', pattern: HHMM_PATTERN },
        end: { type: 'string', pattern: HHMM_PATTERN },
        timezone: { type: 'string', minLength: 1, maxLength: 64 },
      },
    },
  ],
} as const;

export const companyProps = {
  name: { type: 'string', minLength: 1, maxLength: 255 },
  subscription_active: { type: 'boolean' },
  default_country: { type: 'string', pattern: '^[A-Z]{2}$' },
  delivery_hours: deliveryHoursSchema,
  opt_out_keywords: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 64 }, description: 'Inbound texts (trimmed, case-insensitive) that opt a contact out of campaigns' },
  opt_in_keywords: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 64 }, description: 'Inbound texts (trimmed, case-insensitive) that opt a contact back in' },
} as const;

export const detailResponse = {
  type: 'object', properties: { detail: { type: 'string' } },
} as const;
