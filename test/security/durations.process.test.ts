/**
 * Durations (docs/security.md "Durations and times"), the part that starts a process: `cms serve` with
 * an absurd duration setting exits 1 at once with a message naming it (the rest: durations.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CHILD_NODE_FLAGS } from '../helpers/server.ts';

test('cms serve with an absurd DELIVERY_TIMEOUT exits 1 at once, naming it', async () => {
  const main = path.join(import.meta.dirname, '../../src/main.ts');
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, main], { env: { ...process.env, DELIVERY_TIMEOUT: '999999d', PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  assert.equal(code, 1);
  assert.match(err, /^cms: DELIVERY_TIMEOUT must be a duration from 100ms to 10m, such as 15s; got "999999d"/);
});
