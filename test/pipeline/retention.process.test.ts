/**
 * Message retention (docs/operations.md "Retention"), the part that starts a process: `cms serve` with
 * a bad MESSAGE_RETENTION exits 1 at once with the message naming it, before opening anything (the
 * setting's values: retention.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CHILD_NODE_FLAGS } from '../helpers/server.ts';

test('MESSAGE_RETENTION: a bad value stops `cms serve` at once, naming the variable', async () => {
  const main = path.join(import.meta.dirname, '../../src/main.ts');
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, main], { env: { ...process.env, MESSAGE_RETENTION: '1 year', PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  assert.equal(code, 1);
  assert.match(err, /^cms: MESSAGE_RETENTION must be a duration such as 500ms, 15s, 2m, 1h or 30d, got "1 year"/);
});
