/**
 * How `cms` prints tables (src/cli/output.ts): box tables only when stdout is a terminal; piped or
 * redirected, tab-separated values (a header line for lists, `key<TAB>value` lines for one record) with
 * tabs, line breaks and backslashes in values escaped, so that each record stays one line.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { TOKEN, runCli, startFakeApi, type FakeApi } from './helpers.ts';

const BOX = /[┌┐└┘├┤┬┴┼│─]/;

describe('cms table output', () => {
  let api: FakeApi;
  const run = (args: string[], tty = false) => runCli(args, { env: { CMS_URL: api.url, ADMIN_TOKEN: TOKEN }, tty });
  const companies = [
    { company_id: 2, name: 'Beta GmbH', subscription_active: true, default_country: 'DE', delivery_hours: null, channel: { provider: 'outbox' }, created_at: '2026-03-01T10:00:00Z' },
    { company_id: 1, name: 'Acme\tTabs\nand lines \\o/', subscription_active: false, default_country: null, delivery_hours: { start: '09:00', end: '21:00', timezone: 'Europe/Berlin' }, channel: { provider: 'webhook' }, created_at: '2026-02-01T10:00:00Z' },
  ];
  before(async () => {
    api = await startFakeApi();
  });
  after(() => api.close());
  beforeEach(() => {
    api.reset();
    api.on('GET', /^\/admin\/companies$/, { status: 200, body: { companies } });
  });

  it('on a terminal, a list is a box table', async () => {
    const r = await run(['company', 'list'], true);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^┌─+┬/m);
    assert.match(r.stdout, /^│ id +│ name +│ subscription +│ country +│ delivery_hours +│ channel +│ created_at +│$/m);
    assert.match(r.stdout, /^│ 2 +│ Beta GmbH +│ true +│ DE +│ +│ outbox +│ 2026-03-01T10:00:00Z +│$/m);
    assert.match(r.stdout, /^└─+┴/m);
  });

  it('on a terminal, a record is a key/value box table', async () => {
    const r = await run(['company', 'create', '--name', 'Beta GmbH'], true);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Company created:$/m);
    assert.match(r.stdout, /^│ company_id +│ \d+ +│$/m);
    assert.match(r.stdout, /^│ name +│ Beta GmbH +│$/m);
  });

  it('not on a terminal, a list is TSV: a header line, one line per row, special characters escaped', async () => {
    const r = await run(['company', 'list']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, BOX);
    assert.deepEqual(r.stdout.split('\n'), [
      'id\tname\tsubscription\tcountry\tdelivery_hours\tchannel\tcreated_at',
      '2\tBeta GmbH\ttrue\tDE\t\toutbox\t2026-03-01T10:00:00Z',
      '1\tAcme\\tTabs\\nand lines \\\\o/\tfalse\t\t09:00-21:00@Europe/Berlin\twebhook\t2026-02-01T10:00:00Z',
      '',
    ]);
  });

  it('not on a terminal, a record is key<TAB>value lines under its title; an empty list is its header only', async () => {
    const r = await run(['company', 'create', '--name', 'Beta GmbH']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, BOX);
    assert.match(r.stdout, /^Company created:\ncompany_id\t\d+\nname\tBeta GmbH\n/);

    api.on('GET', /^\/admin\/companies$/, { status: 200, body: { companies: [] } });
    const none = await run(['company', 'list']);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, 'id\tname\tsubscription\tcountry\tdelivery_hours\tchannel\tcreated_at\n');
    const boxed = await run(['company', 'list'], true);
    assert.equal(boxed.stdout, '(no companies)\n');
  });
});
