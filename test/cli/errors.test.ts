/** How `cms` reports refused requests (401, 404, 422, 429, 500) and an unreachable server. */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { cli, runCli, startFakeApi, type FakeApi } from './helpers.ts';

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

const noStack = (text: string) => assert.doesNotMatch(text, /\n\s+at /, 'no stack trace');

describe('cms error handling', () => {
  let api: FakeApi;
  before(async () => {
    api = await startFakeApi();
  });
  after(() => api.close());
  beforeEach(() => api.reset());

  it('401 names the problem and where the token comes from', async () => {
    const r = await cli(api, ['company', 'create', '--name', 'A'], { ADMIN_TOKEN: 'wrong' });
    assert.equal(r.code, 1);
    assert.equal(api.requests[0].authorization, 'Bearer wrong');
    assert.match(r.stderr, /unauthorized \(HTTP 401\): Invalid admin token/);
    assert.match(r.stderr, /--token, ADMIN_TOKEN/);
    assert.equal(r.stdout, '');
    noStack(r.stderr);
  });

  it('--json errors are one JSON object on stderr, stdout stays empty', async () => {
    const r = await cli(api, ['company', 'create', '--name', 'A', '--json'], { ADMIN_TOKEN: 'wrong' });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.deepEqual(JSON.parse(r.stderr), { error: 'http', status: 401, body: { detail: 'Invalid admin token' } });
  });

  it('404 shows the server detail', async () => {
    api.on('PATCH', /^\/admin\/companies\/77$/, { status: 404, body: { detail: 'Company 77 not found' } });
    const r = await cli(api, ['company', 'update', '77', '--name', 'B']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not found \(HTTP 404\): Company 77 not found/);
  });

  it('422 lists every validation item', async () => {
    api.on('POST', /^\/admin\/companies$/, {
      status: 422,
      body: {
        detail: [
          { loc: ['body', 'name'], msg: 'String should have at least 1 character', type: 'string_too_short' },
          { loc: ['body', 'delivery_hours', 'timezone'], msg: 'Unknown time zone', type: 'value_error' },
        ],
      },
    });
    const r = await cli(api, ['company', 'create', '--name', 'A']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /rejected the request \(HTTP 422\):/);
    assert.match(r.stderr, /^ {2}- body\.name: String should have at least 1 character \(string_too_short\)$/m);
    assert.match(r.stderr, /^ {2}- body\.delivery_hours\.timezone: Unknown time zone \(value_error\)$/m);
  });

  it('429 and 500 show status and message; a non-JSON body is shown as text', async () => {
    api.on('POST', /^\/admin\/companies$/, { status: 429, body: { error: 'Too many requests: 10 per second' } });
    const limited = await cli(api, ['company', 'create', '--name', 'A']);
    assert.equal(limited.code, 1);
    assert.match(limited.stderr, /POST \/admin\/companies failed with HTTP 429: Too many requests: 10 per second/);

    api.on('POST', /^\/admin\/companies$/, { status: 500, raw: 'upstream exploded' });
    const crashed = await cli(api, ['company', 'create', '--name', 'A']);
    assert.equal(crashed.code, 1);
    assert.match(crashed.stderr, /failed with HTTP 500: upstream exploded/);
    noStack(crashed.stderr);
  });

  it('an unreachable server gives exit code 3 and a hint', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const r = await runCli(['batch', 'show', 'b-1'], { env: { CMS_URL: url, ADMIN_TOKEN: 'x' } });
    assert.equal(r.code, 3);
    assert.match(r.stderr, new RegExp(`cannot reach the server at ${url} \\(ECONNREFUSED\\)`));
    assert.match(r.stderr, /--url or CMS_URL/);
    noStack(r.stderr);
    const j = await runCli(['batch', 'show', 'b-1', '--json'], { env: { CMS_URL: url, ADMIN_TOKEN: 'x' } });
    assert.deepEqual(JSON.parse(j.stderr), { error: 'unreachable', url, code: 'ECONNREFUSED' });
  });

  it('unknown commands and options are usage errors (exit 2)', async () => {
    const r = await cli(api, ['company', 'destroy']);
    assert.equal(r.code, 2);
    const o = await cli(api, ['company', 'create', '--name', 'A', '--colour', 'red']);
    assert.equal(o.code, 2);
    assert.match(o.stderr, /unknown option '--colour'/);
    assert.equal(api.requests.length, 0);
  });
});
