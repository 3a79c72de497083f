/**
 * `cms segment list|create|rename|delete|add|remove|members`: the operator API's segment
 * routes (src/http/admin/segments.ts), with the rules of the console's Segments pages:
 *
 * - `list --company ID`, `create --company ID --name NAME [--filter JSON]` (docs/api.md 4.1: 1 to 255
 *   characters, at most 20 segments; with `--filter` a dynamic segment, docs/segments.md),
 *   `preview --company ID --filter JSON` (the count and first 10 contacts a filter matches now), `rename SEGMENT_ID --name NAME`, `delete SEGMENT_ID` (memberships go, contacts stay;
 *   campaign sends already made from it are unchanged);
 * - `add|remove SEGMENT_ID [NUMBER...] [--file CSV] [--hashed]`: members by numbers or SHA-256 digests
 *   (docs/api.md 4.2's matching), given as arguments (several per argument separated by commas are fine) or
 *   as a CSV file read by the console's rules (src/domain/segment-lists.ts: UTF-8, comma-separated, at
 *   most 5 MiB, the `phone` / `digest` column or the first). Prints the summary: added or removed,
 *   unchanged, not found, invalid with the file line (or argument number) of each. A file of more than
 *   100,000 items is sent in requests of 100,000 and the counts added up;
 * - `members SEGMENT_ID [--after CONTACT_ID] [--limit N] [--all]`: one page (or, with --all, every page)
 *   of members; the next page's `--after` is printed.
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { itemsFromCsv, itemsFromText, ListError, type ListItem } from '../../domain/segment-lists.ts';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor, type CommandContext } from '../context.ts';
import { CliError, UsageError } from '../errors.ts';
import { printJson, printLine, printRecord, printTable } from '../output.ts';
import { parseNonEmpty, parsePositiveInt } from '../parse.ts';
import { inCwd, type CliIo } from '../io.ts';

/** A `--filter` argument: a JSON object (usage error otherwise). */
function parseFilterJson(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError('must be JSON, e.g. \'{"tag":"vip"}\'.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidArgumentError('must be a JSON object, e.g. \'{"tag":"vip"}\'.');
  return value as Record<string, unknown>;
}

/** Items per request of `add` / `remove` (the operator API's limit). */
const ITEMS_PER_REQUEST = 100_000;

/** One page of members as the API answers it. */
interface SegmentMember { contact_id: number; phone: string; first_name: string | null; last_name: string | null; added_at: string | null }
interface SegmentMembersPage { segment_id: number; members_total: number; members: SegmentMember[]; next_after: number | null }

/** A change of members as the API answers it (and as `add` / `remove` print it, summed over requests). */
interface Change {
  segment_id: number;
  mode: 'add' | 'delete';
  contacts_provided: number;
  contacts_processed: number;
  contacts_unchanged: number;
  contacts_not_found: number;
  contacts_invalid: number;
  invalid: { position: number; value: string }[];
}

/** The items of `add` / `remove`: from `--file`, else from the arguments (position: argument number). */
async function itemsOf(io: CliIo, args: string[], file: string | undefined, hashed: boolean): Promise<{ items: ListItem[]; where: string }> {
  if (file !== undefined) {
    if (args.length) throw new UsageError('give numbers as arguments or --file, not both');
    let bytes: Buffer;
    try {
      bytes = await readFile(inCwd(io, file));
    } catch (err) {
      throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
    }
    try {
      return { items: itemsFromCsv(bytes, hashed), where: `${file} line` };
    } catch (err) {
      if (err instanceof ListError) throw new CliError(`${file}: ${err.message}`);
      throw err;
    }
  }
  if (!args.length) throw new UsageError(`give ${hashed ? 'digests' : 'phone numbers'} as arguments, or --file CSV`);
  return { items: itemsFromText(args.join('\n')), where: 'argument' };
}

