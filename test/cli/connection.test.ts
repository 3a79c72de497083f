/** Where `cms` takes the server URL and admin token from (flags, env, DATA_DIR/admin-token). */
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { TOKEN, runCli, startFakeApi, tempDir, type FakeApi } from './helpers.ts';

describe('cms connection settings', () => {
  let api: FakeApi;
  let dir: string;
  before(async () => {
    api = await startFakeApi();
    dir = await tempDir();
  });
  after(async () => {
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => api.reset());

  const create = ['company', 'create', '--name', 'A', '--json'];

  it('--token beats ADMIN_TOKEN, and --url beats CMS_URL', async () => {
    const r = await runCli([...create, '--token', TOKEN, '--url', `${api.url}/`], {
      env: { ADMIN_TOKEN: 'env-token', CMS_URL: 'http://127.0.0.1:2' },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests[0].authorization, `Bearer ${TOKEN}`);
    assert.equal(api.requests[0].path, '/admin/companies');
  });

  it('program-level --url/--token work before the command', async () => {
    const r = await runCli(['--url', api.url, '--token', TOKEN, ...create]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests.length, 1);
  });

  it('defaults to http://127.0.0.1:$PORT', async () => {
    const port = new URL(api.url).port;
    const r = await runCli(create, { env: { PORT: port, ADMIN_TOKEN: TOKEN } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests.length, 1);
  });

  it('reads the token from $DATA_DIR/admin-token when ADMIN_TOKEN is unset', async () => {
    const dataDir = path.join(dir, 'data');
    await mkdir(dataDir, { recursive: true });
    await writeFile(path.join(dataDir, 'admin-token'), `${TOKEN}\n`, { mode: 0o600 });
    const r = await runCli(create, { env: { CMS_URL: api.url, DATA_DIR: dataDir } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests[0].authorization, `Bearer ${TOKEN}`);
  });

  it('falls back to ./data/admin-token in the working directory', async () => {
    const cwd = path.join(dir, 'project');
    await mkdir(path.join(cwd, 'data'), { recursive: true });
    await writeFile(path.join(cwd, 'data', 'admin-token'), TOKEN);
    const r = await runCli(create, { cwd, env: { CMS_URL: api.url } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests[0].authorization, `Bearer ${TOKEN}`);
  });

  it('without any token it says where it looked and sends nothing', async () => {
    const r = await runCli(create.slice(0, -1), { env: { CMS_URL: api.url, DATA_DIR: path.join(dir, 'nowhere') } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no admin token: pass --token, set ADMIN_TOKEN, or start the server once so it writes .*nowhere\/admin-token/);
    assert.equal(api.requests.length, 0);
  });

  it('rejects a server URL that is not http(s)', async () => {
    const r = await runCli(create.slice(0, -1), { env: { CMS_URL: 'ftp://x', ADMIN_TOKEN: TOKEN } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /invalid server URL \(http or https expected\): ftp:\/\/x/);
  });
});
