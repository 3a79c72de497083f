/**
 * `cms batch show BATCH_ID [--messages [--limit N]]`: GET /admin/batches/{batch_id} and, with --messages,
 * GET /admin/batches/{batch_id}/messages (docs/operator-api.md) page after page, following its `next` cursor
 * to the last page or until --limit messages. With --json and --messages the output is the batch object
 * with an added `messages` array.
 *
 * `cms batch list --company ID [--limit N] [--before BATCH_ID]`: GET
 * /admin/companies/{company_id}/batches, newest first, one page; the text output ends with the command
 * for the next page when there is one. --json prints the page as answered (`batches`, `next_before`).
 *
 * `cms batch cancel BATCH_ID`: POST /admin/batches/{batch_id}/cancel; what the send has not handed to a
 * provider yet ends skipped / `cancelled` (src/domain/campaign-sends.ts).
 *
 * The text output shows the batch's funnel (docs/decisions.md#7-a-messages-life) as one line,
 * `funnel: sent N → delivered N → read N · failed N · skipped N · pending N (of TOTAL)`, and per
 * message its status, error code, times and, for a message waiting for a retry, its next attempt; then the
 * text each message was rendered to (header text, body, buttons), as the provider got it.
 */
import type { Command } from 'commander';
import type { Batch, BatchMessage } from '../api/types.ts';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { formatValue, printJson, printLine, printRecord, printTable } from '../output.ts';
import { parseNonEmpty, parsePositiveInt } from '../parse.ts';
import type { CliIo } from '../io.ts';

/** Flatten a batch for the key/value table: counts become `sent`, `failed`, ... rows. */
function batchRows(batch: Batch): Record<string, unknown> {
  const { counts, ...rest } = batch;
  const flat: Record<string, unknown> = { ...rest };
  if (counts && typeof counts === 'object') {
    for (const [k, v] of Object.entries(counts)) flat[k] = v;
  }
  return flat;
}

/** The one-line funnel of a batch's counts. */
export function funnelLine(counts: NonNullable<Batch['counts']>): string {
  const n = (v: number | undefined) => String(v ?? 0);
  return `funnel: sent ${n(counts.sent)} → delivered ${n(counts.delivered)} → read ${n(counts.read)}`
    + ` · failed ${n(counts.failed)} · skipped ${n(counts.skipped)} · pending ${n(counts.pending)} (of ${n(counts.total)})`;
}

/**
 * The text of a rendered message (`rendered` of GET /admin/batches/{id}/messages: header, body, buttons), or
 * undefined while it is not rendered yet. Lines are indented by `indent`.
 */
export function renderedText(rendered: unknown, indent = '  '): string | undefined {
  if (!rendered || typeof rendered !== 'object') return undefined;
  const r = rendered as { header?: { type?: string; text?: string; url?: string }; body?: unknown; buttons?: { text?: string; url?: string }[] };
  if (typeof r.body !== 'string') return undefined;
  const lines: string[] = [];
  if (r.header?.type === 'text' && r.header.text) lines.push(r.header.text, '');
  else if ((r.header?.type === 'image' || r.header?.type === 'video') && r.header.url) lines.push(`[${r.header.type}: ${r.header.url}]`, '');
  lines.push(...r.body.split('\n'));
  for (const b of Array.isArray(r.buttons) ? r.buttons : []) lines.push(`[${b.text ?? ''}](${b.url ?? ''})`);
  return lines.map((l) => (l === '' ? '' : indent + l)).join('\n');
}

