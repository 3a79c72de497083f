/**
 * `npm test`: runs the given test files (globs) with Node's test runner, each file in its own process.
 *
 * On the embedded PGlite every file has a database of its own (a copy of the migrated template, see
 * `pgliteTemplate` in test/helpers/server.ts) and listens on a port of its own, so files run
 * TEST_CONCURRENCY at a time (default 2). On PostgreSQL (TEST_DATABASE_URL) the files share one
 * database and pg-boss's queues in it — one file's workers would take another file's jobs — so they run
 * one at a time. The runner's exit code is the test run's.
 */
import { spawnSync } from 'node:child_process';

const globs = process.argv.slice(2);
const concurrency = process.env.TEST_DATABASE_URL ? 1 : Number(process.env.TEST_CONCURRENCY ?? 2);
const run = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...globs], { stdio: 'inherit' });
process.exit(run.status ?? 1);
