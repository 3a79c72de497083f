/**
 * Message templates (operator-api.md `template`): header (none | text | image | video), Liquid body,
 * up to two URL buttons, optional WhatsApp Cloud API mapping. Validated when an operator stores one.
 */
import { Liquid } from 'liquidjs';

export interface Template {
  header: { type: 'none' } | { type: 'text'; text: string } | { type: 'image' | 'video'; url: string };
  body: string;
  buttons: { type: 'url'; text: string; url: string }[];
  whatsapp?: { name: string; language: string };
}

const URL_RE = /^https?:\/\/\S+$/;
const liquid = new Liquid();

/** Returns a list of problems (empty when the template is usable), including Liquid syntax errors. */
export function checkTemplate(t: Template): string[] {
  const problems: string[] = [];
  if ((t.header.type === 'image' || t.header.type === 'video') && !URL_RE.test(t.header.url)) {
    problems.push('header.url must be an http(s) URL');
  }
  if (t.buttons.length > 2) problems.push('at most two URL buttons');
  t.buttons.forEach((b, i) => { if (!URL_RE.test(b.url)) problems.push(`buttons[${i}].url must be an http(s) URL`); });
  for (const [where, text] of [['body', t.body], ['header.text', t.header.type === 'text' ? t.header.text : '']] as const) {
    try {
      liquid.parse(text);
    } catch (err) {
      problems.push(`${where} is not a valid Liquid template: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return problems;
}

/** JSON Schema of a template (OpenAPI and request validation of the operator API). */
export const templateSchema = {
  type: 'object',
  required: ['body'],
  additionalProperties: false,
  properties: {
    header: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { type: 'string', enum: ['none', 'text', 'image', 'video'] },
        text: { type: 'string', maxLength: 1024 },
        url: { type: 'string', maxLength: 2048 },
      },
    },
    body: { type: 'string', minLength: 1, maxLength: 4096 },
    buttons: {
      type: 'array',
      maxItems: 2,
      items: {
        type: 'object',
        required: ['text', 'url'],
        properties: {
          type: { type: 'string', enum: ['url'] },
          text: { type: 'string', minLength: 1, maxLength: 25 },
          url: { type: 'string', maxLength: 2048 },
        },
      },
    },
    whatsapp: {
      type: 'object',
      required: ['name', 'language'],
      properties: { name: { type: 'string', minLength: 1 }, language: { type: 'string', minLength: 2 } },
    },
  },
} as const;

/** Fills defaults: header `none`, no buttons, button type `url`. */
export function normaliseTemplate(raw: Partial<Template> & { body: string }): Template {
  const header = (raw.header ?? { type: 'none' }) as Template['header'];
  return {
    header,
    body: raw.body,
    buttons: (raw.buttons ?? []).map((b) => ({ type: 'url' as const, text: b.text, url: b.url })),
    ...(raw.whatsapp ? { whatsapp: raw.whatsapp } : {}),
  };
}