/** Sends the items in requests of ITEMS_PER_REQUEST; positions in the answer are mapped back to lines / arguments. */
async function change(ctx: CommandContext, segmentId: number, mode: 'add' | 'delete', hashed: boolean, items: ListItem[]): Promise<Change> {
  if (items.length === 0) throw new CliError(`no ${hashed ? 'digests' : 'phone numbers'} found in the input`);
  let total: Change | undefined;
  for (let i = 0; i < items.length; i += ITEMS_PER_REQUEST) {
    const part = items.slice(i, i + ITEMS_PER_REQUEST);
    const r: Change = await data(ctx.api.POST('/admin/segments/{segment_id}/members', {
      params: { path: { segment_id: segmentId } },
      body: { mode, contacts: part.map((x) => x.value), use_hashed_phone: hashed },
    }));
    const invalid = r.invalid.map((x) => ({ position: part[x.position - 1]?.position ?? x.position, value: x.value }));
    total = total === undefined ? { ...r, invalid } : {
      ...total,
      contacts_provided: total.contacts_provided + r.contacts_provided,
      contacts_processed: total.contacts_processed + r.contacts_processed,
      contacts_unchanged: total.contacts_unchanged + r.contacts_unchanged,
      contacts_not_found: total.contacts_not_found + r.contacts_not_found,
      contacts_invalid: total.contacts_invalid + r.contacts_invalid,
      invalid: [...total.invalid, ...invalid],
    };
  }
  return total!;
}

/** Prints a change's summary (see the module comment). */
function printChange(io: CliIo, c: Change, where: string): void {
  const add = c.mode === 'add';
  printRecord(io, {
    segment_id: c.segment_id,
    [add ? 'added' : 'removed']: c.contacts_processed,
    [add ? 'already_members' : 'were_not_members']: c.contacts_unchanged,
    not_found: c.contacts_not_found,
    invalid: c.contacts_invalid,
  }, add ? 'Members added:' : 'Members removed:');
  if (c.invalid.length) {
    printLine(io, 'Invalid (not a phone number' + (c.invalid.length < c.contacts_invalid ? `; the first ${c.invalid.length} listed` : '') + '):');
    for (const x of c.invalid) printLine(io, `  ${where} ${x.position}: ${x.value}`);
  }
}

