/**
 * `cms contacts import --company ID FILE.csv`: streams the CSV (../csv-import.ts) and sends
 * PUT /admin/companies/{company_id}/contacts in chunks of at most 10 000 contacts, one request
 * at a time; prints the summed `{created, updated, invalid}` (operator-api.md). Rows without a
 * phone are counted as invalid without being sent. On a TTY, large files get a progress bar.
 *
 * `cms contacts show --company ID PHONE`: GET /admin/companies/{company_id}/contacts/{phone} (issue 11
 * item 6): the contact, its opt-out state with source and time, its inbound messages and the messages
 * sent to it (newest first).
 */
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { ContactsResult } from '../api-types.ts';
import { MAX_CONTACTS_PER_REQUEST } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { openContactsCsv } from '../csv-import.ts';
import { printJson, printLine, printRecord, printTable } from '../output.ts';
import { parseNonEmpty, parsePositiveInt } from '../parse.ts';

/** Files at least this large (bytes) get a progress bar when stdout and stderr are TTYs. */
export const PROGRESS_MIN_BYTES = 1024 * 1024;

interface ImportOptions {
  company: string;
  chunkSize: number;
  delimiter: string;
  progress: boolean;
}

/** Summary printed by `contacts import`: the summed server counts plus what was read and sent. */
export interface ImportSummary extends ContactsResult {
  rows: number;
  requests: number;
}

/** Register `contacts import --company ID FILE` on `program`. */
export function registerContacts(program: Command): void {
  const group = program.command('contacts').description('import and show contacts of a company');

  addCommonOptions(
    group
      .command('show')
      .description('show one contact: opt-out state (source, time), inbound messages, messages sent')
      .argument('<phone>', "phone number, E.164 or national (the company's default country)")
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (phone: string, opts: { company: string }, cmd: Command) => {
    const ctx = await contextFor(cmd);
    const c = await ctx.client.request<Record<string, any>>('GET', `/admin/companies/${encodeURIComponent(opts.company)}/contacts/${encodeURIComponent(phone)}`);
    if (ctx.json) return printJson(c);
    printRecord({
      contact_id: c.contact_id, phone: c.phone, first_name: c.first_name, last_name: c.last_name,
      opted_out: c.opted_out, opt_out_source: c.opt_out_source, opt_out_at: c.opt_out_at, variables: c.variables,
    }, `Contact ${c.phone}:`);
    printLine();
    printLine('Inbound messages (newest first):');
    printTable(c.inbound as Record<string, unknown>[], [
      { key: 'received_at' }, { key: 'type' }, { key: 'text' }, { key: 'payload' },
    ]);
    printLine();
    printLine('Messages sent (newest first):');
    printTable(c.messages as Record<string, unknown>[], [
      { key: 'message_id' }, { key: 'kind' }, { key: 'status' },
      { key: 'reason', header: 'reason/error', format: (_v, m) => [m.reason, m.error_code, m.error].filter(Boolean).join(' ') },
      { key: 'sent_at' }, { key: 'delivered_at' }, { key: 'read_at' },
    ]);
  });

  addCommonOptions(
    group
      .command('import')
      .description(
        'create or update contacts from a CSV with a header row: phone, first_name, last_name, opted_out; ' +
          'any other column becomes a variable. Empty cells are not sent.',
      )
      .argument('<file>', 'CSV file')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .option('--chunk-size <n>', `contacts per request (at most ${MAX_CONTACTS_PER_REQUEST})`, parsePositiveInt, MAX_CONTACTS_PER_REQUEST)
      .option('--delimiter <char>', 'field delimiter (default: detected from the header row: , ; tab or |)', 'auto')
      .option('--no-progress', 'never show a progress bar'),
  ).action(async (file: string, opts: ImportOptions, cmd: Command) => {
    const ctx = await contextFor(cmd);
    const csv = await openContactsCsv(file, { chunkSize: opts.chunkSize, delimiter: opts.delimiter });
    const summary: ImportSummary = { created: 0, updated: 0, invalid: 0, rows: 0, requests: 0 };
    const showBar =
      opts.progress && !ctx.json && !!process.stdout.isTTY && !!process.stderr.isTTY && csv.totalBytes >= PROGRESS_MIN_BYTES;
    const bar = showBar
      ? new cliProgress.SingleBar(
          {
            format: 'Importing {bar} {percentage}% | {rows} rows | created {created}, updated {updated}, invalid {invalid}',
            hideCursor: true,
          },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
    bar?.start(csv.totalBytes, 0, summary);
    try {
      for await (const chunk of csv.chunks()) {
        summary.rows = chunk.rowsRead;
        summary.invalid += chunk.missingPhone;
        if (chunk.contacts.length > 0) {
          const res = await ctx.client.putContacts(opts.company, chunk.contacts);
          summary.requests++;
          summary.created += res?.created ?? 0;
          summary.updated += res?.updated ?? 0;
          summary.invalid += res?.invalid ?? 0;
        }
        bar?.update(Math.min(csv.bytesRead(), csv.totalBytes), summary);
      }
      bar?.update(csv.totalBytes, summary);
    } catch (err) {
      bar?.stop();
      if (summary.requests > 0 && !ctx.json) {
        process.stderr.write(
          `cms: stopped after ${summary.requests} request(s) (${summary.created} created, ${summary.updated} updated); ` +
            'importing the file again is safe: contacts are matched by phone.\n',
        );
      }
      throw err;
    }
    bar?.stop();
    if (ctx.json) {
      printJson(summary);
    } else {
      printRecord(
        { created: summary.created, updated: summary.updated, invalid: summary.invalid, rows: summary.rows, requests: summary.requests },
        `Contacts imported into company ${opts.company}:`,
      );
    }
  });
}
