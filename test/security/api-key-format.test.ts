/**
 * Leaked-key scanning: API keys have a fixed prefix and a checksum, so a secret scanner
 * can find them in text and confirm them offline, and the service refuses a mistyped or forged key
 * without a database lookup.
 *
 * The checksum is recomputed here from its description (CRC-32 of the 32-character body, written as
 * 6 base62 digits, most significant first), independently of src/domain/api-keys.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import pg from 'pg';
import { generateApiKey, isWellFormedApiKey } from '../../src/domain/api-keys.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** What a secret scanner would search for. */
const SCANNER = /\bcms_live_([0-9A-Za-z]{32})([0-9A-Za-z]{6})\b/g;

/** CRC-32 (IEEE 802.3, reflected, as zlib computes it), written out so the test does not trust the code under test. */
function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'latin1')) {
    crc ^= byte;
    for (let i = 0; i < 8; i++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function base62(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A scanner's offline verdict on a candidate it found. */
function scannerConfirms(candidate: string): boolean {
  const m = /^cms_live_([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/.exec(candidate);
  return !!m && base62(crc32(m[1]), 6) === m[2];
}

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s.close());

test('issued keys: prefix, 32 base62 characters, a checksum a scanner can verify offline', async () => {
  const c = await s.company();
  const issued = [c.key];
  for (let i = 0; i < 5; i++) issued.push((await s.admin('POST', `/admin/companies/${c.companyId}/api-keys`, { label: `k${i}` })).api_key);
  for (let i = 0; i < 500; i++) issued.push(generateApiKey());
  assert.equal(new Set(issued).size, issued.length, 'keys are unique');
  for (const key of issued) {
    assert.match(key, /^cms_live_[0-9A-Za-z]{38}$/);
    assert.ok(scannerConfirms(key), key);
  }
  // A scanner finds keys in leaked text (a log line, a diff) and tells real ones from look-alikes.
  const leak = `+ SERVICE_API_KEY="${issued[0]}"\nerror key=${issued[1]}, cms_live_${'A'.repeat(38)} cms_live_short`;
  const found = [...leak.matchAll(SCANNER)].map((m) => m[0]);
  assert.deepEqual(found, [issued[0], issued[1], `cms_live_${'A'.repeat(38)}`]);
  assert.deepEqual(found.map(scannerConfirms), [true, true, false]);
});

test('every single-character change of a key breaks its checksum', () => {
  const keys = Array.from({ length: 50 }, generateApiKey);
  fc.assert(fc.property(fc.nat(keys.length - 1), fc.nat(37), fc.constantFrom(...BASE62), (k, pos, ch) => {
    const key = keys[k];
    const at = 'cms_live_'.length + pos;
    fc.pre(key[at] !== ch);
    const changed = key.slice(0, at) + ch + key.slice(at + 1);
    assert.equal(isWellFormedApiKey(changed), false, changed);
    assert.equal(scannerConfirms(changed), false, changed);
  }), { numRuns: 2000 });
  // Case matters, so does the prefix.
  const key = generateApiKey();
  for (const bad of [key.replace('cms_live_', 'cms_test_'), key.replace('cms_live_', 'CMS_LIVE_'), key + 'x', key.slice(0, -1)]) {
    assert.equal(isWellFormedApiKey(bad), false, bad);
  }
});

/** Records the SQL texts sent to the database while `fn` runs (PGlite's statement runner or every pg client). */
async function queriesDuring(fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const statements = s.service.deps.database.pgliteStatements;
  if (statements) {
    const { query, inTransaction } = statements;
    statements.query = ((text: string, params?: readonly unknown[]) => {
      seen.push(text);
      return query.call(statements, text, params);
    }) as typeof statements.query;
    statements.inTransaction = ((tx: Parameters<typeof inTransaction>[0], text: string, params?: readonly unknown[]) => {
      seen.push(text);
      return inTransaction.call(statements, tx, text, params);
    }) as typeof statements.inTransaction;
    try { await fn(); } finally { statements.query = query; statements.inTransaction = inTransaction; }
  } else {
    const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
    const original = proto.query;
    proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
      seen.push(typeof config === 'string' ? config : String((config as { text?: string })?.text ?? ''));
      return original.call(this, config, ...rest);
    };
    try { await fn(); } finally { proto.query = original; }
  }
  return seen;
}

test('a key with a wrong checksum is refused with 401 without a database lookup; a well-formed one is looked up', async () => {
  const c = await s.company();
  const body = { name: 'x' };
  const wrongChecksum = c.key.slice(0, -1) + (c.key.endsWith('0') ? '1' : '0');
  const unknownButWellFormed = generateApiKey();

  // A lookup reads api_keys; the batched `last_used_at` write of an earlier request may land in the
  // window too and is no lookup.
  const lookups = (sqls: string[]) => sqls.filter((q) => /\bselect\b[\s\S]*\bfrom "?api_keys\b/i.test(q)).length;
  let refused: Awaited<ReturnType<TestServer['api']>> | undefined;
  const forBadChecksum = await queriesDuring(async () => { refused = await s.api('/api/segments/create', { key: wrongChecksum, body }); });
  assert.equal(refused?.status, 401);
  assert.equal(refused?.text, '{"detail":"Invalid API key"}');
  assert.equal(lookups(forBadChecksum), 0, `no api_keys query for a wrong checksum; saw ${JSON.stringify(forBadChecksum)}`);

  // The control: the same observation does see the lookup of a well-formed key (and of a real one).
  let unknown: Awaited<ReturnType<TestServer['api']>> | undefined;
  const forWellFormed = await queriesDuring(async () => { unknown = await s.api('/api/segments/create', { key: unknownButWellFormed, body }); });
  assert.equal(unknown?.status, 401);
  assert.equal(unknown?.text, refused?.text, 'both refusals look the same to the caller');
  assert.ok(lookups(forWellFormed) >= 1, `a well-formed key is looked up; saw ${JSON.stringify(forWellFormed)}`);
});
