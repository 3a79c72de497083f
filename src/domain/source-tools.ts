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
 * A test send is a batch of one written through the same accept step as 4.3 / 4.4 (`acceptBatch`:
 * the batch and its `batch-process` job in one transaction): an automation's as kind `automation`
 * (whether or not it is active), a campaign's as kind `campaign` (so an opted-out number is skipped and
 * delivery hours hold it, as in a real campaign send). It appears in Sends like any batch.
 */
import { selectDefaultCountry } from '../db/companies.ts';
import type { Db } from '../db/database.ts';
import type { BatchAcceptor } from './accept-writer.ts';
import { acceptBatch, distinctItems, newBatchId } from './batches.ts';
import type { SourceRow } from './automations.ts';
import { DomainError } from './errors.ts';
import { compileTemplate, RenderError, renderMessage, type Rendered } from './render.ts';

/** Who a preview is for: a contact of the company by phone, or sample data (names and variables). */
export interface PreviewInput {
  phone?: string;
  first_name?: string | null;
  last_name?: string | null;
  variables?: Record<string, unknown> | null;
}

/** The delivered content of a message: `rendered` without its ids (see the module comment). */
export type PreviewContent = Omit<Rendered, 'message_id' | 'batch_id' | 'company_id' | 'kind' | 'source_id'>;

/** What a preview answers: the content, or the render error every such message would fail with. */
export type PreviewResult = { ok: true; contact_found: boolean; rendered: PreviewContent } | { ok: false; error: string };

/** Sample number of a preview without a phone (E.164, a reserved UK drama number). */
export const SAMPLE_PHONE = '+447700900000';

/**
 * Renders `source`'s template for the input (see the module comment). A phone is normalised with the
 * company's default country; 422 `invalid phone number` when it is not a number. Sample names and
 * variables apply only when the number has no contact (or no number is given).
 */
export async function previewSource(db: Db, source: SourceRow, input: PreviewInput): Promise<PreviewResult> {
  const defaultCountry = await selectDefaultCountry(db, source.company_id);
  let phone = SAMPLE_PHONE;
  let contact: { first_name: string | null; last_name: string | null; variables: Record<string, unknown> | null } | undefined;
  if (input.phone !== undefined && input.phone.trim() !== '') {
    const [item] = distinctItems([{ phone: input.phone.trim() }], defaultCountry);
    if (!item.e164) throw new DomainError(422, 'invalid phone number');
    phone = item.e164;
    const row = await db.selectFrom('contacts').select(['first_name', 'last_name', 'variables'])
      .where('company_id', '=', source.company_id).where('phone', '=', phone).executeTakeFirst();
    if (row) contact = { first_name: row.first_name, last_name: row.last_name, variables: row.variables as Record<string, unknown> | null };
  }
  const data = contact ?? { first_name: input.first_name ?? null, last_name: input.last_name ?? null, variables: input.variables ?? null };
  try {
    const r = renderMessage(compileTemplate(source.template), {
      message_id: '', batch_id: '', company_id: source.company_id, kind: source.kind, source_id: source.id,
      contact: { phone, ...data, image_url: null, video_url: null },
      overrides: {},
    });
    const { message_id: _m, batch_id: _b, company_id: _c, kind: _k, source_id: _s, ...content } = r;
    return { ok: true, contact_found: contact !== undefined, rendered: content };
  } catch (err) {
    if (err instanceof RenderError) return { ok: false, error: err.message };
    throw err;
  }
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
