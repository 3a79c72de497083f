/**
 * Message templates (docs/operator-api.md `template`): header (none | text | image | video), Liquid body,
 * up to two URL buttons, optional WhatsApp Cloud API mapping. Checked when an operator stores one
 *: the Liquid of the body and of a text header is parsed by the same engine the pipeline
 * renders with (src/domain/render.ts: strict filters, no files), so a syntax error, an unknown tag or
 * an unknown filter (`{{ first_name | shout }}`) is refused with its line and column instead of failing
 * every message later; when the mapping gives `body_parameters` / `header_parameters` (the approved
 * WhatsApp template's parameter counts), the number of top-level `{{ }}` outputs must match.
 */
import { checkLiquid } from './render.ts';

export interface Template {
  header: { type: 'none' } | { type: 'text'; text: string } | { type: 'image' | 'video'; url: string };
  body: string;
  buttons: { type: 'url'; text: string; url: string }[];
  whatsapp?: { name: string; language: string; body_parameters?: number; header_parameters?: number };
}

/** One problem of a template: where (`loc` under the template) and what (`msg`, with line and column). */
export interface TemplateProblem {
  loc: string[];
  msg: string;
}

/** The result of checking a template: problems (refuse it) and the scope names its Liquid reads. */
export interface TemplateCheck {
  problems: TemplateProblem[];
  /** Names read by the body and a text header (see `checkLiquid`), sorted. */
  reads: string[];
}

const URL_RE = /^https?:\/\/\S+$/;

/** Names every contact has (docs/decisions.md#6-contacts-personalisation-sending): never warned about. */
export const ALWAYS_KNOWN = new Set(['first_name', 'last_name', 'phone']);

/** Checks `t` (see the module comment); never throws. */
export function checkTemplate(t: Template): TemplateCheck {
  const problems: TemplateProblem[] = [];
  if ((t.header.type === 'image' || t.header.type === 'video') && !URL_RE.test(t.header.url)) {
    problems.push({ loc: ['header', 'url'], msg: 'must be an http(s) URL' });
  }
  if (t.buttons.length > 2) problems.push({ loc: ['buttons'], msg: 'at most two URL buttons' });
  t.buttons.forEach((b, i) => { if (!URL_RE.test(b.url)) problems.push({ loc: ['buttons', String(i), 'url'], msg: 'must be an http(s) URL' }); });
  const reads = new Set<string>();
  const parts: [string[], string, number | undefined][] = [[['body'], t.body, t.whatsapp?.body_parameters]];
  if (t.header.type === 'text') parts.push([['header', 'text'], t.header.text, t.whatsapp?.header_parameters]);
  for (const [loc, text, expected] of parts) {
    const check = checkLiquid(text);
    if (check.problem) {
      const at = check.problem.line !== undefined ? ` (line ${check.problem.line}, column ${check.problem.column})` : '';
      problems.push({ loc, msg: `not a valid Liquid template: ${check.problem.message}${at}` });
      continue;
    }
    for (const name of check.reads) reads.add(name);
    if (t.whatsapp && expected !== undefined && check.outputs !== expected) {
      problems.push({ loc, msg: `the WhatsApp template ${t.whatsapp.name} takes ${expected} parameter${expected === 1 ? '' : 's'} here, but the text has ${check.outputs} top-level {{ }} output${check.outputs === 1 ? '' : 's'}` });
    }
  }
  return { problems, reads: [...reads].sort() };
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
      properties: {
        name: { type: 'string', minLength: 1 },
        language: { type: 'string', minLength: 2 },
        body_parameters: { type: 'integer', minimum: 0, maximum: 100, description: 'parameters of the approved template body: the body must have this many top-level {{ }} outputs' },
        header_parameters: { type: 'integer', minimum: 0, maximum: 1, description: 'parameters of the approved text header: the header text must have this many top-level {{ }} outputs' },
      },
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
