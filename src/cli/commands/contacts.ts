/**
 * `cms contacts`: the operator API's contact routes.
 *
 * `cms contacts list --company ID [-q TEXT] [--after PHONE] [--limit N]`: GET .../contacts, a page of
 * contacts by number, or a search (digits of a number, at least 4, or name prefixes).
 * `cms contacts update PHONE --company ID [--first-name] [--last-name] [--set k=v]… [--unset k]…
 * [--opt-out|--opt-in]`: PATCH .../contacts/{phone} (variables merged here: the route replaces the set).
 * `cms contacts erase PHONE --company ID --yes`: DELETE .../contacts/{phone}, the GDPR erasure.
 * `cms contacts export --company ID [-o FILE]`: GET .../contacts/export streamed to stdout or FILE.
 *
 * `cms contacts import --company ID FILE.csv`: streams the CSV (../csv-import.ts) and sends
 * PUT /admin/companies/{company_id}/contacts in chunks of at most 10 000 contacts, one request
 * at a time; prints the summed `{created, updated, invalid}` (docs/operator-api.md). Rows without a
 * phone, and rows whose names or variable values break the rules of an edit (src/domain/contact-rules.ts;
 * docs/contacts.md "Import"), are counted as invalid without being sent. On a TTY, large files get a
 * progress bar.
 * Invalid rows are named by their line number: rows without a phone at once, and
 * when the server counts invalid numbers in a chunk, the chunk's numbers are checked with the server's
 * rule (src/domain/phone.ts, the company's default country) to find their lines. The text output
 * lists the first INVALID_ROWS_SHOWN of them, --json all of them (up to INVALID_ROWS_KEPT) in
 * `invalid_rows: [{line, phone?, problem}]` (present only when there are some). An empty file is
 * refused (exit 1) before any request.
 *
 * `cms contacts show --company ID PHONE`: GET /admin/companies/{company_id}/contacts/{phone}: the
 * contact, its variables, tags, facts (country, last inbound / sent / delivered / read) and segments,
 * its opt-out state with source, time and history, its inbound messages and the messages sent to it
 * (newest first).
 *
 * `cms contacts tag --company ID [NUMBER...] [--file CSV] [--set TAG]... [--clear] [--add TAG]...
 * [--remove TAG]...`: POST /admin/companies/{company_id}/contacts/tags for many contacts at once
 * (docs/audience.md "Tags from the command line"): `--set` replaces each contact's tags (`--clear`:
 * with none), then `--add` and `--remove` apply. The numbers are arguments (commas separate several in
 * one) or a CSV file read by the segment lists' rules (src/domain/segment-lists.ts: UTF-8,
 * comma-separated, at most 5 MiB, the `phone` column or the first); sent TAG_REQUEST_MAX a request
 * (each request is one transaction), the counts added up. Prints `matched` and `not_found`.
 */
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { ContactsResult } from '../api/types.ts';
import { data, integerId, MAX_CONTACTS_PER_REQUEST } from '../client.ts';
import { addCommonOptions, commonOptions, contextFor, resolveBaseUrl, resolveToken } from '../context.ts';
import { openContactsCsv, type ContactChunk } from '../csv-import.ts';
import { toE164 } from '../../domain/phone.ts';
import { itemsFromCsv, itemsFromText, ListError, type ListItem } from '../../domain/segment-lists.ts';
import { ApiError, CliError, ConnectionError, UsageError } from '../errors.ts';
import { printJson, printLine, printRecord, printTable } from '../output.ts';
import { parseNonEmpty, parsePositiveInt } from '../parse.ts';
import { inCwd, type CliIo } from '../io.ts';

/** Fewest digits a search by number takes (the server's rule, repeated in the help). */
const MIN_DIGITS = 4;

/** Numbers per request of `contacts tag` (the operator API's limit). */
export const TAG_REQUEST_MAX = 100_000;

interface TagOptions { company: string; file?: string; set: string[]; clear?: boolean; add: string[]; remove: string[] }

