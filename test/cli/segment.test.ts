/**
 * `cms segment ...` as a process (bin/cms.js) against the real server: create, list,
 * add by arguments and by CSV file (invalid items reported with their file lines), add by digests,
 * members paged, remove, rename, delete; refusals (4.1's name rule, the 21st segment, a semicolon CSV,
 * an unknown segment) exit 1 with the server's or the file's message, usage mistakes exit 2.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';
import { cliFor } from './helpers.ts';

let s: TestServer;
let dir: string;
before(async () => {
  s = await startTestServer({ role: 'api' });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-segment-'));
});
after(async () => {
  await s.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs `cms ARGS` against the test server (test/cli/helpers.ts); resolves to exit code and output (never rejects). */
async function cms(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await cliFor(s, ADMIN_TOKEN)(args, { cwd: dir });
  return { ...r, code: r.code ?? 1 };
}

async function json(...args: string[]): Promise<any> {
  const r = await cms('--json', ...args);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

test('create, list, add by arguments, CSV and digests, members paged, remove, rename, delete', async () => {
  const company = (await s.admin('POST', '/admin/companies', { name: 'CLI Co', default_country: 'DE' }, 201)).company_id;
  const phones = Array.from({ length: 7 }, (_, i) => `+4915112380${String(i).padStart(3, '0')}`);
  await s.admin('PUT', `/admin/companies/${company}/contacts`, { contacts: phones.map((phone) => ({ phone, first_name: 'Ada' })) });
  const seg = await json('segment', 'create', '--company', String(company), '--name', 'Newsletter');
  assert.equal(seg.name, 'Newsletter');
  assert.equal(seg.members, 0);
  const text = await cms('segment', 'list', '--company', String(company));
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /Newsletter/);

  const byArgs = await cms('segment', 'add', String(seg.segment_id), phones[0], `${phones[1]},015112380002`, 'nonsense');
  assert.equal(byArgs.code, 0, byArgs.stderr);
  assert.match(byArgs.stdout, /^added\t3$/m);
  assert.match(byArgs.stdout, /argument 3: nonsense/);

  const csv = path.join(dir, 'members.csv');
  fs.writeFileSync(csv, `name,phone\nA,${phones[2]}\nB,${phones[3]}\nC,call me\nD,${phones[4]}\nE,+4915199999999\n`);
  const byFile = await json('segment', 'add', String(seg.segment_id), '--file', csv);
  assert.deepEqual([byFile.contacts_processed, byFile.contacts_unchanged, byFile.contacts_not_found, byFile.contacts_invalid], [2, 1, 1, 1]);
  assert.deepEqual(byFile.invalid, [{ position: 4, value: 'call me' }], 'the line of the file');
  const fileText = await cms('segment', 'add', String(seg.segment_id), '--file', csv);
  assert.match(fileText.stdout, /members\.csv line 4: call me/);

  const hashed = await json('segment', 'add', String(seg.segment_id), '--hashed', sha(phones[5]), sha(phones[6].slice(1)).toUpperCase());
  assert.equal(hashed.contacts_processed, 2);

  const page = await json('segment', 'members', String(seg.segment_id), '--limit', '4');
  assert.equal(page.members_total, 7);
  assert.equal(page.members.length, 4);
  const rest = await json('segment', 'members', String(seg.segment_id), '--limit', '4', '--after', String(page.next_after));
  assert.deepEqual([...page.members, ...rest.members].map((m: any) => m.phone), phones);
  assert.equal(rest.next_after, null);
  const all = await json('segment', 'members', String(seg.segment_id), '--limit', '3', '--all');
  assert.equal(all.members.length, 7);
  const membersText = await cms('segment', 'members', String(seg.segment_id), '--limit', '2');
  assert.match(membersText.stdout, /2 of 7 members; next page: --after \d+/);

  const removed = await json('segment', 'remove', String(seg.segment_id), phones[0], phones[0]);
  assert.deepEqual([removed.mode, removed.contacts_processed, removed.contacts_provided], ['delete', 1, 1]);
  assert.equal((await json('segment', 'rename', String(seg.segment_id), '--name', 'Weekly')).name, 'Weekly');
  const deleted = await cms('segment', 'delete', String(seg.segment_id));
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match(deleted.stdout, /Segment \d+ \(Weekly\) deleted with its 6 memberships\./);
  assert.deepEqual(await json('segment', 'list', '--company', String(company)), []);
  const { entries } = await s.admin('GET', `/admin/audit?company_id=${company}`);
  assert.ok(entries.some((e: any) => e.action === 'segment.delete' && e.actor === 'admin'));
});

test('refusals: bad name, the 21st segment, a semicolon CSV, unknown segment (exit 1); usage mistakes (exit 2)', async () => {
  const company = String((await s.admin('POST', '/admin/companies', { name: 'CLI Limits' }, 201)).company_id);
  const long = await cms('segment', 'create', '--company', company, '--name', 'x'.repeat(256));
  assert.equal(long.code, 1);
  assert.match(long.stderr, /name/);
  for (let i = 1; i <= 20; i++) await json('segment', 'create', '--company', company, '--name', `S${i}`);
  const full = await cms('segment', 'create', '--company', company, '--name', 'S21');
  assert.equal(full.code, 1);
  assert.match(full.stderr, /Segment limit reached: a company can hold at most 20 segments/);

  const segId = String((await json('segment', 'list', '--company', company))[0].segment_id);
  const semi = path.join(dir, 'semi.csv');
  fs.writeFileSync(semi, 'phone;name\n+4915112380000;Ada\n');
  const bad = await cms('segment', 'add', segId, '--file', semi);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /separated by semicolons/);
  const unknown = await cms('segment', 'add', '2147483647', '+4915112380000');
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /Segment not found/);
  assert.equal((await cms('segment', 'add', segId)).code, 2, 'nothing to add');
  assert.equal((await cms('segment', 'add', segId, '+4915112380000', '--file', semi)).code, 2, 'both inputs');
  assert.equal((await cms('segment', 'delete', 'abc')).code, 2);
  assert.equal((await cms('segment', 'members', segId, '--limit', '0')).code, 2);
});

test('create --filter makes a dynamic segment; preview counts and samples; a bad filter exits 1 with loc, bad JSON exits 2', async () => {
  const company = (await s.admin('POST', '/admin/companies', { name: 'CLI Dyn', default_country: 'DE' }, 201)).company_id;
  await s.admin('PUT', `/admin/companies/${company}/contacts`, { contacts: [{ phone: '+4915112390101', tags: ['vip'] }, { phone: '+4915112390102' }] });
  const seg = await json('segment', 'create', '--company', String(company), '--name', 'VIP', '--filter', '{"tag":"vip"}');
  assert.deepEqual([seg.kind, seg.filter, seg.members], ['dynamic', { tag: 'vip' }, 1]);
  const preview = await json('segment', 'preview', '--company', String(company), '--filter', '{"not":{"tag":"vip"}}');
  assert.equal(preview.count, 1);
  assert.equal(preview.sample[0].phone, '+4915112390102');
  const text = await cms('segment', 'preview', '--company', String(company), '--filter', '{"tag":"vip"}');
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /\+4915112390101/);
  assert.match(text.stdout, /1 contact match/);
  const bad = await cms('segment', 'preview', '--company', String(company), '--filter', '{"all":[{"field":"shoe","op":"eq","value":"x"}]}');
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /filter.*all.*0.*field|unknown field/);
  assert.equal((await cms('segment', 'preview', '--company', String(company), '--filter', '{tag')).code, 2);
});
