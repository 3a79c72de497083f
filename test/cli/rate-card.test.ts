/**
 * `cms whatsapp rate-card load|show` (src/cli/commands/whatsapp.ts) against a real server: a CSV file
 * and a JSON file (or stdin) replace the card, `show` prints it, a bad row is the server's 422 naming
 * the row, a file that is not a card is refused before any request.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { cliFor, type CliRunner } from './helpers.ts';

let s: TestServer;
let cms: CliRunner;
let dir: string;

before(async () => {
  s = await startTestServer({ role: 'api' });
  cms = cliFor(s);
  dir = await mkdtemp(path.join(tmpdir(), 'cms-rate-card-'));
});
after(() => s.close());

/** Empties the one rate card of the database (on PostgreSQL, test runs share the database and its card). */
async function forgetCard(): Promise<void> {
  const db = s.service.deps.database.db;
  await db.deleteFrom('whatsapp_rates').execute();
  await db.deleteFrom('whatsapp_rate_card').execute();
}

test('load a CSV, then a JSON file; show prints the card', async () => {
  await forgetCard();
  const empty = await cms(['whatsapp', 'rate-card', 'show']);
  assert.equal(empty.code, 0, empty.stderr);
  assert.match(empty.stdout, /no rate card loaded yet/);

  const csv = path.join(dir, 'card.csv');
  await writeFile(csv, 'country,category,price,currency\nDE,MARKETING,0.1365,EUR\nDE,UTILITY,0.0456,EUR\n');
  const loaded = await cms(['whatsapp', 'rate-card', 'load', csv]);
  assert.equal(loaded.code, 0, loaded.stderr);
  assert.match(loaded.stdout, /Rate card loaded: 2 rates in EUR/);
  assert.match(loaded.stdout, /DE\s+MARKETING\s+0\.1365\s+EUR/);

  const json = path.join(dir, 'card.json');
  await writeFile(json, JSON.stringify({ rows: [{ country: 'BR', category: 'MARKETING', price: 0.0625, currency: 'USD' }] }));
  const replaced = await cms.json(['whatsapp', 'rate-card', 'load', json]);
  assert.deepEqual(replaced.rows, [{ country: 'BR', category: 'MARKETING', price: 0.0625, currency: 'USD' }]);
  const shown = await cms(['whatsapp', 'rate-card', 'show']);
  assert.match(shown.stdout, /1 rate in USD/);
  assert.match(shown.stdout, /BR\s+MARKETING\s+0\.0625\s+USD/);
  assert.doesNotMatch(shown.stdout, /DE/);

  const stdin = await cms(['--json', 'whatsapp', 'rate-card', 'load', '-', '--csv'], { stdin: 'country,category,price,currency\nIN,AUTHENTICATION,0.0014,USD\n' });
  assert.equal(stdin.code, 0, stdin.stderr);
  assert.equal(JSON.parse(stdin.stdout).rows[0].country, 'IN');
});

test('a bad row is the server 422 naming it; a file that is not a card is refused before any request', async () => {
  const bad = path.join(dir, 'bad.csv');
  await writeFile(bad, 'country,category,price,currency\nDE,MARKETING,0.1,EUR\nDE,MARKETING,-1,EUR\n');
  const refused = await cms(['whatsapp', 'rate-card', 'load', bad]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /422/);
  assert.match(refused.stderr, /body.*1.*price/);

  const notCard = await cms(['whatsapp', 'rate-card', 'load', '-'], { stdin: '{"country":"DE"}' });
  assert.equal(notCard.code, 1);
  assert.match(notCard.stderr, /must hold \{"rows"/);
  const missing = await cms(['whatsapp', 'rate-card', 'load', path.join(dir, 'nope.json')]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /ENOENT/);
});
