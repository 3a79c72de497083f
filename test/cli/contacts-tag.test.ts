/**
 * `cms contacts tag` against the real server: add and remove by arguments (national and E.164 numbers,
 * several in one argument), replace with --set, clear with --clear, numbers from a CSV file; unknown
 * and invalid numbers counted as not found; `contacts list --tag` and `contacts show` show the tags;
 * usage mistakes exit 2 and a refusal of the server (more than 100 tags, a tag too long) exits 1 with
 * nothing changed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';
import { cliFor } from './helpers.ts';

let s: TestServer;
let dir: string;
before(async () => {
  s = await startTestServer({ role: 'api' });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-contacts-tag-'));
});
after(async () => {
  await s.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function cms(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await cliFor(s, ADMIN_TOKEN)(args, { cwd: dir });
  return { ...r, code: r.code ?? 1 };
}

async function json(...args: string[]): Promise<any> {
  const r = await cms('--json', ...args);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('cms contacts tag: set, add, remove, clear, from arguments and a CSV file', async () => {
  const company = (await s.admin('POST', '/admin/companies', { name: 'Tag Co', default_country: 'DE' }, 201)).company_id as number;
  const run = String(Math.floor(Math.random() * 1000)).padStart(3, '0');
  const phones = Array.from({ length: 4 }, (_, i) => `+49151${run}4${String(i).padStart(4, '0')}`);
  await s.admin('PUT', `/admin/companies/${company}/contacts`, { contacts: phones.map((phone) => ({ phone, tags: ['old'] })) });
  const tagsOf = async (p: string) => (await s.admin('GET', `/admin/companies/${company}/contacts/${encodeURIComponent(p)}`)).tags as string[];
  const c = String(company);

  const national = `0${phones[1].slice(3)}`;
  const added = await json('contacts', 'tag', '--company', c, phones[0], `${national},+4915100000000`, 'nonsense', '--add', 'vip', '--add', 'spring sale');
  assert.deepEqual(added, { matched: 2, not_found: 2, requests: 1 });
  assert.deepEqual(await tagsOf(phones[0]), ['old', 'spring sale', 'vip']);
  assert.deepEqual(await tagsOf(phones[1]), ['old', 'spring sale', 'vip']);
  assert.deepEqual(await tagsOf(phones[2]), ['old'], 'not named: unchanged');

  const text = await cms('contacts', 'tag', '--company', c, phones[0], '--remove', 'old');
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^Tags changed:$/m);
  assert.match(text.stdout, /^matched\t1$/m);
  assert.deepEqual(await tagsOf(phones[0]), ['spring sale', 'vip']);

  const csv = path.join(dir, 'customers.csv');
  fs.writeFileSync(csv, `name,phone\nA,${phones[2]}\nB,${phones[3]}\nC,+4915199999999\n`);
  const set = await json('contacts', 'tag', '--company', c, '--file', csv, '--set', 'customer', '--set', 'berlin', '--remove', 'berlin');
  assert.deepEqual([set.matched, set.not_found], [2, 1]);
  assert.deepEqual(await tagsOf(phones[2]), ['customer'], '--set replaces, then --remove applies');
  assert.deepEqual(await tagsOf(phones[3]), ['customer']);

  const listed = await json('contacts', 'list', '--company', c, '--tag', 'vip');
  assert.deepEqual(listed.contacts.map((x: { phone: string }) => x.phone), [phones[0], phones[1]]);
  assert.deepEqual(listed.contacts[0].tags, ['spring sale', 'vip']);
  const listText = await cms('contacts', 'list', '--company', c, '--tag', 'customer');
  assert.match(listText.stdout, /customer/);
  const shown = await cms('contacts', 'show', phones[0], '--company', c);
  assert.match(shown.stdout, /^tags\tspring sale, vip$/m);
  assert.match(shown.stdout, /^country\tDE$/m);

  const cleared = await json('contacts', 'tag', '--company', c, phones[2], '--clear');
  assert.equal(cleared.matched, 1);
  assert.deepEqual(await tagsOf(phones[2]), []);

  // Refusals: nothing changes.
  const many = Array.from({ length: 99 }, (_, i) => ['--add', `t${i}`]).flat();
  const tooMany = await cms('contacts', 'tag', '--company', c, phones[0], ...many);
  assert.equal(tooMany.code, 1);
  assert.match(tooMany.stderr, /more than 100 tags/);
  assert.deepEqual(await tagsOf(phones[0]), ['spring sale', 'vip']);
  const tooLong = await cms('contacts', 'tag', '--company', c, phones[0], '--add', 'x'.repeat(65));
  assert.equal(tooLong.code, 1);
  assert.match(tooLong.stderr, /64/);
  for (const args of [[phones[0]], [phones[0], '--set', 'a', '--clear'], ['--add', 'a'], [phones[0], '--file', csv, '--add', 'a']]) {
    const r = await cms('contacts', 'tag', '--company', c, ...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
  }
  const missing = await cms('contacts', 'tag', '--company', c, '--file', 'nope.csv', '--add', 'a');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /cannot read nope\.csv/);
  assert.deepEqual(await tagsOf(phones[0]), ['spring sale', 'vip']);
});
