/**
 * Personalisation (docs/decisions.md#6-contacts-personalisation-sending; docs/operator-api.md `template` and `rendered`): turns a template, a
 * contact and the batch's overrides into the `rendered` message a provider delivers.
 *
 * - Liquid (liquidjs) sees `first_name`, `last_name`, `phone` (E.164), every stored variable by name,
 *   and the map itself as `variables` (so `variables.NAME` works too). The three contact fields win over
 *   variables of the same name. A missing variable renders empty.
 * - Variables are plain data: a `__proto__` key is kept as an own property (never assigned, which
 *   would set a prototype), and templates read own properties only, so `constructor` and other
 *   inherited members are invisible and no prototype is reached or touched.
 * - Templates cannot read files (`include`/`render` find nothing) and a render is bounded in time and
 *   memory; any error fails that one message (RenderError), never the batch.
 * - Header media: contact `image_url`/`video_url` > request `image_url`/`video_url` > the template's
 *   default url. The header keeps the template's type (an image header takes image URLs only): a
 *   WhatsApp template's header format is fixed when the template is approved.
 * - `url`/`url2` replace the destination of the template's first/second URL button.
 * - A template with a `whatsapp` mapping also yields `rendered.whatsapp`: the template name and
 *   language and the Cloud API parameters, i.e. the rendered value of each top-level `{{ ... }}` output
 *   of the header text and of the body, in order, and for each URL button whose destination was
 *   replaced, its dynamic part (the new URL minus the template URL when the latter is a prefix of it,
 *   else the whole new URL); a button left unchanged has no parameter (null).
 * - A WhatsApp parameter that renders empty or as white space only (Meta refuses it) is found by
 *   {@link emptyParameters}, which names the Liquid output and the variables it reads (docs/whatsapp.md
 *   "Empty parameters"): the fan-out skips such a message (`empty_parameter`), the editor names them.
 *
 * The same module renders the console editor's live preview in the browser (docs/console.md "Editor and
 * live preview"): `npm run gen:browser` writes it, with its types stripped by Node and `liquidjs`
 * pointed at liquidjs's browser build, to src/console/assets/shared/render.js (a test keeps the copy
 * equal). So it must stay free of Node-only APIs (no `node:` imports, Buffer or process), and its only
 * run-time import is `liquidjs`.
 */
import { analyzeSync, Liquid, Output, type Template as LiquidTemplate } from 'liquidjs';
import type { BatchKind } from '../db/schema.ts';
import type { BatchOverrides } from './batches.ts';
import type { Template } from './templates.ts';

/** What a provider is asked to deliver (docs/operator-api.md `rendered`). */
export interface Rendered {
  message_id: string;
  batch_id: string;
  company_id: number;
  kind: BatchKind;
  source_id: number;
  to: string;
  header: { type: 'none' } | { type: 'text'; text: string } | { type: 'image' | 'video'; url: string };
  body: string;
  buttons: { text: string; url: string }[];
  whatsapp?: WhatsAppParameters;
}

/** The WhatsApp Cloud API view of a rendered message (see the module comment). */
export interface WhatsAppParameters {
  name: string;
  language: string;
  header_parameters: string[];
  body_parameters: string[];
  button_parameters: (string | null)[];
}

/** The contact data a template sees. */
export interface RenderContact {
  phone: string;
  first_name: string | null;
  last_name: string | null;
  variables: Record<string, unknown> | null;
  image_url?: string | null;
  video_url?: string | null;
}

/** Thrown when a template does not render; the message fails with `message`. */
export class RenderError extends Error {}

/** Per-render bounds: a template that loops or allocates without end fails that message. */
const RENDER_LIMIT_MS = 1_000;
const MEMORY_LIMIT = 10_000_000;

const noFiles = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async (file: string): Promise<string> => { throw new Error(`templates cannot read files (${file})`); },
  readFileSync: (file: string): string => { throw new Error(`templates cannot read files (${file})`); },
  resolve: (_root: string, file: string) => file,
  contains: async () => false,
  containsSync: () => false,
  sep: '/',
};

const liquid = new Liquid({
  ownPropertyOnly: true,
  strictVariables: false,
  strictFilters: true,
  fs: noFiles,
  relativeReference: false,
  root: [],
  partials: [],
  layouts: [],
  renderLimit: RENDER_LIMIT_MS,
  memoryLimit: MEMORY_LIMIT,
});

