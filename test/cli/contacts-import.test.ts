/**
 * `cms contacts import`: CSV streaming, chunking (≤ 10 000 per request), columns, summing (its
 * progress bar on a terminal, through script(1): contacts-import.process.test.ts).
 */
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { TOKEN, cli, startFakeApi, tempDir, type FakeApi } from './helpers.ts';

/** CSV of `n` valid rows with a variable column, about 60 bytes a row. */
function bigCsv(n: number): string {
  const lines = ['phone,first_name,last_name,order_id'];
  for (let i = 0; i < n; i++) lines.push(`+49151${String(i).padStart(8, '0')},First${i},Last${i},ORDER-${i}-abcdefghijklmn`);
  return `${lines.join('\n')}\n`;
}

describe('cms contacts import', () => {
  let api: FakeApi;
  let dir: string;
  let big: string;
  before(async () => {
    api = await startFakeApi();
    dir = await tempDir();
    big = path.join(dir, 'big.csv');
    await writeFile(big, bigCsv(25_000));
  });
  after(async () => {
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => api.reset());

  it('sends 25,000 rows as 3 PUT requests (10k, 10k, 5k) and sums the answers', async () => {
    const r = await cli(api, ['contacts', 'import', '--company', '5', big, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests.length, 3);
    for (const req of api.requests) {
      assert.equal(req.method, 'PUT');
      assert.equal(req.path, '/admin/companies/5/contacts');
      assert.equal(req.authorization, `Bearer ${TOKEN}`);
    }
    assert.deepEqual(api.requests.map((q) => q.body.contacts.length), [10_000, 10_000, 5_000]);
    assert.deepEqual(api.requests[0].body.contacts[0], {
      phone: '+4915100000000',
      first_name: 'First0',
      last_name: 'Last0',
      variables: { order_id: 'ORDER-0-abcdefghijklmn' },
    });
    assert.equal(api.requests[2].body.contacts.at(-1).phone, '+4915100024999');
    assert.deepEqual(JSON.parse(r.stdout), { created: 25_000, updated: 0, invalid: 0, rows: 25_000, requests: 3 });
    assert.equal(r.stderr, '', 'no progress bar when not on a TTY');
  });

  it('maps columns: reserved ones (any case), opted_out booleans, variables, empty cells left out', async () => {
    const file = path.join(dir, 'mixed.csv');
    await writeFile(
      file,
      '\uFEFFPhone,First_Name,last_name,opted_out,order_id,City\n' +
        '+4915112345678,Ada,Lovelace,yes,A-1,Berlin\n' +
        '"+49 151 1234567",Bob,,0,,"Frankfurt, Main"\n' +
        ',Nobody,,,,\n' +
        'not-a-number,Carl,,,,\n' +
        '\n',
    );
    api.on('PUT', /contacts$/, { status: 200, body: { created: 1, updated: 1, invalid: 1 } });
    // Asked only because the server counted an invalid number: to name its line (default country).
    api.on('GET', /^\/admin\/companies\/5$/, { status: 200, body: { company_id: 5, name: 'Acme', default_country: 'DE' } });
    const r = await cli(api, ['contacts', 'import', '--company', '5', file]);
    assert.equal(r.code, 0, r.stderr);
    const puts = api.requests.filter((q) => q.method === 'PUT');
    assert.equal(puts.length, 1);
    assert.deepEqual(puts[0].body, {
      contacts: [
        { phone: '+4915112345678', first_name: 'Ada', last_name: 'Lovelace', opted_out: true, variables: { order_id: 'A-1', City: 'Berlin' } },
        { phone: '+49 151 1234567', first_name: 'Bob', opted_out: false, variables: { City: 'Frankfurt, Main' } },
        { phone: 'not-a-number', first_name: 'Carl' },
      ],
    });
    // The row without a phone is counted as invalid locally.
    assert.match(r.stdout, /^created\t1$/m);
    assert.match(r.stdout, /^updated\t1$/m);
    assert.match(r.stdout, /^invalid\t2$/m);
    assert.match(r.stdout, /^rows\t4$/m);
    // Both invalid rows named by their line.
    assert.match(r.stdout, /line 4: no phone/);
    assert.match(r.stdout, /line 5: "not-a-number" not a valid phone number/);
  });

  it('honours --chunk-size and --delimiter', async () => {
    const file = path.join(dir, 'semi.csv');
    await writeFile(file, 'phone;first_name\n+491511;A\n+491512;B\n+491513;C\n');
    const r = await cli(api, ['contacts', 'import', '--company', '5', '--chunk-size', '2', '--delimiter', ';', file, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(api.requests.map((q) => q.body.contacts.map((c: { phone: string }) => c.phone)), [['+491511', '+491512'], ['+491513']]);
    assert.equal(JSON.parse(r.stdout).requests, 2);
    const tooBig = await cli(api, ['contacts', 'import', '--company', '5', '--chunk-size', '10001', file]);
    assert.equal(tooBig.code, 1);
    assert.match(tooBig.stderr, /chunk size must be between 1 and 10000/);
  });

  it('a header-only file sends nothing and reports zeros', async () => {
    const file = path.join(dir, 'empty.csv');
    await writeFile(file, 'phone,first_name\n');
    const r = await cli(api, ['contacts', 'import', '--company', '5', file, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests.length, 0);
    assert.deepEqual(JSON.parse(r.stdout), { created: 0, updated: 0, invalid: 0, rows: 0, requests: 0 });
  });

  it('reports file and CSV problems clearly', async () => {
    const noPhone = path.join(dir, 'nophone.csv');
    await writeFile(noPhone, 'mobile,first_name\n+491511,A\n');
    const badBool = path.join(dir, 'badbool.csv');
    await writeFile(badBool, 'phone,opted_out\n+491511,true\n+491512,maybe\n');
    const ragged = path.join(dir, 'ragged.csv');
    await writeFile(ragged, 'phone,first_name\n+491511,A\n+491512,B,extra\n');
    const cases: [string, RegExp][] = [
      [path.join(dir, 'missing.csv'), /cannot read .*missing\.csv: ENOENT/],
      [noPhone, /no "phone" column \(columns: mobile, first_name\)/],
      [badBool, /line 3: opted_out must be true\/false/],
      [ragged, /invalid CSV: .*line 3/],
    ];
    for (const [file, message] of cases) {
      const r = await cli(api, ['contacts', 'import', '--company', '5', file]);
      assert.equal(r.code, 1, file);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
    assert.equal(api.requests.length, 0);
  });

  it('stops at the first refused chunk and says how far it got', async () => {
    let calls = 0;
    api.on('PUT', /contacts$/, () =>
      ++calls === 2
        ? { status: 422, body: { detail: [{ loc: ['body', 'contacts', 3, 'phone'], msg: 'String should have at most 64 characters', type: 'string_too_long' }] } }
        : { status: 200, body: { created: 10_000, updated: 0, invalid: 0 } },
    );
    const r = await cli(api, ['contacts', 'import', '--company', '5', big]);
    assert.equal(r.code, 1);
    assert.equal(api.requests.length, 2);
    assert.match(r.stderr, /stopped after 1 request\(s\) \(10000 created, 0 updated\)/);
    assert.match(r.stderr, /body\.contacts\.3\.phone: String should have at most 64 characters \(string_too_long\)/);
  });
});
