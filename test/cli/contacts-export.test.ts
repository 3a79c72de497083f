/**
 * `cms contacts export | list | update | erase` against the real server: the export
 * streamed to stdout or a file equals the operator API's CSV and imports back unchanged; the search,
 * the edit (variables merged, opt-out with source `operator`) and the erasure (needs --yes) follow the
 * operator API's rules and exit codes.
 */
import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';
import { runCli, tempDir } from './helpers.ts';

describe('cms contacts export, list, update, erase', () => {
  let s: TestServer;
  let env: Record<string, string>;
  let dir: string;
  let companyId: number;
  const run = Math.floor(Math.random() * 1000);
  const phones = Array.from({ length: 2000 }, (_, i) => `+49157${String(run).padStart(3, '0')}${String(i).padStart(5, '0')}`);
  before(async () => {
    s = await startTestServer();
    env = { CMS_URL: s.url, ADMIN_TOKEN };
    dir = await tempDir();
    companyId = (await s.admin('POST', '/admin/companies', { name: 'CLI contacts' }, 201)).company_id;
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, {
      contacts: phones.map((phone, i) => ({ phone, first_name: i === 5 ? 'Ada' : `P${i}`, last_name: i === 5 ? 'Lovelace' : null, variables: { n: String(i), note: 'a, "quoted"; value' } })),
    });
  });
  after(async () => {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('exports every contact to stdout and to a file, equal to the operator API and importable as it is', async () => {
    const expected = await (await fetch(`${s.url}/admin/companies/${companyId}/contacts/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    assert.equal(expected.trim().split('\n').length, 2001);
    const out = await runCli(['contacts', 'export', '--company', String(companyId)], { env });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, expected);
    const file = path.join(dir, 'contacts.csv');
    const toFile = await runCli(['contacts', 'export', '--company', String(companyId), '-o', file], { env });
    assert.equal(toFile.code, 0, toFile.stderr);
    assert.equal(toFile.stdout, '');
    assert.equal(await readFile(file, 'utf8'), expected);
    const back = await runCli(['contacts', 'import', '--company', String(companyId), file, '--json'], { env });
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(JSON.parse(back.stdout), { created: 0, updated: 2000, invalid: 0, rows: 2000, requests: 1 });
    const again = await runCli(['contacts', 'export', '--company', String(companyId)], { env });
    assert.equal(again.stdout, expected, 'importing the export changed nothing');

    const missing = await runCli(['contacts', 'export', '--company', '2147483000'], { env });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Company not found/);
    const bad = await runCli(['contacts', 'export', '--company', 'x'], { env });
    assert.equal(bad.code, 2);
  });

  it('lists and searches; updates (variables merged, opt-out by the operator); erases only with --yes', async () => {
    const found = await runCli(['contacts', 'list', '--company', String(companyId), '-q', 'ada lov', '--json'], { env });
    assert.equal(found.code, 0, found.stderr);
    assert.deepEqual(JSON.parse(found.stdout).contacts.map((c: { phone: string }) => c.phone), [phones[5]]);
    const page = JSON.parse((await runCli(['contacts', 'list', '--company', String(companyId), '--limit', '3', '--json'], { env })).stdout);
    assert.deepEqual(page.contacts.map((c: { phone: string }) => c.phone), phones.slice(0, 3));
    assert.equal(page.next_after, phones[2]);
    const short = await runCli(['contacts', 'list', '--company', String(companyId), '-q', '12'], { env });
    assert.equal(short.code, 1);
    assert.match(short.stderr, /at least 4 digits/);

    const upd = await runCli(['contacts', 'update', phones[5], '--company', String(companyId), '--set', 'city=Paris', '--unset', 'note', '--opt-out', '--json'], { env });
    assert.equal(upd.code, 0, upd.stderr);
    const c = JSON.parse(upd.stdout);
    assert.deepEqual(c.variables, { n: '5', city: 'Paris' });
    assert.deepEqual([c.opted_out, c.opt_out_source], [true, 'operator']);
    assert.equal(c.history[0].actor, 'admin');
    const nothing = await runCli(['contacts', 'update', phones[5], '--company', String(companyId)], { env });
    assert.equal(nothing.code, 2);

    const unconfirmed = await runCli(['contacts', 'erase', phones[5], '--company', String(companyId)], { env });
    assert.equal(unconfirmed.code, 2);
    assert.match(unconfirmed.stderr, /--yes/);
    assert.equal((await s.admin('GET', `/admin/companies/${companyId}/contacts/${encodeURIComponent(phones[5])}`)).first_name, 'Ada');
    const erased = await runCli(['contacts', 'erase', phones[5], '--company', String(companyId), '--yes', '--json'], { env });
    assert.equal(erased.code, 0, erased.stderr);
    assert.equal(JSON.parse(erased.stdout).messages, 0);
    const gone = await runCli(['contacts', 'show', phones[5], '--company', String(companyId)], { env });
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /Contact not found/);
    const exported = (await runCli(['contacts', 'export', '--company', String(companyId)], { env })).stdout;
    assert.equal(exported.trim().split('\n').length, 2000);
    assert.ok(!exported.includes(phones[5]) && !exported.includes('Lovelace'));
  });
});
