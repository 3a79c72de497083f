/**
 * `cms company create|update|list|show`: POST /admin/companies, PATCH /admin/companies/{company_id},
 * GET /admin/companies (newest first) and GET /admin/companies/{company_id} (docs/operator-api.md). Prints the company the server returns.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { CompanyUpdate, DeliveryHours } from '../api/types.ts';
import { parseFrequencyCap, type FrequencyCapOption } from './audience.ts';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { UsageError } from '../errors.ts';
import { printJson, printRecord, printTable } from '../output.ts';
import { parseCountry, parseDeliveryHours, parseNonEmpty } from '../parse.ts';
import type { CliIo } from '../io.ts';

interface CompanyOptions {
  name?: string;
  subscriptionActive?: boolean;
  defaultCountry?: string;
  deliveryHours?: DeliveryHours | 'none';
  optOutKeywords?: string[];
  optInKeywords?: string[];
  frequencyCap?: FrequencyCapOption;
}

/** `--opt-out-keywords STOP,ENDE`: a comma-separated list of keywords (docs/decisions.md#9-whatsapp-webhooks-in). */
export function parseKeywords(value: string): string[] {
  const list = value.split(',').map((k) => k.trim()).filter(Boolean);
  if (list.length === 0) throw new InvalidArgumentError('give at least one keyword, e.g. STOP,ENDE');
  return list;
}

/** Add the company fields as options; `--name` is required for create. */
function addCompanyOptions(cmd: Command, nameRequired: boolean): Command {
  if (nameRequired) cmd.requiredOption('--name <name>', 'company name', parseNonEmpty);
  else cmd.option('--name <name>', 'new company name', parseNonEmpty);
  return cmd
    .option('--subscription-active', 'the company has an active subscription')
    .option('--no-subscription-active', 'the company has no active subscription')
    .option('--default-country <CC>', 'country for phone numbers without +prefix, e.g. DE', parseCountry)
    .option(
      '--delivery-hours <spec>',
      'campaign delivery window HH:MM-HH:MM@Area/City, e.g. 09:00-21:00@Europe/Berlin, or "none"',
      parseDeliveryHours,
    )
    .option('--opt-out-keywords <list>', 'inbound texts that opt a contact out of campaigns, comma-separated, e.g. STOP,ENDE', parseKeywords)
    .option('--opt-in-keywords <list>', 'inbound texts that opt a contact back in, comma-separated, e.g. START', parseKeywords)
    .option('--frequency-cap <N/DURATION>', 'at most N campaign messages per contact within DURATION (m, h or d), e.g. 3/7d, or "none"', parseFrequencyCap);
}

/** Map parsed options onto the API body, leaving out what was not given. */
function companyBody(o: CompanyOptions): CompanyUpdate {
  const body: CompanyUpdate = {};
  if (o.optOutKeywords !== undefined) body.opt_out_keywords = o.optOutKeywords;
  if (o.optInKeywords !== undefined) body.opt_in_keywords = o.optInKeywords;
  if (o.name !== undefined) body.name = o.name;
  if (o.subscriptionActive !== undefined) body.subscription_active = o.subscriptionActive;
  if (o.defaultCountry !== undefined) body.default_country = o.defaultCountry;
  if (o.deliveryHours !== undefined) body.delivery_hours = o.deliveryHours === 'none' ? null : o.deliveryHours;
  if (o.frequencyCap !== undefined) body.frequency_cap = o.frequencyCap === 'none' ? null : o.frequencyCap;
  return body;
}

/** Register `company create`, `company update ID`, `company list` and `company show ID` on `program`. */
export function registerCompany(program: Command, io: CliIo): void {
  const group = program.command('company').description('create and update companies (tenants)');

  addCommonOptions(
    addCompanyOptions(group.command('create').description('create a company (POST /admin/companies)'), true),
  ).action(async (opts: CompanyOptions, cmd: Command) => {
    const ctx = await contextFor(cmd, io);
    const body = companyBody(opts);
    const company = await data(ctx.api.POST('/admin/companies', { body: { ...body, name: opts.name as string } }));
    if (ctx.json) printJson(io, company);
    else printRecord(io, company, 'Company created:');
  });

  addCommonOptions(
    addCompanyOptions(
      group
        .command('update')
        .description('change a company (PATCH /admin/companies/{id}); only the given fields change')
        .argument('<company-id>', 'company id', parseNonEmpty),
      false,
    ),
  ).action(async (id: string, opts: CompanyOptions, cmd: Command) => {
    const body = companyBody(opts);
    if (Object.keys(body).length === 0) {
      throw new UsageError(
        'nothing to update: give --name, --[no-]subscription-active, --default-country, --delivery-hours, --opt-out-keywords, --opt-in-keywords or --frequency-cap',
      );
    }
    const companyId = integerId(id, 'company id');
    const ctx = await contextFor(cmd, io);
    const company = await data(ctx.api.PATCH('/admin/companies/{company_id}', { params: { path: { company_id: companyId } }, body }));
    if (ctx.json) printJson(io, company);
    else printRecord(io, company, 'Company updated:');
  });

  addCommonOptions(group.command('list').description('list the companies, newest first')).action(async (_opts: unknown, cmd: Command) => {
    const ctx = await contextFor(cmd, io);
    const { companies } = await data(ctx.api.GET('/admin/companies'));
    if (ctx.json) return printJson(io, { companies });
    printTable(io, companies, [
      { key: 'company_id', header: 'id' }, { key: 'name' }, { key: 'subscription_active', header: 'subscription' },
      { key: 'default_country', header: 'country' }, { key: 'delivery_hours' },
      { key: 'channel', format: (_v, c) => c.channel.provider }, { key: 'created_at' },
    ], '(no companies)');
  });

  addCommonOptions(
    group.command('show').description('show one company').argument('<company-id>', 'company id', parseNonEmpty),
  ).action(async (id: string, _opts: unknown, cmd: Command) => {
    const companyId = integerId(id, 'company id');
    const ctx = await contextFor(cmd, io);
    const company = await data(ctx.api.GET('/admin/companies/{company_id}', { params: { path: { company_id: companyId } } }));
    if (ctx.json) printJson(io, company);
    else printRecord(io, company, `Company ${company.company_id}:`);
  });
}
