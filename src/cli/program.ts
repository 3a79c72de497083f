/**
 * The `cms` command tree (commander) and `run`, which parses argv, runs the command and turns
 * errors into one message plus an exit code (errors.ts `EXIT`) instead of a stack trace.
 * Program-level `--url/--token/--json` go before the command (`cms --json company create ...`);
 * every API command also accepts them after its name.
 */
import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { registerAudit } from './commands/audit.ts';
import { registerAutomation } from './commands/automation.ts';
import { registerBatch } from './commands/batch.ts';
import { registerCampaign } from './commands/campaign.ts';
import { registerCampaignSend } from './commands/campaign-send.ts';
import { registerChannel } from './commands/channel.ts';
import { registerCompany } from './commands/company.ts';
import { registerConnector } from './commands/connector.ts';
import { registerContacts } from './commands/contacts.ts';
import { registerEvents } from './commands/events.ts';
import { registerKey } from './commands/key.ts';
import { registerSegment } from './commands/segment.ts';
import { registerOverview } from './commands/overview.ts';
import { registerServe } from './commands/serve.ts';
import { registerUser } from './commands/user.ts';
import { addCommonOptions, commonOptions } from './context.ts';
import { EXIT, describeError } from './errors.ts';
import { printError } from './output.ts';

const version = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** Build the full command tree. `onAction` is told which command is about to run. */
export function buildProgram(onAction?: (cmd: Command) => void): Command {
  const program = new Command('cms')
    .description('Contact Messaging Service: operator command-line tool (client of the /admin API)')
    .version(version)
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`cms: ${text}`) })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      '\nConnection: --url or CMS_URL (default http://127.0.0.1:$PORT, port 8000); admin token: --token,\n' +
        'ADMIN_TOKEN, or the file $DATA_DIR/admin-token (DATA_DIR defaults to ./data).\n' +
        'Exit codes: 0 ok, 1 request refused or local failure, 2 usage error, 3 server unreachable.',
    );
  addCommonOptions(program);
  if (onAction) program.hook('preAction', (_root, actionCommand) => onAction(actionCommand));
  registerCompany(program);
  registerKey(program);
  registerAutomation(program);
  registerCampaign(program);
  registerConnector(program);
  registerChannel(program);
  registerContacts(program);
  registerSegment(program);
  registerBatch(program);
  registerOverview(program);
  registerCampaignSend(program);
  registerAudit(program);
  registerEvents(program);
  registerUser(program);
  registerServe(program);
  return program;
}

/** Run `cms` with a full `process.argv`-style array; resolves to the exit code. Never throws. */
export async function run(argv: string[]): Promise<number> {
  let active: Command | undefined;
  const program = buildProgram((cmd) => {
    active = cmd;
  });
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const json = active ? commonOptions(active).json : argv.includes('--json');
    const report = describeError(err);
    printError(report, json);
    return report.exitCode;
  }
}
