/**
 * CLI parts of frequency caps and the consent ledger (docs/audience.md), registered on the existing
 * groups (call after registerCampaign and registerContacts):
 * - `cms contacts consent PHONE --company ID`: GET /admin/companies/{id}/contacts/{phone}/consent, the
 *   number's consent ledger oldest first (when, opted out or in, source, category, evidence);
 * - `cms campaign update CAMPAIGN_ID [--name N] [--expire-after D] [--ignore-frequency-cap |
 *   --no-ignore-frequency-cap]`: PATCH /admin/campaigns/{id};
 * - `--frequency-cap N/DURATION|none` of `cms company create|update` is parsed here
 *   ({@link parseFrequencyCap}).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { UsageError } from '../errors.ts';
import { formatValue, printJson, printRecord, printTable } from '../output.ts';
import { parseNonEmpty } from '../parse.ts';
import type { CliIo } from '../io.ts';
import { EXPIRE_AFTER_HELP, expireAfterValue } from './automation.ts';

/** A cap as the option gives it, or `none` (sent as null). */
export type FrequencyCapOption = { messages: number; per: string } | 'none';

/** `3/7d` → `{messages: 3, per: "7d"}`; `none` → 'none'. The server checks the bounds (422 naming the field). */
export function parseFrequencyCap(value: string): FrequencyCapOption {
  const v = value.trim();
  if (v.toLowerCase() === 'none') return 'none';
  const m = /^([0-9]{1,4})\s*\/\s*([1-9][0-9]{0,5}[mhd])$/.exec(v);
  if (!m) throw new InvalidArgumentError('expected N/DURATION, e.g. 3/7d (at most 3 campaign messages per contact within 7 days; units m, h, d), or "none".');
  return { messages: Number(m[1]), per: m[2] };
}

const group = (program: Command, name: string): Command => {
  const g = program.commands.find((c) => c.name() === name);
  if (!g) throw new Error(`cms: command group ${name} is not registered`);
  return g;
};

/** Registers the commands of the module comment. */
export function registerAudience(program: Command, io: CliIo): void {
  addCommonOptions(
    group(program, 'contacts')
      .command('consent')
      .description("show a number's consent ledger: every opt-out and opt-in with source, category and evidence, oldest first (kept after erasure)")
      .argument('<phone>', "phone number, E.164 or national (the company's default country)")
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (phone: string, opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const ledger = await data(ctx.api.GET('/admin/companies/{company_id}/contacts/{phone}/consent', { params: { path: { company_id: companyId, phone } } }));
    if (ctx.json) return printJson(io, ledger);
    printTable(io, ledger.entries, [
      { key: 'at' }, { key: 'opted_out', header: 'change', format: (v) => (v ? 'opted out' : 'opted in') }, { key: 'source' }, { key: 'category' },
      { key: 'evidence', format: (v) => (v && typeof v === 'object' ? Object.entries(v).map(([k, x]) => `${k}: ${formatValue(x)}`).join('; ') : '') },
    ], '(no change of consent recorded: subscribed by default)');
  });

  addCommonOptions(
    group(program, 'campaign')
      .command('update')
      .description("change a campaign's name, expiry or whether it ignores the company's frequency cap")
      .argument('<campaign-id>', 'campaign id', parseNonEmpty)
      .option('--name <name>', 'new name', parseNonEmpty)
      .option('--expire-after <duration>', EXPIRE_AFTER_HELP, parseNonEmpty)
      .option('--ignore-frequency-cap', "do not hold its messages to the company's frequency cap")
      .option('--no-ignore-frequency-cap', "hold its messages to the company's frequency cap again"),
  ).action(async (id: string, opts: { name?: string; expireAfter?: string; ignoreFrequencyCap?: boolean }, cmd: Command) => {
    const campaignId = integerId(id, 'campaign id');
    const body = {
      ...(opts.name !== undefined ? { name: opts.name } : {}),
      ...(opts.expireAfter !== undefined ? { expire_after: expireAfterValue(opts.expireAfter) } : {}),
      ...(opts.ignoreFrequencyCap !== undefined ? { ignore_frequency_cap: opts.ignoreFrequencyCap } : {}),
    };
    if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --name, --expire-after or --[no-]ignore-frequency-cap');
    const ctx = await contextFor(cmd, io);
    const campaign = await data(ctx.api.PATCH('/admin/campaigns/{campaign_id}', { params: { path: { campaign_id: campaignId } }, body }));
    if (ctx.json) return printJson(io, campaign);
    const { template: _t, warnings: _w, ...rest } = campaign as unknown as Record<string, unknown>;
    printRecord(io, rest, 'Campaign updated:');
  });
}