/** A template parsed once for a whole batch. */
export interface CompiledTemplate {
  readonly template: Template;
  readonly body: LiquidTemplate[];
  readonly headerText: LiquidTemplate[] | undefined;
  /** Set when the template does not parse: every message of the batch fails with it. */
  readonly error: string | undefined;
  /**
   * The scope names the template reads (liquidjs static analysis), or null when unknown. Rendering is
   * a function of their values, so messages whose values are equal share one render (`memo`): a
   * campaign to contacts known only by phone renders once. (`{{ 'now' | date }}` is the exception
   * Liquid has; within one fan-out the difference is nil.)
   */
  readonly reads: readonly string[] | null;
  readonly memo: Map<string, Texts | string>;
  /** The top-level `{{ }}` outputs of a text header and of the body, in order: what each WhatsApp parameter is made of. */
  readonly outputs: { readonly header: readonly OutputSource[]; readonly body: readonly OutputSource[] };
}

/** One top-level `{{ }}` output of a template text: its Liquid source and the names it reads. */
export interface OutputSource {
  /** The output as written, e.g. `{{ first_name }}`. */
  source: string;
  /** The names it reads (top-level names, and NAME of `variables.NAME`), sorted; [] when none or unknown. */
  variables: string[];
}

/** The Liquid-rendered parts of a message. */
interface Texts { body: string; headerText: string | undefined; headerParameters: string[]; bodyParameters: string[] }

/** Most distinct renders a compiled template remembers. */
const MEMO_LIMIT = 1_000;

/** Parses the body (and a text header) of `template`; never throws (a parse error is kept). */
export function compileTemplate(template: Template): CompiledTemplate {
  let body: LiquidTemplate[];
  let headerText: LiquidTemplate[] | undefined;
  try {
    body = liquid.parse(template.body ?? '');
    headerText = template.header?.type === 'text' ? liquid.parse(template.header.text ?? '') : undefined;
  } catch (err) {
    return { template, body: [], headerText: undefined, error: `template error: ${firstLine(err)}`, reads: null, memo: new Map(), outputs: { header: [], body: [] } };
  }
  let reads: string[] | null;
  try {
    reads = [...new Set([...Object.keys(analyzeSync(body).globals), ...(headerText ? Object.keys(analyzeSync(headerText).globals) : [])])].sort();
  } catch {
    reads = null;
  }
  return { template, body, headerText, error: undefined, reads, memo: new Map(), outputs: { header: outputSources(headerText ?? []), body: outputSources(body) } };
}

/** The names `parsed` reads: top-level names, and NAME of `variables.NAME` (liquidjs static analysis; best effort). */
function readNames(parsed: LiquidTemplate[]): string[] {
  const reads = new Set<string>();
  try {
    for (const [name, uses] of Object.entries(analyzeSync(parsed).globals)) {
      if (name !== 'variables') reads.add(name);
      else for (const use of uses) if (typeof use.segments[1] === 'string') reads.add(use.segments[1]);
    }
  } catch {
    // Static analysis is best effort: no names then.
  }
  return [...reads].sort();
}

/** The top-level outputs of `parsed`, in order (see OutputSource). */
function outputSources(parsed: LiquidTemplate[]): OutputSource[] {
  return parsed.filter((t): t is Output => t instanceof Output).map((t) => ({ source: t.token.getText(), variables: readNames([t]) }));
}

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0].slice(0, 500);
}

/**
 * Copies `source`'s own keys into a new ordinary object. A key named `__proto__` is defined as an own
 * data property (an assignment would set the prototype instead). Values are shared, not copied: they
 * come from JSON (own data properties only, `__proto__` included), and templates only read them.
 */
function ownCopy(source: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!source) return out;
  for (const key of Object.keys(source)) {
    if (key === '__proto__') Object.defineProperty(out, key, { value: source[key], enumerable: true, writable: true, configurable: true });
    else out[key] = source[key];
  }
  return out;
}

/**
 * The Liquid scope of a contact (see the module comment). Reads are own-property-only (liquidjs
 * `ownPropertyOnly`), so inherited members such as `constructor` are invisible unless the data has
 * such a key itself.
 */
export function scopeOf(contact: RenderContact): Record<string, unknown> {
  const variables = ownCopy(contact.variables);
  const scope = ownCopy(variables);
  scope.variables = variables;
  scope.first_name = contact.first_name ?? null; // nil: renders empty and is false in {% if %}
  scope.last_name = contact.last_name ?? null;
  scope.phone = contact.phone;
  return scope;
}

function renderAll(templates: LiquidTemplate[], scope: Record<string, unknown>): string {
  return liquid.renderSync(templates, scope) as string;
}

/** Rendered values of the top-level `{{ }}` outputs, in order (WhatsApp template parameters). */
function outputValues(templates: LiquidTemplate[], scope: Record<string, unknown>): string[] {
  return templates.filter((t) => t instanceof Output).map((t) => renderAll([t], scope));
}