/** The numbers of `contacts tag`: from `--file`, else from the arguments. */
async function tagTargets(io: CliIo, args: string[], file: string | undefined): Promise<ListItem[]> {
  if (file === undefined) {
    if (!args.length) throw new UsageError('give phone numbers as arguments, or --file CSV');
    return itemsFromText(args.join('\n'));
  }
  if (args.length) throw new UsageError('give numbers as arguments or --file, not both');
  let bytes: Buffer;
  try {
    bytes = await readFile(inCwd(io, file));
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return itemsFromCsv(bytes, false);
  } catch (err) {
    if (err instanceof ListError) throw new CliError(`${file}: ${err.message}`);
    throw err;
  }
}

interface UpdateOptions {
  company: string; firstName?: string; lastName?: string; set: string[]; unset: string[]; optOut?: boolean; optIn?: boolean; consentEvidence?: string;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** Prints a contact (the answer of show / update). */
function printContact(io: CliIo, c: Record<string, any>): void {
  printRecord(io, {
    contact_id: c.contact_id, phone: c.phone, first_name: c.first_name, last_name: c.last_name,
    opted_out: c.opted_out, opt_out_source: c.opt_out_source, opt_out_at: c.opt_out_at,
    last_inbound_at: c.last_inbound_at, last_sent_at: c.last_sent_at, last_delivered_at: c.last_delivered_at, last_read_at: c.last_read_at,
    country: c.country, window_open_until: c.window_open_until, variables: c.variables,
    tags: (c.tags as string[] | undefined)?.join(', ') || null,
    segments: (c.segments as { name: string }[]).map((s) => s.name).join(', ') || null,
  }, `Contact ${c.phone}:`);
  printLine(io);
  printLine(io, 'History (newest first):');
  printTable(io, c.history as Record<string, unknown>[], [{ key: 'at' }, { key: 'actor' }, { key: 'action' }, { key: 'details' }]);
  printLine(io);
  printLine(io, 'Inbound messages (newest first):');
  printTable(io, c.inbound as Record<string, unknown>[], [
    { key: 'received_at' }, { key: 'type' }, { key: 'text' }, { key: 'payload' },
  ]);
  printLine(io);
  printLine(io, 'Messages sent (newest first):');
  printTable(io, c.messages as Record<string, unknown>[], [
    { key: 'message_id' }, { key: 'kind' }, { key: 'status' },
    { key: 'reason', header: 'reason/error', format: (_v, m) => [m.reason, m.error_code, m.error].filter(Boolean).join(' ') },
    { key: 'sent_at' }, { key: 'delivered_at' }, { key: 'read_at' },
  ]);
}

/**
 * GET /admin/companies/{id}/contacts/export, copied to `output` (or stdout) as it arrives: constant
 * memory whatever the size (the typed client reads whole answers, so this one request uses fetch).
 */
async function exportContacts(io: CliIo, cmd: Command, companyId: number, output: string | undefined): Promise<void> {
  const o = commonOptions(cmd);
  const baseUrl = resolveBaseUrl(o.url, io.env);
  const token = await resolveToken(o.token, io);
  const path = `/admin/companies/${companyId}/contacts/export`;
  let res: Response;
  try {
    res = await fetch(baseUrl + path, { headers: { authorization: `Bearer ${token}`, accept: 'text/csv' } });
  } catch (err) {
    throw new ConnectionError(baseUrl, (err as { cause?: { code?: string } }).cause?.code, err);
  }
  if (!res.ok || !res.body) {
    const text = await res.text();
    let body: unknown = text;
    try { body = JSON.parse(text); } catch { /* keep the text */ }
    throw new ApiError(res.status, 'GET', path, body);
  }
  const sink: NodeJS.WritableStream = output ? createWriteStream(inCwd(io, output)) : io.stdout;
  try {
    await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>), sink, { end: !!output });
  } catch (err) {
    throw new CliError(`export stopped: ${(err as Error).message}`);
  }
}

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
  /** Rows not imported, by line number; only when there are some. */
  invalid_rows?: InvalidRow[];
}

/** A row of the file that was not imported. */
export interface InvalidRow {
  line: number;
  phone?: string;
  problem: string;
}

/** Invalid rows listed in the text output; the rest are counted. */
export const INVALID_ROWS_SHOWN = 20;
/** Invalid rows kept for --json; the rest are counted in `invalid`. */
export const INVALID_ROWS_KEPT = 1000;

