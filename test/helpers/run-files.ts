/**
 * Entry point of one test process of test/run.ts: runs the test files named in CMS_TEST_FILES (a JSON
 * array of paths relative to the repository root) one after another in this process, each inside a
 * `describe` named after the file.
 *
 * A file's module-level `before` / `after` / `beforeEach` / `afterEach` hooks then belong to the file's
 * own suite: they run around that file's tests only, exactly as when the file has a process of its own
 * (without the suite, Node's `--test-isolation=none` would run every file's `before` first and every
 * `after` last). What the files share is what a process holds: loaded and compiled modules, the
 * compiled PGlite WebAssembly, warm JIT code. Each file still starts and closes its own servers and
 * databases. Run with `node --test --test-isolation=none --test-force-exit`.
 *
 * Known limit (why test/run.ts does not group by default): Node runs every `describe` callback at once,
 * so the imports overlap, and a file whose module is evaluated while an earlier file's suite runs can
 * have its tests and hooks counted in that earlier suite (seen with events/failures + receipts/gateway).
 * The tests still run and pass; per-file hook order is not guaranteed then.
 */
import path from 'node:path';
import { describe } from 'node:test';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '../..');
const files = JSON.parse(process.env.CMS_TEST_FILES ?? '[]') as string[];

for (const file of files) {
  describe(file, async () => {
    await import(pathToFileURL(path.join(root, file)).href);
  });
}