/** The dynamic part of a replaced URL-button destination (see the module comment). */
export function buttonParameter(templateUrl: string, url: string): string {
  return url.startsWith(templateUrl) && url.length > templateUrl.length ? url.slice(templateUrl.length) : url;
}

export interface RenderInput {
  message_id: string;
  batch_id: string;
  company_id: number;
  kind: BatchKind;
  source_id: number;
  contact: RenderContact;
  overrides: BatchOverrides;
}

/** Renders the Liquid parts for `scope`; returns the error text instead when that fails. */
function renderTexts(compiled: CompiledTemplate, scope: Record<string, unknown>): Texts | string {
  try {
    const wa = !!compiled.template.whatsapp;
    return {
      body: renderAll(compiled.body, scope),
      headerText: compiled.headerText ? renderAll(compiled.headerText, scope) : undefined,
      headerParameters: wa && compiled.headerText ? outputValues(compiled.headerText, scope) : [],
      bodyParameters: wa ? outputValues(compiled.body, scope) : [],
    };
  } catch (err) {
    return `template error: ${firstLine(err)}`;
  }
}

/** renderTexts, shared between messages whose read values are equal (see CompiledTemplate.reads). */
function textsFor(compiled: CompiledTemplate, scope: Record<string, unknown>): Texts | string {
  if (!compiled.reads) return renderTexts(compiled, scope);
  const key = JSON.stringify(compiled.reads.map((name) => (Object.hasOwn(scope, name) ? scope[name] : null)));
  let texts = compiled.memo.get(key);
  if (texts === undefined) {
    texts = renderTexts(compiled, scope);
    if (compiled.memo.size >= MEMO_LIMIT) compiled.memo.clear();
    compiled.memo.set(key, texts);
  }
  return texts;
}

/** Renders one message; throws RenderError when the template does not render. */
export function renderMessage(compiled: CompiledTemplate, input: RenderInput): Rendered {
  if (compiled.error) throw new RenderError(compiled.error);
  const t = compiled.template;
  const texts = textsFor(compiled, scopeOf(input.contact));
  if (typeof texts === 'string') throw new RenderError(texts);
  const { body, headerText } = texts;
  const c = input.contact;
  const o = input.overrides ?? {};
  let header: Rendered['header'];
  switch (t.header?.type) {
    case 'image':
      header = { type: 'image', url: c.image_url || o.image_url || t.header.url };
      break;
    case 'video':
      header = { type: 'video', url: c.video_url || o.video_url || t.header.url };
      break;
    case 'text':
      header = { type: 'text', text: headerText ?? '' };
      break;
    default:
      header = { type: 'none' };
  }
  const replaced = [o.url, o.url2];
  const buttons = (t.buttons ?? []).slice(0, 2).map((b, i) => ({ text: b.text, url: replaced[i] || b.url }));
  const rendered: Rendered = {
    message_id: input.message_id,
    batch_id: input.batch_id,
    company_id: input.company_id,
    kind: input.kind,
    source_id: input.source_id,
    to: c.phone,
    header,
    body,
    buttons,
  };
  if (t.whatsapp) {
    rendered.whatsapp = {
      name: t.whatsapp.name,
      language: t.whatsapp.language,
      header_parameters: texts.headerParameters,
      body_parameters: texts.bodyParameters,
      button_parameters: (t.buttons ?? []).slice(0, 2).map((b, i) => (replaced[i] ? buttonParameter(b.url, replaced[i]!) : null)),
    };
  }
  return rendered;
}

/** Sample number of a preview without a phone (E.164, a reserved UK drama number). */
export const SAMPLE_PHONE = '+447700900000';

/** The delivered content of a message: `Rendered` without the ids only a real send has. */
export type PreviewContent = Omit<Rendered, 'message_id' | 'batch_id' | 'company_id' | 'kind' | 'source_id'>;

/**
 * A preview: `template` rendered for `contact` exactly as the pipeline renders a message
 * (`compileTemplate` then `renderMessage`, as batch-process calls them, with no request overrides and
 * no per-contact media), without the ids. Used by the operator API's and the console's previews on the
 * server and by the console's live preview in the browser. Throws RenderError when it does not render.
 */
export function renderPreview(template: Template, contact: RenderContact): PreviewContent {
  const r = renderMessage(compileTemplate(template), {
    message_id: '', batch_id: '', company_id: 0, kind: 'campaign', source_id: 0,
    contact: { ...contact, image_url: null, video_url: null },
    overrides: {},
  });
  const { message_id: _m, batch_id: _b, company_id: _c, kind: _k, source_id: _s, ...content } = r;
  return content;
}

