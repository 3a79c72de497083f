/**
 * Contact imports keep the rules of an edit by hand (docs/contacts.md "Import",
 * src/domain/contact-rules.ts): variable names are identifiers, values at most 1,000 characters, names
 * at most 255, at most 50 variables. Through the real server and its database, for every way in: the
 * CSV upload of the operator API (its import job), the console's upload, `cms contacts import`, and
 * the JSON import PUT …/contacts.
 * - a header column that is no variable name (`=HYPERLINK(…)`, `@cmd`) refuses the whole file with 422
 *   naming the column; nothing is written, no import row, no job;
 * - a row that breaks a rule is reported with its line and why, and not stored; the others are;
 * - PUT answers 422 with `loc` at the item and the variable, and writes nothing.
 */
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { csrfToken, signedInClient, type ConsoleClient } from '../console/helpers.ts';
import { runCli, tempDir } from '../cli/helpers.ts';
import { ADMIN_TOKEN, eventually, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
let dir: string;
before(async () => { s = await startTestServer(); dir = await tempDir(); });
after(async () => { await s.close(); await rm(dir, { recursive: true, force: true }); });

let n = 0;
/** A fresh German mobile number (unique across runs sharing a PostgreSQL database). */
function phone(): string {
  n++;
  return `+49157${String(process.pid % 1000).padStart(3, '0')}${String((Date.now() + n) % 100_000).padStart(5, '0')}`;
}

const db = () => s.service.deps.database.db;

/** The company's stored contacts by phone: names and variables. */
async function stored(companyId: number): Promise<Map<string, { first_name: string | null; variables: Record<string, unknown> }>> {
  const rows = await db().selectFrom('contacts').select(['phone', 'first_name', 'variables']).where('company_id', '=', companyId).execute();
  return new Map(rows.map((r) => [r.phone, { first_name: r.first_name, variables: r.variables as Record<string, unknown> }]));
}

const importRows = async (companyId: number) =>
  (await sql<{ n: number }>`SELECT count(*)::int AS n FROM contact_imports WHERE company_id = ${companyId}`.execute(db())).rows[0].n;

/** POSTs a CSV to the operator API's import. */
async function upload(companyId: number, csv: string) {
  const res = await fetch(`${s.url}/admin/companies/${companyId}/contact-imports`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' }, body: csv,
  });
  return { status: res.status, json: await res.json() as any };
}

/** Uploads `csv` through the console's import form as a browser would. */
async function consoleUpload(c: ConsoleClient, csv: string) {
  const page = await c.get('/console/contacts/import');
  const form = new FormData();
  form.append('_csrf', csrfToken(page.text));
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'people.csv');
  const res = await fetch(`${s.url}/console/contacts/import`, {
    method: 'POST', body: form, redirect: 'manual', headers: { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
  });
  return { status: res.status, text: await res.text() };
}

async function finished(companyId: number, importId: number) {
  return eventually(async () => {
    const x = await s.admin('GET', `/admin/companies/${companyId}/contact-imports/${importId}`);
    return x.status === 'completed' ? x : undefined;
  }, 60_000);
}

const BAD_COLUMNS = ['=HYPERLINK("http://evil.example/","x")', '@cmd', '+x', 'order-id', 'two words', '_'.repeat(65)];

/** A CSV cell as RFC 4180 writes it. */
const cell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

