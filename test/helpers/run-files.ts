/**
 * Entry point of one test process of test/run.ts: runs the test files named in CMS_TEST_FILES (a JSON
 * array of paths relative to the repository root) one after another in this process, each inside a
 * `describe` named after the file.
 *
 * A file's module-level `before` / `after` / `beforeEach` / `afterEach` hooks then belong to the file's
 * own suite: they run around that file's tests only, exactly as when the file has a process of its own
 * (without the suite, Node's `--test-isolation=none` would run every file's `before` first and every
 * `after` last). What the files share is what a process holds: loaded and compiled modules, the
 * compiled PGlite WebAssembly, warm JIT code, and the servers with default options a file closes
 * (kept for the next file that starts one: enableServerPool in test/helpers/server.ts); the other
 * servers and databases are each file's own. Run with `node --test --test-isolation=none --test-force-exit`.
 *
 * The files are imported one after another: the next file's suite is made only once the previous
 * file's module has been evaluated. Node runs a `describe` callback as soon as the suite is made, and a
 * test or hook belongs to the suite whose callback started the evaluation of its module; were the
 * imports left to overlap, a file evaluated as part of an earlier file's import (their module graphs
 * meet) would have its tests counted in that earlier suite (seen with events/failures +
 * receipts/gateway). One after another, each file's module is evaluated by its own import, inside its
 * own suite (the import is started synchronously in the callback: after an `await` the callback is no
 * longer in the suite's context).
 */
import path from 'node:path';
import { after, describe } from 'node:test';
import { pathToFileURL } from 'node:url';
import { closeServerPool, enableServerPool } from './server.ts';

const root = path.resolve(import.meta.dirname, '../..');
const files = JSON.parse(process.env.CMS_TEST_FILES ?? '[]') as string[];

// A server a file closes is kept for the next file of the process (test/helpers/server.ts
// enableServerPool; not with CMS_TEST_POOL=0); the kept ones are closed after the last file.
if (process.env.CMS_TEST_POOL !== '0') {
  enableServerPool();
  after(closeServerPool);
}

for (const file of files) {
  const { promise: imported, resolve } = Promise.withResolvers<void>();
  describe(file, () => {
    // Called at once, inside the suite's callback: the module's tests and hooks are this suite's.
    const loading = import(pathToFileURL(path.join(root, file)).href);
    loading.then(() => resolve(), () => resolve());
    return loading;
  });
  // The next file's suite is made only once this file's module has been evaluated.
  await imported;
}