/** Register `batch list --company ID` and `batch show BATCH_ID [--messages]` on `program`. */
export function registerBatch(program: Command, io: CliIo): void {
  const group = program.command('batch').description('inspect send batches');

  addCommonOptions(
    group
      .command('list')
      .description("list a company's send batches with their counts, newest first")
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .option('--limit <n>', 'at most this many batches (1-100, default 20)', parsePositiveInt)
      .option('--before <batch-id>', 'only batches older than this one (the next page)', parseNonEmpty),
  ).action(async (opts: { company: string; limit?: number; before?: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const page = await data(ctx.api.GET('/admin/companies/{company_id}/batches', {
      params: { path: { company_id: companyId }, query: { ...(opts.limit ? { limit: opts.limit } : {}), ...(opts.before ? { before: opts.before } : {}) } },
    }));
    if (ctx.json) return printJson(io, page);
    printTable(io, page.batches, [
      { key: 'batch_id' }, { key: 'kind' }, { key: 'source_id', header: 'source' }, { key: 'status' },
      { key: 'counts', header: 'total', format: (_v, b) => String(b.counts.total) },
      { key: 'counts', header: 'sent', format: (_v, b) => String(b.counts.sent) },
      { key: 'counts', header: 'failed', format: (_v, b) => String(b.counts.failed) },
      { key: 'counts', header: 'skipped', format: (_v, b) => String(b.counts.skipped) },
      { key: 'counts', header: 'pending', format: (_v, b) => String(b.counts.pending) },
      { key: 'created_at', header: 'created' },
    ], '(no batches)');
    if (page.next_before) {
      printLine(io);
      printLine(io, `More: cms batch list --company ${companyId}${opts.limit ? ` --limit ${opts.limit}` : ''} --before ${page.next_before}`);
    }
  });

  addCommonOptions(
    group
      .command('show')
      .description('show a batch: status and counts; --messages lists every message')
      .argument('<batch-id>', 'batch id (returned by the automation trigger)', parseNonEmpty)
      .option('--messages', 'also list the batch\'s messages (every page)')
      .option('--limit <n>', 'with --messages: at most this many messages', parsePositiveInt),
  ).action(async (batchId: string, opts: { messages?: boolean; limit?: number }, cmd: Command) => {
    const ctx = await contextFor(cmd, io);
    const params = { path: { batch_id: batchId } };
    const batch = await data(ctx.api.GET('/admin/batches/{batch_id}', { params }));
    let messages: BatchMessage[] | undefined;
    if (opts.messages) {
      // Follow the `next` cursor page by page (1000 a page) until the last page or --limit.
      messages = [];
      let after: string | undefined;
      for (;;) {
        const want = opts.limit === undefined ? 1000 : Math.min(1000, opts.limit - messages.length);
        const page = await data(ctx.api.GET('/admin/batches/{batch_id}/messages', { params: { path: params.path, query: { limit: want, ...(after ? { after } : {}) } } }));
        messages.push(...(page.messages ?? []));
        if (!page.next || (opts.limit !== undefined && messages.length >= opts.limit)) break;
        after = page.next;
      }
    }
    if (ctx.json) {
      printJson(io, messages ? { ...batch, messages } : batch);
      return;
    }
    printRecord(io, batchRows(batch), `Batch ${batch.batch_id ?? batchId}:`);
    if (batch.counts && typeof batch.counts === 'object') printLine(io, funnelLine(batch.counts));
    if (messages) {
      printLine(io);
      printLine(io, `Messages (${messages.length}):`);
      printTable(io, messages, [
        { key: 'message_id' },
        { key: 'phone' },
        { key: 'status' },
        { key: 'reason', header: 'reason / error', format: (_v, m) => formatValue(m.reason ?? m.error) },
        { key: 'attempts' },
        { key: 'error_code', header: 'code' },
        { key: 'next_attempt_at', header: 'next attempt', format: (_v, m) => formatValue(m.status === 'pending' ? m.next_attempt_at ?? m.scheduled_for : null) },
        { key: 'sent_at' },
        { key: 'delivered_at' },
        { key: 'read_at' },
        { key: 'failed_at' },
        { key: 'provider_message_id', header: 'provider id' },
      ]);
      const texts = messages.map((m) => [m, renderedText(m.rendered, '    ')] as const).filter(([, t]) => t !== undefined);
      if (texts.length > 0) {
        printLine(io);
        printLine(io, 'Rendered text:');
        for (const [m, text] of texts) printLine(io, `  ${m.message_id} to ${m.phone}:\n${text}`);
      }
    }
  });

  addCommonOptions(
    group
      .command('cancel')
      .description('cancel what a send has not handed to a provider yet (ends skipped, reason cancelled)')
      .argument('<batch_id>', 'batch id', parseNonEmpty),
  ).action(async (batchId: string, _opts: unknown, cmd: Command) => {
    const ctx = await contextFor(cmd, io);
    const res = await data(ctx.api.POST('/admin/batches/{batch_id}/cancel', { params: { path: { batch_id: batchId } } }));
    if (ctx.json) printJson(io, res);
    else printRecord(io, res, 'Cancelled:');
  });
}
