/**
 * Entry point of the `cms` command-line tool (bin/cms.js imports this module).
 * Runs the command from process.argv and sets the process exit code (see program.ts).
 */
import { processIo } from './io.ts';
import { run } from './program.ts';

// A closed pipe (`cms ... | head`) is not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

process.exitCode = await run(process.argv, processIo());
