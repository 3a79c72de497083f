/**
 * Tools for automations and campaigns (docs/operator-api.md; the sources themselves are in
 * src/domain/automations.ts): the **preview** of a template and the **test send** of one message.
 *
 * The preview is rendered by the pipeline's own code (`compileTemplate` / `renderMessage` of
 * src/domain/render.ts, as `batch-process` calls them), for a contact of the company chosen by phone
 * (its stored names and variables; a number with no contact renders as a contact known by phone only,
 * which is what the pipeline would create) or for sample data. It answers the delivered content
 * (`to`, `header`, `body`, `buttons`, `whatsapp`): exactly the `rendered` message the pipeline stores,
 * without the ids that only a real send has.
 *
 * The warnings of a template (variables no contact has; for a WhatsApp company, why it does not map
 * to an approved template) are computed here for the operator API's answers and the console's pages.
 *
 * A test send is a batch of one written through the same accept step as 4.3 / 4.4 (`acceptBatch`:
 * the batch and its `batch-process` job in one transaction): an automation's as kind `automation`
 * (whether or not it is active), a campaign's as kind `campaign` (so an opted-out number is skipped and
 * delivery hours hold it, as in a real campaign send). It appears in Sends like any batch.
 */
import { selectDefaultCountry } from '../db/companies.ts';
import type { Db } from '../db/database.ts';
import type { BatchAcceptor } from './accept-writer.ts';
import { acceptBatch, distinctItems, newBatchId } from './batches.ts';
import { assertSendable, findSource, type SourceKind, type SourceRow } from './automations.ts';
import { audit, type Actor } from './actor.ts';
import { DomainError } from './errors.ts';
import { RenderError, renderPreview, SAMPLE_PHONE, type PreviewContent, type RenderContact } from './render.ts';
import { knownVariableNames, selectPreviewContact } from '../db/template-variables.ts';
import { ALWAYS_KNOWN, checkTemplate, type Template } from './templates.ts';
import { whatsappMappingProblems } from './whatsapp-templates.ts';

/** Who a preview is for: a contact of the company by phone, or sample data (names and variables). */
export interface PreviewInput {
  phone?: string;
  first_name?: string | null;
  last_name?: string | null;
  variables?: Record<string, unknown> | null;
}

export { SAMPLE_PHONE, type PreviewContent } from './render.ts';

/** What a preview answers: the content, or the render error every such message would fail with. */
export type PreviewResult = { ok: true; contact_found: boolean; rendered: PreviewContent } | { ok: false; error: string };

/** The data a preview renders with: the contact's, or the sample's (`contact_found` false). */
export interface PreviewData { contact_found: boolean; contact: RenderContact }

/**
 * The data a preview of a source of company `companyId` renders with (see the module comment): a
 * phone is normalised with the company's default country (422 `invalid phone number` when it is not a
 * number) and its contact's names and variables are used; sample names and variables apply when the
 * number has no contact, or no number is given (then the number is SAMPLE_PHONE). The console's live
 * preview asks for this once per phone and renders in the browser with it.
 */
export async function previewData(db: Db, companyId: number, input: PreviewInput): Promise<PreviewData> {
  let phone = SAMPLE_PHONE;
  let contact: { first_name: string | null; last_name: string | null; variables: Record<string, unknown> | null } | undefined;
  if (input.phone !== undefined && input.phone.trim() !== '') {
    const [item] = distinctItems([{ phone: input.phone.trim() }], await selectDefaultCountry(db, companyId));
    if (!item.e164) throw new DomainError(422, 'invalid phone number');
    phone = item.e164;
    contact = await selectPreviewContact(db, companyId, phone);
  }
  const data = contact ?? { first_name: input.first_name ?? null, last_name: input.last_name ?? null, variables: input.variables ?? null };
  return { contact_found: contact !== undefined, contact: { phone, ...data } };
}