describe('happy', () => {
  test('the CSV import stores good rows and reports each bad one with its line and why; boundaries are accepted', async () => {
    const c = await s.company();
    const [a, b, bad1, bad2, bad3, d] = [phone(), phone(), phone(), phone(), phone(), phone()];
    const astral = '😀'.repeat(1000); // 1,000 characters (2,000 UTF-16 units): at the bound
    const csv = [
      'phone,first_name,note,_tier2', // line 1
      `${a},Ada,${'x'.repeat(1000)},gold`, // 2: at the bound
      `${bad1},Bob,${'x'.repeat(1001)},gold`, // 3: one over
      `${bad2},Cid,${'y'.repeat(1024 * 1024)},gold`, // 4: 1 MiB
      `${bad3},${'N'.repeat(256)},ok,gold`, // 5: a name one over 255
      `${b},${'M'.repeat(255)},${astral},`, // 6: both at the bound
      `${d},Dora,'=1+2,silver`, // 7: an escaped formula, as the export writes it
    ].join('\n') + '\n';
    const r = await upload(c.companyId, csv);
    assert.equal(r.status, 202, JSON.stringify(r.json));
    assert.equal(r.json.total, 6);
    const done = await finished(c.companyId, r.json.import_id);
    assert.deepEqual([done.created, done.updated, done.failed], [3, 0, 3]);
    assert.deepEqual(done.errors.map((e: any) => e.line), [3, 4, 5]);
    assert.match(done.errors[0].error, /^variables: The value of note is longer than 1000 characters\.$/);
    assert.match(done.errors[1].error, /^variables: The value of note is longer than 1000 characters\.$/);
    assert.match(done.errors[2].error, /^first_name: At most 255 characters\.$/);

    const rows = await stored(c.companyId);
    assert.deepEqual([...rows.keys()].sort(), [a, b, d].sort(), 'the bad rows are not stored');
    assert.deepEqual(rows.get(a)!.variables, { note: 'x'.repeat(1000), _tier2: 'gold' });
    assert.equal(rows.get(b)!.first_name, 'M'.repeat(255));
    assert.deepEqual(rows.get(b)!.variables, { note: astral });
    assert.deepEqual(rows.get(d)!.variables, { note: '=1+2', _tier2: 'silver' });
  });

  test('PUT …/contacts takes values and names at the bounds', async () => {
    const c = await s.company();
    const p = phone();
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`v${i}`, i === 0 ? 'z'.repeat(1000) : 'x']));
    const r = await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: p, first_name: 'F'.repeat(255), variables: { ...fifty, v1: { nested: 'y'.repeat(10) } } }] });
    assert.deepEqual(r, { created: 1, updated: 0, invalid: 0 });
    assert.equal(Object.keys((await stored(c.companyId)).get(p)!.variables).length, 50);
  });
});