/** Where a Liquid text fails to parse: the engine's message (without its position) and 1-based line/column. */
export interface LiquidProblem {
  message: string;
  line: number | undefined;
  column: number | undefined;
}

/** What a check at save time learns of one Liquid text: the same engine as rendering. */
export interface LiquidCheck {
  problem: LiquidProblem | undefined;
  /** Number of top-level `{{ }}` outputs (the WhatsApp parameters the text yields). */
  outputs: number;
  /** Names the text reads from the scope: top-level names, and NAME of `variables.NAME`. */
  reads: string[];
}

/**
 * Parses `text` with the rendering engine (strict filters, no files): syntax errors, unknown tags and
 * unknown filters come back as a problem with the line and column; never throws.
 */
export function checkLiquid(text: string): LiquidCheck {
  let parsed: LiquidTemplate[];
  try {
    parsed = liquid.parse(text);
  } catch (err) {
    const e = err as Error & { token?: { getPosition?: () => [number, number] } };
    const position = e.token?.getPosition?.();
    const message = firstLine(err).replace(/, line:\d+, col:\d+$/, '');
    return { problem: { message, line: position?.[0], column: position?.[1] }, outputs: 0, reads: [] };
  }
  return { problem: undefined, outputs: parsed.filter((t) => t instanceof Output).length, reads: readNames(parsed) };
}

/**
 * A WhatsApp template parameter that would be empty (docs/whatsapp.md "Empty parameters"): Meta
 * refuses a text parameter that is empty, and the service treats one of white space only the same.
 */
export interface EmptyParameter {
  /** Which component's parameter: the text header's, the body's, or a URL button's. */
  component: 'header' | 'body' | 'button';
  /** 1-based: the `{{n}}` of the header or body; the button's position (1 or 2) for a button. */
  index: number;
  /** What yields it: the Liquid output (`{{ first_name }}`), or the send's field (`url`, `url2`) for a button. */
  source: string;
  /** The names the output reads (`first_name`; NAME of `variables.NAME`), sorted; for a button its field. */
  variables: string[];
}

/** True when a WhatsApp text parameter would be refused as empty: '' or white space only. */
export function isBlankParameter(value: string): boolean {
  return value.trim() === '';
}

/**
 * The parameters of `wa` (a rendered message's WhatsApp view) that are blank ({@link isBlankParameter}),
 * in order (header, body, buttons), each named by the output of `compiled` that yields it; [] when none.
 */
export function emptyParameters(compiled: CompiledTemplate, wa: WhatsAppParameters): EmptyParameter[] {
  const out: EmptyParameter[] = [];
  const add = (component: 'header' | 'body', values: string[], sources: readonly OutputSource[]) => values.forEach((v, i) => {
    if (isBlankParameter(v)) out.push({ component, index: i + 1, source: sources[i]?.source ?? `{{${i + 1}}}`, variables: [...(sources[i]?.variables ?? [])] });
  });
  add('header', wa.header_parameters, compiled.outputs.header);
  add('body', wa.body_parameters, compiled.outputs.body);
  wa.button_parameters.forEach((v, i) => {
    const field = i === 0 ? 'url' : 'url2';
    if (v !== null && isBlankParameter(v)) out.push({ component: 'button', index: i + 1, source: field, variables: [field] });
  });
  return out;
}

/**
 * {@link emptyParameters} of a preview: `template` compiled again, `content` its `renderPreview`; []
 * without a WhatsApp mapping. The console's editor names these beside the bubble.
 */
export function previewEmptyParameters(template: Template, content: Pick<PreviewContent, 'whatsapp'>): EmptyParameter[] {
  return content.whatsapp ? emptyParameters(compileTemplate(template), content.whatsapp) : [];
}

/**
 * One line naming `p`, e.g. `first_name is empty: the WhatsApp body parameter {{1}} ({{ first_name }})
 * would be empty`: a skipped message's `error` (reason `empty_parameter`) and the editor's note.
 */
export function describeEmptyParameter(p: EmptyParameter): string {
  const where = p.component === 'button' ? `button ${p.index} parameter` : `${p.component} parameter {{${p.index}}}`;
  const names = p.variables.length ? `${p.variables.join(', ')} ${p.variables.length === 1 ? 'is' : 'are'} empty: ` : '';
  return `${names}the WhatsApp ${where} (${p.source}) would be empty`;
}

/** Every one of `list` described ({@link describeEmptyParameter}), joined with `; `. */
export function describeEmptyParameters(list: readonly EmptyParameter[]): string {
  return list.map(describeEmptyParameter).join('; ');
}
