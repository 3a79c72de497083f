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
import { registerWhatsapp } from './commands/whatsapp.ts';
import { registerAudience } from './commands/audience.ts';
import { addCommonOptions, commonOptions } from './context.ts';
import { EXIT, describeError } from './errors.ts';
import type { CliIo } from './io.ts';
import { printError } from './output.ts';

const version = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** Whether `stream` shows colours: NO_COLOR and FORCE_COLOR as commander reads them, else a colour terminal. */
function hasColors(io: CliIo, stream: CliIo['stdout']): boolean {
  const { NO_COLOR, FORCE_COLOR } = io.env;
  if (NO_COLOR || FORCE_COLOR === '0' || FORCE_COLOR === 'false') return false;
  if (FORCE_COLOR) return true;
  return !!stream.isTTY && !!stream.hasColors?.();
}

/**
 * Build the full command tree for one run: its commands read and write through `io` (help and usage
 * errors too). `onAction` is told which command is about to run.
 */
export function buildProgram(io: CliIo, onAction?: (cmd: Command) => void): Command {
  const program = new Command('cms')
    .description('Contact Messaging Service: operator command-line tool (client of the /admin API)')
    .version(version)
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Commander's defaults, read from the run's streams and environment instead of the process's.
      getOutHelpWidth: () => (io.stdout.isTTY && io.stdout.columns) || 80,
      getErrHelpWidth: () => (io.stderr.isTTY && io.stderr.columns) || 80,
      getOutHasColors: () => hasColors(io, io.stdout),
      getErrHasColors: () => hasColors(io, io.stderr),
      outputError: (text, write) => write(`cms: ${text}`),
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      '\nConnection: --url or CMS_URL (default http://127.0.0.1:$PORT, port 8000); admin token: --token,\n' +
        'ADMIN_TOKEN, or the file $DATA_DIR/admin-token (DATA_DIR defaults to ./data).\n' +
        'Exit codes: 0 ok, 1 request refused or local failure, 2 usage error, 3 server unreachable.',
    );
  addCommonOptions(program);
  if (onAction) program.hook('preAction', (_root, actionCommand) => onAction(actionCommand));
  registerCompany(program, io);
  registerKey(program, io);
  registerAutomation(program, io);
  registerCampaign(program, io);
  registerConnector(program, io);
  registerChannel(program, io);
  registerContacts(program, io);
  registerSegment(program, io);
  registerBatch(program, io);
  registerOverview(program, io);
  registerAudit(program, io);
  registerEvents(program, io);
  registerUser(program, io);
  registerWhatsapp(program, io);
  registerAudience(program, io);
  registerServe(program);
  return program;
}

/**
 * Run `cms` with a full `process.argv`-style array, reading and writing through `io` (bin/cms.js: the
 * process's own, `processIo()`); resolves to the exit code. Never throws.
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  let active: Command | undefined;
  const program = buildProgram(io, (cmd) => {
    active = cmd;
  });
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version end with commander's exit code 0 unless process.exitCode was set before
      // (it reads that), which in a test process that runs commands means nothing for this run.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT.ok;
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const json = active ? commonOptions(active).json : argv.includes('--json');
    const report = describeError(err, io.env);
    printError(io, report, json);
    return report.exitCode;
  }
}