/**
 * The rows of `chunk` the server refused as invalid numbers (`expected` of them): each contact's
 * phone checked with the server's rule (toE164 with the company's default country).
 */
function invalidNumbers(chunk: ContactChunk, defaultCountry: string): InvalidRow[] {
  const rows: InvalidRow[] = [];
  chunk.contacts.forEach((c, i) => {
    const phone = String((c as { phone: string }).phone);
    if (!toE164(phone, defaultCountry)) rows.push({ line: chunk.lines[i], phone, problem: `not a valid phone number (default country ${defaultCountry})` });
  });
  return rows;
}

/** Register the `contacts` commands (see the module comment) on `program`. */
export function registerContacts(program: Command, io: CliIo): void {
  const group = program.command('contacts').description('list, show, change, erase, import and export the contacts of a company');

  addCommonOptions(
    group
      .command('list')
      .description(`list or search contacts, by number (one page; --after for the next): a number (at least ${MIN_DIGITS} of its digits) or name words (each the beginning of a first or last name)`)
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .option('-q, --query <text>', 'digits of a number, or names')
      .option('--tag <tag>', 'only contacts with this tag')
      .option('--after <phone>', 'the next_after of the previous page')
      .option('--limit <n>', 'contacts per page (1-500)', parsePositiveInt, 50),
  ).action(async (opts: { company: string; query?: string; tag?: string; after?: string; limit: number }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const page = await data(ctx.api.GET('/admin/companies/{company_id}/contacts', {
      params: { path: { company_id: companyId }, query: { q: opts.query, tag: opts.tag, after: opts.after, limit: opts.limit } },
    }));
    if (ctx.json) return printJson(io, page);
    printTable(io, page.contacts as unknown as Record<string, unknown>[], [
      { key: 'phone' }, { key: 'first_name' }, { key: 'last_name' }, { key: 'opted_out' }, { key: 'opt_out_source' }, { key: 'last_inbound_at' },
      { key: 'tags', format: (v) => ((v as string[] | undefined) ?? []).join(', ') },
    ], 'No contact matches.');
    if (page.next_after) printLine(io, `More: --after '${page.next_after}'`);
  });

  addCommonOptions(
    group
      .command('show')
      .description('show one contact: variables, segments, opt-out state (source, time) and history, inbound messages, messages sent')
      .argument('<phone>', "phone number, E.164 or national (the company's default country)")
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (phone: string, opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const c = await data(ctx.api.GET('/admin/companies/{company_id}/contacts/{phone}', { params: { path: { company_id: companyId, phone } } }));
    if (ctx.json) return printJson(io, c);
    printContact(io, c as unknown as Record<string, any>);
  });

  addCommonOptions(
    group
      .command('update')
      .description('change a contact by hand: names, variables, opt-out state (recorded with source operator)')
      .argument('<phone>', "phone number, E.164 or national (the company's default country)")
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .option('--first-name <name>', 'first name ("" clears it)')
      .option('--last-name <name>', 'last name ("" clears it)')
      .option('--set <name=value>', 'set a variable (repeatable)', collect, [])
      .option('--unset <name>', 'remove a variable (repeatable)', collect, [])
      .option('--opt-out', 'opt the contact out of campaigns')
      .option('--opt-in', 'opt the contact back in')
      .option('--consent-evidence <text>', 'with --opt-out / --opt-in: what proves the change (a form\'s wording, a ticket), kept in the consent ledger'),
  ).action(async (phone: string, opts: UpdateOptions, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    if (opts.optOut && opts.optIn) throw new UsageError('--opt-out and --opt-in exclude each other');
    const sets = opts.set.map((kv) => {
      const eq = kv.indexOf('=');
      if (eq < 1) throw new UsageError(`--set takes name=value, got "${kv}"`);
      return [kv.slice(0, eq), kv.slice(eq + 1)] as const;
    });
    const ctx = await contextFor(cmd, io);
    const path = { company_id: companyId, phone };
    const body: { first_name?: string | null; last_name?: string | null; variables?: Record<string, unknown>; opted_out?: boolean; consent_evidence?: string } = {};
    if (opts.firstName !== undefined) body.first_name = opts.firstName || null;
    if (opts.lastName !== undefined) body.last_name = opts.lastName || null;
    if (opts.optOut || opts.optIn) body.opted_out = !!opts.optOut;
    if (opts.consentEvidence !== undefined) {
      if (!opts.optOut && !opts.optIn) throw new UsageError('--consent-evidence goes with --opt-out or --opt-in');
      body.consent_evidence = opts.consentEvidence;
    }
    if (sets.length || opts.unset.length) {
      const current = await data(ctx.api.GET('/admin/companies/{company_id}/contacts/{phone}', { params: { path } }));
      const variables: Record<string, unknown> = { ...(current.variables as Record<string, unknown>) };
      for (const name of opts.unset) delete variables[name];
      for (const [name, value] of sets) variables[name] = value;
      body.variables = variables;
    }
    if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --first-name, --last-name, --set, --unset, --opt-out or --opt-in');
    const c = await data(ctx.api.PATCH('/admin/companies/{company_id}/contacts/{phone}', { params: { path }, body }));
    if (ctx.json) return printJson(io, c);
    printContact(io, c as unknown as Record<string, any>);
  });

  addCommonOptions(
    group
      .command('tag')
      .description('set, add or remove tags of many contacts at once: --set replaces their tags (--clear: with none), then --add and --remove apply')
      .argument('[numbers...]', "phone numbers (the company's default country for national ones); commas separate several in one argument")
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .option('--file <csv>', 'a CSV file (UTF-8, comma-separated, at most 5 MiB): the phone column, or the first')
      .option('--set <tag>', 'the tags each contact gets instead of its own (repeatable)', collect, [])
      .option('--clear', 'remove every tag first (like --set with no tag)')
      .option('--add <tag>', 'a tag to add (repeatable)', collect, [])
      .option('--remove <tag>', 'a tag to remove (repeatable)', collect, []),
  ).action(async (numbers: string[], opts: TagOptions, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    if (opts.clear && opts.set.length) throw new UsageError('--clear and --set exclude each other');
    if (!opts.clear && !opts.set.length && !opts.add.length && !opts.remove.length) throw new UsageError('nothing to change: give --set, --clear, --add or --remove');
    const items = await tagTargets(io, numbers, opts.file);
    if (items.length === 0) throw new CliError('no phone numbers found in the input');
    const ctx = await contextFor(cmd, io);
    const set = opts.clear ? [] : opts.set.length ? opts.set : undefined;
    const total = { matched: 0, not_found: 0, requests: 0 };
    for (let i = 0; i < items.length; i += TAG_REQUEST_MAX) {
      const contacts = items.slice(i, i + TAG_REQUEST_MAX).map((x) => x.value);
      const r = await data(ctx.api.POST('/admin/companies/{company_id}/contacts/tags', {
        params: { path: { company_id: companyId } },
        body: { contacts, ...(set ? { set } : {}), ...(opts.add.length ? { add: opts.add } : {}), ...(opts.remove.length ? { remove: opts.remove } : {}) },
      }));
      total.matched += r.matched;
      total.not_found += r.not_found;
      total.requests++;
    }
    if (ctx.json) return printJson(io, total);
    printRecord(io, total, 'Tags changed:');
  });

  addCommonOptions(
    group
      .command('erase')
      .description('erase a contact (GDPR Art. 17): its number, names, variables, message contents and replies are removed for good; counts are kept')
      .argument('<phone>', "phone number, E.164 or national (the company's default country)")
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .option('--yes', 'confirm: the erasure cannot be undone'),
  ).action(async (phone: string, opts: { company: string; yes?: boolean }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    if (!opts.yes) throw new UsageError('erasing cannot be undone: add --yes to confirm');
    const ctx = await contextFor(cmd, io);
    const r = await data(ctx.api.DELETE('/admin/companies/{company_id}/contacts/{phone}', { params: { path: { company_id: companyId, phone } } }));
    if (ctx.json) return printJson(io, r);
    printRecord(io, r as unknown as Record<string, unknown>, `Contact ${phone} erased:`);
  });

  addCommonOptions(
    group
      .command('export')
      .description('write every contact of the company as CSV (the import format) to stdout or --output, streamed')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .option('-o, --output <file>', 'write to this file instead of stdout'),
  ).action(async (opts: { company: string; output?: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    await exportContacts(io, cmd, companyId, opts.output);
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
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const csv = await openContactsCsv(file, { chunkSize: opts.chunkSize, delimiter: opts.delimiter, cwd: io.cwd });
    const summary: ImportSummary = { created: 0, updated: 0, invalid: 0, rows: 0, requests: 0 };
    const invalidRows: InvalidRow[] = [];
    const keep = (rows: InvalidRow[]) => invalidRows.push(...rows.slice(0, Math.max(0, INVALID_ROWS_KEPT - invalidRows.length)));
    let defaultCountry: Promise<string | undefined> | undefined;
    const countryOf = () => (defaultCountry ??= data(ctx.api.GET('/admin/companies/{company_id}', { params: { path: { company_id: companyId } } }))
      .then((c) => c.default_country ?? undefined, () => undefined));
    const showBar =
      opts.progress && !ctx.json && !!io.stdout.isTTY && !!io.stderr.isTTY && csv.totalBytes >= PROGRESS_MIN_BYTES;
    const bar = showBar
      ? new cliProgress.SingleBar(
          {
            format: 'Importing {bar} {percentage}% | {rows} rows | created {created}, updated {updated}, invalid {invalid}',
            hideCursor: true,
            stream: io.stderr as NodeJS.WriteStream,
          },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
    bar?.start(csv.totalBytes, 0, summary);
    try {
      for await (const chunk of csv.chunks()) {
        summary.rows = chunk.rowsRead;
        summary.invalid += chunk.missingPhone + chunk.badRows.length;
        keep(chunk.missingPhoneLines.map((line) => ({ line, problem: 'no phone' })));
        keep(chunk.badRows);
        if (chunk.contacts.length > 0) {
          const res = await data(ctx.api.PUT('/admin/companies/{company_id}/contacts', { params: { path: { company_id: companyId } }, body: { contacts: chunk.contacts } }));
          summary.requests++;
          summary.created += res?.created ?? 0;
          summary.updated += res?.updated ?? 0;
          summary.invalid += res?.invalid ?? 0;
          if ((res?.invalid ?? 0) > 0 && invalidRows.length < INVALID_ROWS_KEPT) {
            const country = await countryOf();
            if (country) keep(invalidNumbers(chunk, country));
          }
        }
        bar?.update(Math.min(csv.bytesRead(), csv.totalBytes), summary);
      }
      bar?.update(csv.totalBytes, summary);
    } catch (err) {
      bar?.stop();
      if (summary.requests > 0 && !ctx.json) {
        io.stderr.write(
          `cms: stopped after ${summary.requests} request(s) (${summary.created} created, ${summary.updated} updated); ` +
            'importing the file again is safe: contacts are matched by phone.\n',
        );
      }
      throw err;
    }
    bar?.stop();
    invalidRows.sort((a, b) => a.line - b.line);
    if (ctx.json) {
      printJson(io, invalidRows.length ? { ...summary, invalid_rows: invalidRows } : summary);
    } else {
      printRecord(io,
        { created: summary.created, updated: summary.updated, invalid: summary.invalid, rows: summary.rows, requests: summary.requests },
        `Contacts imported into company ${opts.company}:`,
      );
      if (summary.invalid > 0) {
        printLine(io);
        printLine(io, `Rows not imported (${summary.invalid}):`);
        for (const r of invalidRows.slice(0, INVALID_ROWS_SHOWN)) {
          printLine(io, `  line ${r.line}: ${r.phone === undefined ? '' : `${JSON.stringify(r.phone)} `}${r.problem}`);
        }
        const unnamed = summary.invalid - Math.min(invalidRows.length, INVALID_ROWS_SHOWN);
        if (unnamed > 0) printLine(io, `  ... and ${unnamed} more${invalidRows.length > INVALID_ROWS_SHOWN ? ' (--json lists them)' : ''}`);
      }
    }
  });
}
