/**
 * `cms whatsapp templates sync|list|submit --company ID`: a company's WhatsApp template catalogue
 * (docs/whatsapp.md "Template catalogue"):
 *
 * - `sync`: POST /admin/companies/{company_id}/whatsapp/templates/sync (prints how many templates);
 * - `list`: GET /admin/companies/{company_id}/whatsapp/templates (name, language, status, category,
 *   quality, rejection reason, parameters);
 * - `submit --name N --language L --category C --components FILE.json`: POST
 *   /admin/companies/{company_id}/whatsapp/templates with Meta's components from FILE (a JSON array;
 *   `-` reads stdin).
 *
 * `cms whatsapp rate-card load FILE|show`: the operator's rate card (docs/whatsapp.md "Pricing and the
 * rate card"):
 *
 * - `load FILE`: PUT /admin/whatsapp/rate-card with the file: `.csv` (or `-` with `--csv`) as text/csv,
 *   otherwise JSON (`{"rows": [...]}` or the bare array of rows); prints the stored card;
 * - `show`: GET /admin/whatsapp/rate-card (country, category, price, currency).
 */
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { CliError } from '../errors.ts';
import { inCwd, type CliIo } from '../io.ts';
import { printJson, printLine, printRecord, printTable } from '../output.ts';
import { parseNonEmpty } from '../parse.ts';

