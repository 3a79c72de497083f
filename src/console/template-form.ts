/**
 * The automation/campaign editor's form turned into a template (docs/console.md "Editor and live
 * preview"): the same function on the server, when a form is saved or previewed, and in the browser,
 * where the live preview runs it on the fields as they are typed (`npm run gen:browser` copies this
 * module, types stripped, to src/console/assets/shared/template-form.js; a test keeps the copy equal).
 * So it must stay free of Node-only APIs, and its only run-time import is src/domain/templates.ts.
 *
 * Texts get LF line endings first (`normaliseLineEndings`: a textarea submits CRLF), then the operator
 * API's rules apply: the lengths of `templateSchema`, then `checkTemplate` (Liquid parsed by the
 * pipeline's engine). Problems come back by field, with the messages the editor shows beside them.
 */
import { checkTemplate, normaliseLineEndings, type Template } from '../domain/templates.ts';
import type { FieldErrors, SourceForm } from './views/automations.ts';

/** The editor's fields (SourceForm), as they are named in the form. */
export const FORM_FIELDS: readonly (keyof SourceForm)[] = [
  'name', 'type', 'header_type', 'header_text', 'header_url', 'body', 'b1_text', 'b1_url', 'b2_text', 'b2_url',
  'wa_name', 'wa_language', 'wa_body_parameters', 'wa_header_parameters',
  'editor_preview_phone', 'editor_preview_first_name', 'editor_preview_variables',
];

/** The name and language of a WhatsApp template select's value (`name|language`); both '' for ''. */
export function parseTemplateChoice(value: string): { name: string; language: string } {
  const at = value.lastIndexOf('|');
  return at < 0 ? { name: value.trim(), language: '' } : { name: value.slice(0, at).trim(), language: value.slice(at + 1).trim() };
}

/**
 * The editor's fields from `value` (a field's text, or undefined when the form has no such field: a
 * request body on the server, the form's elements in the browser). A WhatsApp company's editor picks
 * the mapping in one select (`wa_template`, `name|language`) instead of the four mapping fields.
 */
export function readSourceForm(value: (name: string) => string | undefined): SourceForm {
  const f = {} as SourceForm;
  for (const name of FORM_FIELDS) f[name] = value(name) ?? '';
  const choice = value('wa_template');
  if (choice !== undefined) {
    const { name, language } = parseTemplateChoice(choice);
    Object.assign(f, { wa_name: name, wa_language: language, wa_body_parameters: '', wa_header_parameters: '' });
  }
  return f;
}

/** Length in characters (code points), as the operator API's schema counts. */
const len = (s: string) => [...s].length;

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * The template of the form's template fields (header, body, buttons, WhatsApp mapping; not name or
 * type): `template` when they are valid, else `errors` by field (and no template).
 */
export function templateOfForm(f: SourceForm): { template?: Template; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const body = normaliseLineEndings(f.body);
  if (body === '' || len(body) > 4096) errors.body = 'Enter a body of 1 to 4096 characters.';
  let header: Template['header'] = { type: 'none' };
  if (f.header_type === 'text') {
    const text = normaliseLineEndings(f.header_text);
    if (len(text) > 1024) errors.header_text = 'At most 1024 characters.';
    header = { type: 'text', text };
  } else if (f.header_type === 'image' || f.header_type === 'video') {
    header = { type: f.header_type, url: f.header_url.trim() };
  } else if (f.header_type !== 'none') errors.header_type = 'Choose none, text, image or video.';
  const buttons: Template['buttons'] = [];
  for (const i of [1, 2] as const) {
    const text = normaliseLineEndings(f[`b${i}_text`].trim());
    const url = f[`b${i}_url`].trim();
    if (text === '' && url === '') continue;
    if (text === '' || len(text) > 25) errors[`b${i}_text`] = 'A button needs a text of 1 to 25 characters.';
    buttons.push({ type: 'url', text, url });
  }
  let whatsapp: Template['whatsapp'];
  const waName = f.wa_name.trim(), waLang = f.wa_language.trim();
  if (waName || waLang || f.wa_body_parameters.trim() || f.wa_header_parameters.trim()) {
    if (waName === '') errors.wa_name = 'Enter the approved template name (or clear the mapping).';
    if (len(waLang) < 2) errors.wa_language = 'Enter the template language, e.g. en_US.';
    whatsapp = { name: waName, language: waLang };
    const count = (text: string, max: number, key: 'wa_body_parameters' | 'wa_header_parameters') => {
      if (text.trim() === '') return undefined;
      if (!/^[0-9]{1,3}$/.test(text.trim()) || Number(text) > max) { errors[key] = `A whole number from 0 to ${max}.`; return undefined; }
      return Number(text);
    };
    const bp = count(f.wa_body_parameters, 100, 'wa_body_parameters');
    const hp = count(f.wa_header_parameters, 1, 'wa_header_parameters');
    if (bp !== undefined) whatsapp.body_parameters = bp;
    if (hp !== undefined) whatsapp.header_parameters = hp;
  }
  const template: Template = { header, body, buttons, ...(whatsapp ? { whatsapp } : {}) };
  if (Object.keys(errors).length) return { errors };
  for (const p of checkTemplate(template).problems) {
    const [a, b, c] = p.loc;
    const key: keyof FieldErrors = a === 'body' ? 'body' : a === 'header' ? (b === 'text' ? 'header_text' : 'header_url')
      : a === 'buttons' && b !== undefined && c === 'url' ? (b === '0' ? 'b1_url' : 'b2_url') : 'b1_text';
    errors[key] = errors[key] ? `${errors[key]} ${p.msg}` : capitalise(p.msg) + '.';
  }
  return Object.keys(errors).length ? { errors } : { template, errors };
}

/**
 * The template of a whole form of `kind` (name and, for automations, type checked too): `template`
 * when everything is valid, else every problem by field.
 */
export function formTemplate(kind: 'automation' | 'campaign', f: SourceForm): { template?: Template; errors: FieldErrors } {
  const errors: FieldErrors = {};
  if (f.name.trim() === '' || len(f.name) > 255) errors.name = 'Enter a name of 1 to 255 characters.';
  if (kind === 'automation' && (f.type.trim() === '' || len(f.type) > 32)) errors.type = 'Enter a type of 1 to 32 characters (api for operation 4.3).';
  const t = templateOfForm(f);
  Object.assign(errors, t.errors);
  return Object.keys(errors).length ? { errors } : { template: t.template, errors };
}