describe('error', () => {
  test('a header column that is no variable name refuses the file (422, the column named): API and console; nothing written', async () => {
    const c = await s.company();
    const owner = await signedInClient(s, c.companyId);
    for (const column of BAD_COLUMNS) {
      const csv = `phone,first_name,${cell(column)}\n${phone()},Ada,1\n`;
      const r = await upload(c.companyId, csv);
      assert.equal(r.status, 422, `${column}: ${JSON.stringify(r.json)}`);
      assert.deepEqual(r.json.detail[0].loc, ['body']);
      assert.ok(r.json.detail[0].msg.includes(`column "${column.slice(0, 70)}" is no variable name`), r.json.detail[0].msg);
      assert.match(r.json.detail[0].msg, /rename or remove the column/);

      const page = await consoleUpload(owner, csv);
      assert.equal(page.status, 422, column);
      assert.match(page.text, /id="file-error"/);
      assert.match(page.text, /is no variable name/);
    }
    // The export's escaped form of such a header is refused the same way, under its real name.
    const escaped = await upload(c.companyId, `phone,"'=HYPERLINK(""x"")"\n${phone()},1\n`);
    assert.equal(escaped.status, 422);
    assert.match(escaped.json.detail[0].msg, /column "=HYPERLINK\("x"\)" is no variable name/);
    // A quote inside an unquoted header cell is broken CSV: 422 too (csv-parse's INVALID_OPENING_QUOTE), never a 500.
    const broken = await upload(c.companyId, `phone,'=HYPERLINK(""x"")\n${phone()},1\n`);
    assert.equal(broken.status, 422);
    assert.match(broken.json.detail[0].msg, /^Invalid CSV: Invalid Opening Quote/);
    assert.equal((await stored(c.companyId)).size, 0);
    assert.equal(await importRows(c.companyId), 0, 'no import row, no job');
  });

  test('PUT …/contacts: an item breaking a rule answers 422 at the item and variable; nothing is written', async () => {
    const c = await s.company();
    const good = phone();
    const cases: [Record<string, unknown>, (string | number)[], RegExp][] = [
      [{ variables: { '=HYPERLINK("http://evil/","x")': 'x' } }, ['variables', '=HYPERLINK("http://evil/","x")'], /is not a variable name/],
      [{ variables: { '@cmd': 'x' } }, ['variables', '@cmd'], /is not a variable name/],
      [{ variables: { ok: 'v'.repeat(1001) } }, ['variables', 'ok'], /longer than 1000 characters/],
      [{ variables: { big: 'v'.repeat(1024 * 1024) } }, ['variables', 'big'], /longer than 1000 characters/],
      [{ variables: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 'x'])) }, ['variables'], /At most 50 variables/],
    ];
    for (const [fields, loc, msg] of cases) {
      const res = await fetch(`${s.url}/admin/companies/${c.companyId}/contacts`, {
        method: 'PUT', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ contacts: [{ phone: good, first_name: 'Ada' }, { phone: phone(), ...fields }] }),
      });
      const j = await res.json() as any;
      assert.equal(res.status, 422, JSON.stringify(loc));
      assert.equal(j.detail.length, 1);
      assert.deepEqual(Object.keys(j.detail[0]), ['type', 'loc', 'msg']);
      assert.deepEqual(j.detail[0].loc, ['body', 'contacts', 1, ...loc]);
      assert.equal(j.detail[0].type, 'value_error');
      assert.match(j.detail[0].msg, msg);
    }
    // Several bad items: each named, in order.
    const res = await fetch(`${s.url}/admin/companies/${c.companyId}/contacts`, {
      method: 'PUT', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ contacts: [{ phone: phone(), variables: { 'a b': 1 } }, { phone: good }, { phone: phone(), variables: { n: 'x'.repeat(1001) } }] }),
    });
    assert.equal(res.status, 422);
    assert.deepEqual(((await res.json()) as any).detail.map((d: any) => d.loc), [['body', 'contacts', 0, 'variables', 'a b'], ['body', 'contacts', 2, 'variables', 'n']]);
    assert.equal((await stored(c.companyId)).size, 0, 'not even the good item is written');
  });

  test('cms contacts import: a bad header column stops before any request; bad rows are listed by line and not sent', async () => {
    const c = await s.company();
    const env = { CMS_URL: s.url, ADMIN_TOKEN };
    const header = path.join(dir, `header-${c.companyId}.csv`);
    await writeFile(header, `phone,"=HYPERLINK(""http://evil/"",""x"")"\n${phone()},1\n`);
    const refused = await runCli(['contacts', 'import', '--company', String(c.companyId), header], { env });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /column "=HYPERLINK\("http:\/\/evil\/","x"\)" is no variable name/);
    assert.equal((await stored(c.companyId)).size, 0);

    const [a, bad, b] = [phone(), phone(), phone()];
    const rows = path.join(dir, `rows-${c.companyId}.csv`);
    await writeFile(rows, `phone,note\n${a},ok\n${bad},${'x'.repeat(1001)}\n${b},'@fine\n`);
    const r = await runCli(['contacts', 'import', '--company', String(c.companyId), rows, '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      created: 2, updated: 0, invalid: 1, rows: 3, requests: 1,
      invalid_rows: [{ line: 3, problem: 'variables: The value of note is longer than 1000 characters.' }],
    });
    const got = await stored(c.companyId);
    assert.deepEqual([...got.keys()].sort(), [a, b].sort());
    assert.deepEqual(got.get(b)!.variables, { note: '@fine' });
    const text = await runCli(['contacts', 'import', '--company', String(c.companyId), rows], { env });
    assert.match(text.stdout, /line 3: variables: The value of note is longer than 1000 characters\./);
  });
});

describe('security', () => {
  test("an import's bad rows touch no other company and no stored contact", async () => {
    const a = await s.company();
    const b = await s.company();
    const p = phone();
    await s.admin('PUT', `/admin/companies/${a.companyId}/contacts`, { contacts: [{ phone: p, variables: { note: 'kept' } }] });
    const r = await upload(a.companyId, `phone,note\n${p},${'x'.repeat(2000)}\n`);
    assert.equal(r.status, 202);
    const done = await finished(a.companyId, r.json.import_id);
    assert.deepEqual([done.updated, done.failed], [0, 1]);
    assert.deepEqual((await stored(a.companyId)).get(p)!.variables, { note: 'kept' });
    assert.equal((await stored(b.companyId)).size, 0);
  });
});
