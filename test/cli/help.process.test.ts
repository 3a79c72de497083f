/** `cms` through its entry point, bin/cms.js, as a process of its own (the rest of its help: help.test.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli, spawnCli } from './helpers.ts';

describe('cms as a process', () => {
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
