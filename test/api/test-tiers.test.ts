/**
 * Every test file is in the tier its name says (test/README.md): `*.browser.test.ts` drive Chromium
 * (test/console/helpers.ts launchBrowser), `*.process.test.ts` start child processes, and the other
 * `*.test.ts` files (the unit tier, `npm run test:unit`) do neither, so that the unit tier runs in the
 * test's process alone. A file is judged by the calls and imports in its text that start a browser or
 * a process (the helpers that do it are listed below).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SELF = path.relative(ROOT, import.meta.filename);

/** Text that starts Chromium. */
const BROWSER = [/\blaunchBrowser\(/];
/** Text that starts a child process: node:child_process, and the helpers that start one. */
const PROCESS = [
  /from 'node:child_process'/,
  /\bspawnCli\(/,                      // test/cli/helpers.ts: bin/cms.js as a child process
  /\bstartFakeGraphProcess\(/,         // test/helpers/fake-graph-process.ts
  /\bstartCountingReceiverProcess\(/,  // test/helpers/receiver.ts
  /from '\.\.\/faults\/helpers\.ts'/, // the fault tests' harness of service processes
  /\bpacingAcrossProcesses\(/,         // test/whatsapp/pacing-processes.ts (the harness above)
];

/** The tier a file's name gives it. */
function tierOf(file: string): 'browser' | 'process' | 'unit' {
  return file.endsWith('.browser.test.ts') ? 'browser' : file.endsWith('.process.test.ts') ? 'process' : 'unit';
}

test('each test file starts a browser or a process exactly when its name says so', () => {
  const files = fs.globSync('test/*/*.test.ts', { cwd: ROOT }).filter((f) => !f.startsWith('test/faults/') && f !== SELF).sort();
  assert.ok(files.length > 100, `the test files were found (${files.length})`);
  const wrong: string[] = [];
  const count = { unit: 0, process: 0, browser: 0 };
  for (const file of files) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const browser = BROWSER.some((re) => re.test(text));
    const proc = PROCESS.some((re) => re.test(text));
    const tier = tierOf(file);
    count[tier]++;
    const seen = browser ? 'browser' : proc ? 'process' : 'unit';
    // A browser file may also start a process; a process file must start one; a unit file neither.
    if (tier !== seen && !(tier === 'browser' && browser)) wrong.push(`${file}: named ${tier}, starts ${seen === 'unit' ? 'nothing' : `a ${seen}`}`);
  }
  assert.deepEqual(wrong, [], 'rename the file (or move the test that starts a browser or a process into a *.browser / *.process file)');
  assert.ok(count.browser >= 10 && count.process >= 10 && count.unit > 100, JSON.stringify(count));
});
