/** `cms contacts import` on a terminal (script(1) runs bin/cms.js): the progress bar and the summary table. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { BIN, TOKEN, startFakeApi, tempDir, type FakeApi } from './helpers.ts';

const run = promisify(execFile);

/** CSV of `n` valid rows with a variable column, about 60 bytes a row (as in contacts-import.test.ts). */
function bigCsv(n: number): string {
  const lines = ['phone,first_name,last_name,order_id'];
  for (let i = 0; i < n; i++) lines.push(`+49151${String(i).padStart(8, '0')},First${i},Last${i},ORDER-${i}-abcdefghijklmn`);
  return `${lines.join('\n')}\n`;
}

describe('cms contacts import on a terminal', () => {
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

  it('shows a progress bar on a TTY for a large file', { skip: process.platform !== 'linux' && 'needs util-linux script' }, async (t) => {
    try {
      await run('script', ['--version']);
    } catch {
      t.skip('script(1) not available');
      return;
    }
    const command = [process.execPath, BIN, 'contacts', 'import', '--company', '5', big].map((a) => `'${a}'`).join(' ');
    const { stdout } = await run('script', ['-qfec', command, '/dev/null'], {
      env: { PATH: process.env.PATH, CMS_URL: api.url, ADMIN_TOKEN: TOKEN, TERM: 'xterm' },
      maxBuffer: 16 * 1024 * 1024,
    });
    assert.match(stdout, /Importing .*100%/);
    // On a terminal the summary is a box table.
    assert.match(stdout, /created\s*│\s*25000/);
    assert.equal(api.requests.length, 3);
  });
});
