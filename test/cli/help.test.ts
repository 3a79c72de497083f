/** `--help` on every command, `--version`, and `serve` option checking (no server started). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli, spawnCli } from './helpers.ts';

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

  it('bin/cms.js as a process of its own: help and version exit 0, a usage error 2, an unreachable server 3', async () => {
    // The other CLI tests run the commands in the test's process (test/cli/helpers.ts runCli); this
    // one goes through the entry point and the process's own streams and exit status.
    const help = await spawnCli(['--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /Usage: cms/);
    const version = await spawnCli(['--version']);
    assert.equal(version.code, 0);
    assert.equal(version.stdout, (await runCli(['--version'])).stdout);
    const usage = await spawnCli(['company', 'create']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /^cms: error: required option '--name <name>' not specified/);
    const down = await spawnCli(['--json', 'company', 'list'], { env: { CMS_URL: 'http://127.0.0.1:9', ADMIN_TOKEN: 'x' } });
    assert.equal(down.code, 3);
    assert.equal(JSON.parse(down.stderr).error, 'unreachable');
  });
});