/** Register the `segment` command group on `program`. */
export function registerSegment(program: Command, io: CliIo): void {
  const group = program.command('segment').description('segments of a company: create, rename, delete, members (the rules of docs/api.md 4.1 / 4.2)');

  addCommonOptions(
    group.command('list').description("list a company's segments with member counts")
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const { segments } = await data(ctx.api.GET('/admin/companies/{company_id}/segments', { params: { path: { company_id: companyId } } }));
    if (ctx.json) printJson(io, segments);
    else printTable(io, segments, [{ key: 'segment_id' }, { key: 'name' }, { key: 'members' }, { key: 'created_at' }], '(no segments)');
  });

  addCommonOptions(
    group.command('create').description('create an empty segment, or a dynamic one with --filter (1 to 255 characters; at most 20 per company)')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .requiredOption('--name <name>', 'segment name', parseNonEmpty)
      .option('--filter <json>', 'a filter (docs/segments.md "The filter language"): the segment is dynamic', parseFilterJson),
  ).action(async (opts: { company: string; name: string; filter?: Record<string, unknown> }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const body = opts.filter === undefined ? { name: opts.name } : { name: opts.name, filter: opts.filter };
    const seg = await data(ctx.api.POST('/admin/companies/{company_id}/segments', { params: { path: { company_id: companyId } }, body }));
    if (ctx.json) printJson(io, seg);
    else printRecord(io, { ...seg, filter: seg.filter === null ? null : JSON.stringify(seg.filter) }, 'Segment created:');
  });

  addCommonOptions(
    group.command('preview').description('how many contacts a filter matches now, and the first 10')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .requiredOption('--filter <json>', 'a filter (docs/segments.md "The filter language")', parseFilterJson),
  ).action(async (opts: { company: string; filter: Record<string, unknown> }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const preview = await data(ctx.api.POST('/admin/companies/{company_id}/segments/preview', { params: { path: { company_id: companyId } }, body: { filter: opts.filter } }));
    if (ctx.json) {
      printJson(io, preview);
      return;
    }
    printTable(io, preview.sample, [{ key: 'contact_id' }, { key: 'phone' }, { key: 'first_name' }, { key: 'last_name' }], '(no contacts)');
    printLine(io, `${preview.count} contact${preview.count === 1 ? '' : 's'} match`);
  });

  addCommonOptions(
    group.command('rename').description('rename a segment')
      .argument('<segment-id>', 'segment id', parseNonEmpty)
      .requiredOption('--name <name>', 'new name', parseNonEmpty),
  ).action(async (segmentId: string, opts: { name: string }, cmd: Command) => {
    const id = integerId(segmentId, 'segment id');
    const ctx = await contextFor(cmd, io);
    const seg = await data(ctx.api.PATCH('/admin/segments/{segment_id}', { params: { path: { segment_id: id } }, body: { name: opts.name } }));
    if (ctx.json) printJson(io, seg);
    else printRecord(io, seg, 'Segment renamed:');
  });

  addCommonOptions(
    group.command('delete').description('delete a segment and its memberships (contacts stay; sends already made are unchanged)')
      .argument('<segment-id>', 'segment id', parseNonEmpty),
  ).action(async (segmentId: string, _opts: unknown, cmd: Command) => {
    const id = integerId(segmentId, 'segment id');
    const ctx = await contextFor(cmd, io);
    const seg = await data(ctx.api.DELETE('/admin/segments/{segment_id}', { params: { path: { segment_id: id } } }));
    if (ctx.json) printJson(io, seg);
    else printLine(io, `Segment ${seg.segment_id} (${seg.name}) deleted with its ${seg.members} membership${seg.members === 1 ? '' : 's'}.`);
  });

  for (const [name, mode, verb] of [['add', 'add', 'add existing contacts to'], ['remove', 'delete', 'remove contacts from']] as const) {
    addCommonOptions(
      group.command(name).description(`${verb} a segment by phone numbers or SHA-256 digests (arguments or --file CSV)`)
        .argument('<segment-id>', 'segment id', parseNonEmpty)
        .argument('[numbers...]', 'phone numbers (or digests with --hashed); commas separate several in one argument')
        .option('--file <csv>', 'a CSV file (UTF-8, comma-separated, at most 5 MiB): the phone (or digest) column, or the first')
        .option('--hashed', 'the items are SHA-256 hex digests of the E.164 numbers'),
    ).action(async (segmentId: string, numbers: string[], opts: { file?: string; hashed?: boolean }, cmd: Command) => {
      const id = integerId(segmentId, 'segment id');
      const hashed = opts.hashed ?? false;
      const { items, where } = await itemsOf(io, numbers, opts.file, hashed);
      const ctx = await contextFor(cmd, io);
      const result = await change(ctx, id, mode, hashed, items);
      if (ctx.json) printJson(io, result);
      else printChange(io, result, where);
    });
  }

  addCommonOptions(
    group.command('members').description('list members of a segment, in pages (contact id order)')
      .argument('<segment-id>', 'segment id', parseNonEmpty)
      .option('--after <contact-id>', 'start after this contact id (the "next" of the previous page)', parseNonEmpty)
      .option('--limit <n>', 'members per page (1 to 1000, default 50)', parsePositiveInt)
      .option('--all', 'every page'),
  ).action(async (segmentId: string, opts: { after?: string; limit?: number; all?: boolean }, cmd: Command) => {
    const id = integerId(segmentId, 'segment id');
    let after: number | null = opts.after === undefined ? 0 : integerId(opts.after, '--after');
    const ctx = await contextFor(cmd, io);
    const members: SegmentMember[] = [];
    let total = 0;
    do {
      const page: SegmentMembersPage = await data(ctx.api.GET('/admin/segments/{segment_id}/members', {
        params: { path: { segment_id: id }, query: { after: after ?? 0, ...(opts.limit ? { limit: opts.limit } : {}) } },
      }));
      members.push(...page.members);
      total = page.members_total;
      after = page.next_after;
    } while (opts.all && after !== null);
    if (ctx.json) {
      printJson(io, { segment_id: id, members_total: total, members, next_after: after });
      return;
    }
    printTable(io, members, [{ key: 'contact_id' }, { key: 'phone' }, { key: 'first_name' }, { key: 'last_name' }, { key: 'added_at' }], '(no members)');
    printLine(io, `${members.length} of ${total} member${total === 1 ? '' : 's'}` + (after !== null ? `; next page: --after ${after}` : ''));
  });
}
