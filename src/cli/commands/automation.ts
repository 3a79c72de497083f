/**
 * `cms automation create|update|list|show`: POST /admin/companies/{company_id}/automations,
 * PATCH /admin/automations/{automation_id}, GET /admin/companies/{company_id}/automations (newest first) and
 * GET /admin/automations/{automation_id} (docs/operator-api.md). Template from
 * `--template FILE` or `--body TEXT` (see ../templates.ts); `show` prints it in that file's form.
 */
import { Option, type Command } from 'commander';
import type { AutomationUpdate, Template } from '../api/types.ts';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { UsageError } from '../errors.ts';
import { oneLine, printJson, printLine, printRecord, printSource, printTable } from '../output.ts';
import { parseNonEmpty } from '../parse.ts';
import { takeWarnings, templateFromOptions } from '../templates.ts';
import type { CliIo } from '../io.ts';

interface CreateOptions {
  company: string;
  name: string;
  type: string;
  template?: string;
  body?: string;
  inactive?: boolean;
  expireAfter?: string;
}

/** `--expire-after` as the API takes it: a duration such as `24h`, or `none` for null (forever). */
export const expireAfterValue = (v: string): string | null => (v === 'none' ? null : v);

/** The help of `--expire-after`. */
export const EXPIRE_AFTER_HELP = 'how long its messages stay worth sending: a duration from 1s to 30d such as 30m, 24h, 2d, or "none" (forever)';

interface UpdateOptions {
  name?: string;
  active?: boolean;
  inactive?: boolean;
  template?: string;
  body?: string;
  expireAfter?: string;
}

/** Add `--template FILE` / `--body TEXT` (mutually exclusive). */
function templateOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--template <file>', 'template JSON file ("-" for stdin)').conflicts('body'))
    .option('--body <text>', 'shortcut: plain-text template {header: none, body: TEXT, buttons: []}');
}

/** Register `automation create`, `automation update ID`, `automation list --company ID` and `automation show ID`. */
export function registerAutomation(program: Command, io: CliIo): void {
  const group = program.command('automation').description('define message automations');

  addCommonOptions(
    templateOptions(
      group
        .command('create')
        .description('create an automation (active unless --inactive)')
        .requiredOption('--company <id>', 'company id', parseNonEmpty)
        .requiredOption('--name <name>', 'automation name', parseNonEmpty)
        .option('--type <type>', 'automation type; only "api" ones can be triggered over the API', 'api')
        .option('--inactive', 'create it inactive')
        .option('--expire-after <duration>', `${EXPIRE_AFTER_HELP} (default none)`, parseNonEmpty),
    ),
  ).action(async (opts: CreateOptions, cmd: Command) => {
    // The template file's content is sent as it is: the server checks it (422 naming the field).
    const template = (await templateFromOptions(io, opts, true)) as Template;
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const automation = await data(ctx.api.POST('/admin/companies/{company_id}/automations', {
      params: { path: { company_id: companyId } },
      body: { name: opts.name, type: opts.type, active: !opts.inactive, template, ...(opts.expireAfter !== undefined ? { expire_after: expireAfterValue(opts.expireAfter) } : {}) },
    }));
    if (ctx.json) printJson(io, automation);
    else printRecord(io, takeWarnings(io, automation), 'Automation created:');
  });

  addCommonOptions(
    templateOptions(
      group
        .command('update')
        .description('change an automation; only the given fields change')
        .argument('<automation-id>', 'automation id', parseNonEmpty)
        .option('--name <name>', 'new name', parseNonEmpty)
        .addOption(new Option('--active', 'activate it').conflicts('inactive'))
        .option('--inactive', 'deactivate it')
        .option('--expire-after <duration>', EXPIRE_AFTER_HELP, parseNonEmpty),
    ),
  ).action(async (id: string, opts: UpdateOptions, cmd: Command) => {
    const body: AutomationUpdate = {};
    if (opts.name !== undefined) body.name = opts.name;
    if (opts.active) body.active = true;
    if (opts.inactive) body.active = false;
    const template = (await templateFromOptions(io, opts, false)) as Template | undefined;
    if (template !== undefined) body.template = template;
    if (opts.expireAfter !== undefined) body.expire_after = expireAfterValue(opts.expireAfter);
    if (Object.keys(body).length === 0) {
      throw new UsageError('nothing to update: give --name, --active/--inactive, --template, --body or --expire-after');
    }
    const automationId = integerId(id, 'automation id');
    const ctx = await contextFor(cmd, io);
    const automation = await data(ctx.api.PATCH('/admin/automations/{automation_id}', { params: { path: { automation_id: automationId } }, body }));
    if (ctx.json) printJson(io, automation ?? { automation_id: id, updated: true });
    else if (automation && typeof automation === 'object') printRecord(io, takeWarnings(io, automation), 'Automation updated:');
    else printLine(io, `Automation ${id} updated.`);
  });

  addCommonOptions(
    group
      .command('list')
      .description("list a company's automations, newest first")
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const automations = await data(ctx.api.GET('/admin/companies/{company_id}/automations', { params: { path: { company_id: companyId } } }));
    if (ctx.json) return printJson(io, automations);
    printTable(io, automations, [
      { key: 'id' }, { key: 'name' }, { key: 'type' }, { key: 'active' },
      { key: 'template', header: 'body', format: (_v, a) => oneLine(a.template.body) }, { key: 'created_at' },
    ], '(no automations)');
  });

  addCommonOptions(
    group.command('show').description('show an automation with its template').argument('<automation-id>', 'automation id', parseNonEmpty),
  ).action(async (id: string, _opts: unknown, cmd: Command) => {
    const automationId = integerId(id, 'automation id');
    const ctx = await contextFor(cmd, io);
    const automation = await data(ctx.api.GET('/admin/automations/{automation_id}', { params: { path: { automation_id: automationId } } }));
    if (ctx.json) printJson(io, automation);
    else printSource(io, automation, `Automation ${automation.id}:`);
  });
}