/** Meta's components from a JSON file (an array of objects); `-` reads stdin. Throws CliError. */
export async function loadComponents(io: CliIo, file: string): Promise<Record<string, unknown>[]> {
  let text: string;
  try {
    if (file === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      text = Buffer.concat(chunks).toString('utf8');
    } else {
      text = await readFile(inCwd(io, file), 'utf8');
    }
  } catch (err) {
    throw new CliError(`cannot read components file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CliError(`components file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(parsed) || !parsed.every((c) => c && typeof c === 'object' && !Array.isArray(c))) {
    throw new CliError(`components file ${file} must hold a JSON array of Meta's components ([{"type":"BODY","text":"..."}, ...])`);
  }
  return parsed as Record<string, unknown>[];
}

const parameters = (p: unknown) => {
  const x = p as { header?: unknown; body?: unknown; buttons?: unknown[] } | undefined;
  return x ? `header ${String(x.header)}, body ${String(x.body)}, buttons [${(x.buttons ?? []).join(', ')}]` : '';
};

/** A rate card file: its text and whether it is CSV (by `.csv`, or `--csv`). Throws CliError. */
async function readCardFile(io: CliIo, file: string): Promise<string> {
  try {
    if (file !== '-') return await readFile(inCwd(io, file), 'utf8');
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    return Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    throw new CliError(`cannot read rate card file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** The rows of a JSON rate card file: `{"rows": [...]}` or the bare array. Throws CliError. */
function jsonCardRows(file: string, text: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CliError(`rate card file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const rows = Array.isArray(parsed) ? parsed : (parsed as { rows?: unknown } | null)?.rows;
  if (!Array.isArray(rows)) throw new CliError(`rate card file ${file} must hold {"rows": [{country, category, price, currency}, ...]} or that array`);
  return rows;
}

type CardAnswer = { rows: { country: string; category: string; price: number; currency: string }[]; currency: string | null; updated_at: string | null };

function printCard(io: CliIo, card: CardAnswer, title: string): void {
  printLine(io, card.updated_at === null ? `${title}: no rate card loaded yet.` : `${title}: ${card.rows.length} rate${card.rows.length === 1 ? '' : 's'} in ${card.currency ?? '-'}, updated ${card.updated_at}.`);
  if (card.rows.length > 0) printTable(io, card.rows, [{ key: 'country' }, { key: 'category' }, { key: 'price' }, { key: 'currency' }], '');
}

/** Register `whatsapp templates sync|list|submit` and `whatsapp rate-card load|show` on `program`. */
export function registerWhatsapp(program: Command, io: CliIo): void {
  const group = program.command('whatsapp').description("WhatsApp: a company's template catalogue; the rate card");
  const templates = group.command('templates').description("a company's WhatsApp message templates (synced from Meta)");

  addCommonOptions(
    templates
      .command('sync')
      .description("replace the company's catalogue with Meta's templates")
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const res = await data(ctx.api.POST('/admin/companies/{company_id}/whatsapp/templates/sync', { params: { path: { company_id: companyId } } }));
    if (ctx.json) printJson(io, res);
    else printLine(io, `Synced: company ${companyId} has ${res.templates} WhatsApp template${res.templates === 1 ? '' : 's'}.`);
  });

  addCommonOptions(
    templates
      .command('list')
      .description("list the company's catalogue (as last synced)")
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const res = await data(ctx.api.GET('/admin/companies/{company_id}/whatsapp/templates', { params: { path: { company_id: companyId } } }));
    if (ctx.json) return printJson(io, res);
    printTable(io, res.templates, [
      { key: 'name' }, { key: 'language' }, { key: 'status' }, { key: 'category' }, { key: 'quality_score', header: 'quality' },
      { key: 'rejected_reason', header: 'rejected' }, { key: 'parameters', format: (v) => parameters(v) }, { key: 'template_id', header: 'id' },
    ], '(no templates: sync the catalogue first)');
  });

  addCommonOptions(
    templates
      .command('submit')
      .description('submit a template to Meta for review (stored as Meta answers, usually PENDING)')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .requiredOption('--name <name>', 'template name: lower-case letters, digits and underscores', parseNonEmpty)
      .requiredOption('--language <code>', 'language code, e.g. en or en_US', parseNonEmpty)
      .addOption(new Option('--category <category>', 'template category').choices(['MARKETING', 'UTILITY', 'AUTHENTICATION']).makeOptionMandatory())
      .requiredOption('--components <file>', "JSON file with Meta's components (an array; - reads stdin)", parseNonEmpty),
  ).action(async (opts: { company: string; name: string; language: string; category: 'MARKETING' | 'UTILITY' | 'AUTHENTICATION'; components: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const components = await loadComponents(io, opts.components);
    const ctx = await contextFor(cmd, io);
    const res = await data(ctx.api.POST('/admin/companies/{company_id}/whatsapp/templates', {
      params: { path: { company_id: companyId } },
      body: { name: opts.name, language: opts.language, category: opts.category, components },
    }));
    if (ctx.json) return printJson(io, res);
    const { components: _c, parameters: p, ...shown } = res;
    printRecord(io, { ...shown, parameters: parameters(p) }, 'Template submitted:');
  });

  const card = group.command('rate-card').description("the operator's WhatsApp rate card (Meta's price per delivered template message)");
  addCommonOptions(
    card
      .command('load')
      .description('replace the rate card with a file: CSV (country,category,price,currency header) or JSON')
      .argument('<file>', 'a .csv or .json file (- reads stdin: JSON, or CSV with --csv)')
      .option('--csv', 'the file is CSV whatever its name'),
  ).action(async (file: string, opts: { csv?: boolean }, cmd: Command) => {
    const text = await readCardFile(io, file);
    const csv = opts.csv === true || /\.csv$/i.test(file);
    const rows = csv ? undefined : jsonCardRows(file, text);
    const ctx = await contextFor(cmd, io);
    const res = await data(csv
      ? ctx.api.PUT('/admin/whatsapp/rate-card', { body: text as never, bodySerializer: (b: unknown) => b as string, headers: { 'content-type': 'text/csv' } })
      : ctx.api.PUT('/admin/whatsapp/rate-card', { body: { rows } as never }));
    if (ctx.json) return printJson(io, res);
    printCard(io, res as CardAnswer, 'Rate card loaded');
  });

  addCommonOptions(card.command('show').description('show the rate card')).action(async (_opts: unknown, cmd: Command) => {
    const ctx = await contextFor(cmd, io);
    const res = await data(ctx.api.GET('/admin/whatsapp/rate-card'));
    if (ctx.json) return printJson(io, res);
    printCard(io, res, 'Rate card');
  });
}
