/**
 * `--help` on every command, `--version`, and `serve` option checking (no server started), in this
 * process (bin/cms.js as a process of its own: help.process.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli } from './helpers.ts';

const apiCommands = [
  ['company', 'create'],
  ['company', 'update'],
  ['key', 'create'],
  ['key', 'revoke'],
  ['automation', 'create'],
  ['automation', 'update'],
  ['campaign', 'create'],
  ['connector', 'connect'],
  ['connector', 'disconnect'],
  ['channel', 'set'],
  ['contacts', 'import'],
  ['batch', 'show'],
  ['audit'],
];

describe('cms --help', () => {
  it('every API command has --help listing --json and --token', async () => {
    const results = await Promise.all(apiCommands.map((c) => runCli([...c, '--help'])));
    results.forEach((r, i) => {
      const name = apiCommands[i].join(' ');
      assert.equal(r.code, 0, name);
      assert.match(r.stdout, new RegExp(`Usage: cms ${name}`), name);
      assert.match(r.stdout, /--json/, name);
      assert.match(r.stdout, /--token/, name);
    });
  });

  it('groups, the program and serve have help; --version prints the package version', async () => {
    for (const args of [['--help'], ['company', '--help'], ['serve', '--help'], ['help', 'contacts']]) {
      const r = await runCli(args);
      assert.equal(r.code, 0, args.join(' '));
      assert.match(r.stdout, /Usage: cms/);
    }
    const v = await runCli(['--version']);
    assert.equal(v.code, 0);
    assert.match(v.stdout, /^\d+\.\d+\.\d+/);
  });

  it('serve validates --role before loading the server', async () => {
    const r = await runCli(['serve', '--role', 'db']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Allowed choices are api, worker, all/);
  });
});