/**
 * Renders `source`'s template for the input (see the module comment and {@link previewData}) with
 * `renderPreview` of src/domain/render.ts, the code the console's live preview runs in the browser.
 */
export async function previewSource(db: Db, source: SourceRow, input: PreviewInput): Promise<PreviewResult> {
  const { contact_found, contact } = await previewData(db, source.company_id, input);
  try {
    return { ok: true, contact_found, rendered: renderPreview(source.template, contact) };
  } catch (err) {
    if (err instanceof RenderError) return { ok: false, error: err.message };
    throw err;
  }
}

/** The warning of a variable `name` that no contact of the company has (it renders empty). */
export const unknownVariableWarning = (name: string) => `no contact of this company has the variable ${name}: it renders empty`;

/**
 * Warnings for the variables `reads` names (see `checkTemplate`) that no contact of the company has
 * (first_name, last_name and phone always exist): the `warnings` of the operator API's answers when a
 * template is stored, and what the console shows after a save and on a send's review.
 */
export async function variableWarnings(db: Db, companyId: number, reads: string[]): Promise<string[]> {
  const names = reads.filter((n) => !ALWAYS_KNOWN.has(n));
  const known = await knownVariableNames(db, companyId, names);
  return names.filter((n) => !known.has(n)).map(unknownVariableWarning);
}

/**
 * Every warning of a stored template of company `companyId`: why it does not map to an approved
 * template of the company's WhatsApp catalogue (when its channel is WhatsApp: every message would
 * fail), then, unless `variables` is false, the variables no contact has ({@link variableWarnings}).
 * A template that does not parse has no variable warnings (saving refuses it anyway).
 */
export async function templateWarnings(db: Db, companyId: number, template: Template, opts: { variables?: boolean } = {}): Promise<string[]> {
  const mapping = (await whatsappMappingProblems(db, companyId, template)).map((p) => p.msg);
  if (opts.variables === false) return mapping;
  const check = checkTemplate(template);
  return [...mapping, ...(check.problems.length ? [] : await variableWarnings(db, companyId, check.reads))];
}

/**
 * Test send: one message of `source` to `phone` through the accept step (see the module comment);
 * resolves to the new batch's id once it is committed. 422 `invalid phone number`.
 */
export async function testSend(db: Db, acceptor: BatchAcceptor, source: SourceRow, phone: string): Promise<string> {
  const items = distinctItems([{ phone: phone.trim() }], await selectDefaultCountry(db, source.company_id));
  if (!items[0]?.e164) throw new DomainError(422, 'invalid phone number');
  const batchId = newBatchId();
  await acceptBatch(acceptor, {
    batchId, companyId: source.company_id, kind: source.kind, sourceId: source.id, template: source.template,
    items: items.map((i) => ({ phone: i.phone, e164: i.e164 })), ignored: 0, overrides: {},
  });
  return batchId;
}

/** What {@link testSendSource} needs of the service (AppDeps, src/http/deps.ts, has it). */
export interface TestSendDeps {
  readonly database: { readonly db: Db };
  readonly acceptor: BatchAcceptor;
}

/**
 * Command: the test send of automation or campaign `id` to `phone` ({@link testSend}) and its audit
 * entry `<kind>.test_send` (target `batch:<id>`, details `{<kind>_id}`). Resolves to the batch id. 404
 * for an unknown or archived source (another company's too, for a console actor or a key); 422
 * `invalid phone number`.
 */
export async function testSendSource(deps: TestSendDeps, actor: Actor, kind: SourceKind, id: number, phone: string): Promise<string> {
  const db = deps.database.db;
  const source = await findSource(db, kind, id, actor.kind === 'operator' ? null : actor.companyId);
  assertSendable(source);
  const batchId = await testSend(db, deps.acceptor, source, phone);
  await audit(db, actor, { action: `${kind}.test_send`, target: `batch:${batchId}`, companyId: source.company_id, details: { [`${kind}_id`]: source.id } });
  return batchId;
}
