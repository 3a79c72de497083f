/**
 * WhatsApp pacing (docs/whatsapp.md "Pacing and limits") through a real database: admit() decides the
 * pair rate and the messaging limit on the injectable clock (pair waits, the budget of new people per
 * moving 24 h, people inside their customer-service window and people already counted not held,
 * concurrent calls from two connections never over-admitting), slot() keeps two WhatsappPacing
 * instances (on two connections on PostgreSQL) under the number's rate at a fake Graph API, and a
 * slowed-down number under half of it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { openPostgres, type Database, type Db } from '../../src/db/database.ts';
import { parseAddressPolicy } from '../../src/delivery/network-guard.ts';
import { createProviderRegistry } from '../../src/providers/index.ts';
import { limitUsage, pruneLimitCounts, prunePairs } from '../../src/db/whatsapp-pacing.ts';
import { PAIR_CLAIM_MS, WhatsappPacing, type Admission } from '../../src/providers/whatsapp/pacing.ts';
import { randomPhoneNumberId } from '../helpers/fake-graph.ts';
import { startFakeGraphProcess, type FakeGraphProcess } from '../helpers/fake-graph-process.ts';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';

const H = 3600_000;
const PAIR = 6_000;
let s: TestServer;
let db: Db;
/** A second connection pool to the same database (PostgreSQL only). */
let second: Database | undefined;
/** The fake Graph API in a process of its own: arrival times not delayed by this process's event loop. */
let graph: FakeGraphProcess;

before(async () => {
  s = await startTestServer({ role: 'api' });
  db = s.service.deps.database.db;
  if (process.env.TEST_DATABASE_URL) second = await openPostgres(process.env.TEST_DATABASE_URL, 4);
  graph = await startFakeGraphProcess();
});
after(async () => {
  graph.stop();
  await second?.close();
  await s.close();
});

let seq = 0;
/** A distinct E.164 number per call (run-unique, so runs on a shared database never collide). */
const run = String(Math.floor(Math.random() * 1000)).padStart(3, '0');
const person = () => `+49152${run}${String(seq++).padStart(5, '0')}`;
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

function admitted(m: Map<string, Admission>): string[] {
  return [...m].filter(([, a]) => a.admitted).map(([id]) => id).sort();
}

test('pair rate: the next send to a recipient waits one interval after the last request started; several in one call are spaced; 131056 backs the pair off', async () => {
  const { companyId } = await s.company();
  const clock = new FakeClock();
  const pacing = new WhatsappPacing(db, clock, { pairIntervalMs: PAIR });
  const [a, b] = [person(), person()];
  const t0 = clock.now();
  /** The request of an admitted message starts now (what the provider does before each request). */
  const start = async (recipient: string) => {
    assert.equal(await pacing.slot(companyId, 1000, undefined, recipient), true);
    await pacing.flush();
  };

  assert.deepEqual(await pacing.admit(companyId, null, [{ message_id: 'm1', recipient: a }]), new Map([['m1', { admitted: true }]]));
  // m1 admitted again before its request started (its run was interrupted): its own claim does not hold it.
  assert.deepEqual(await pacing.admit(companyId, null, [{ message_id: 'm1', recipient: a }]), new Map([['m1', { admitted: true }]]));
  clock.advance(1_000);
  // m1 is admitted but not sent yet: its claim holds the pair, m2 looks again one interval later.
  assert.deepEqual(await pacing.admit(companyId, null, [{ message_id: 'm2', recipient: a }, { message_id: 'm3', recipient: b }]),
    new Map<string, Admission>([['m2', { admitted: false, reason: 'pair_rate', until: t0 + 1_000 + PAIR }], ['m3', { admitted: true }]]));
  clock.advance(1_000);
  await start(a); // m1's request starts at t0 + 2 s: the pair is due at t0 + 2 s + PAIR
  clock.advance(1_000);
  assert.deepEqual((await pacing.admit(companyId, null, [{ message_id: 'm2', recipient: a }])).get('m2'), { admitted: false, reason: 'pair_rate', until: t0 + 2_000 + PAIR });
  clock.set(t0 + 2_000 + PAIR - 1);
  assert.deepEqual((await pacing.admit(companyId, null, [{ message_id: 'm2', recipient: a }])).get('m2'), { admitted: false, reason: 'pair_rate', until: t0 + 2_000 + PAIR });
  clock.set(t0 + 2_000 + PAIR);
  assert.deepEqual((await pacing.admit(companyId, null, [{ message_id: 'm2', recipient: a }])).get('m2'), { admitted: true });

  // Three messages to one new recipient in one call: the first goes, the others wait one and two intervals.
  const c = person();
  const now = clock.now();
  const three = await pacing.admit(companyId, null, ids('c', 3).map((message_id) => ({ message_id, recipient: c })));
  assert.deepEqual(three, new Map<string, Admission>([['c-0', { admitted: true }],
    ['c-1', { admitted: false, reason: 'pair_rate', until: now + PAIR }], ['c-2', { admitted: false, reason: 'pair_rate', until: now + 2 * PAIR }]]));

  // Another company's number is a different pair.
  const other = await s.company();
  assert.deepEqual((await pacing.admit(other.companyId, null, [{ message_id: 'o1', recipient: c }])).get('o1'), { admitted: true });

  // 131056 after m3's request: the pair waits until the given time, even after its interval has passed
  // (looked at again every interval meanwhile).
  await start(b);
  await pacing.backOffPair(companyId, b, now + 60_000);
  clock.set(now + 10_000);
  assert.deepEqual((await pacing.admit(companyId, null, [{ message_id: 'm4', recipient: b }])).get('m4'), { admitted: false, reason: 'pair_rate', until: now + 10_000 + PAIR });
  await pacing.backOffPair(companyId, b, now + 30_000); // an earlier back-off does not shorten it
  clock.set(now + 59_999);
  assert.equal((await pacing.admit(companyId, null, [{ message_id: 'm4', recipient: b }])).get('m4')!.admitted, false);
  clock.set(now + 60_000);
  assert.deepEqual((await pacing.admit(companyId, null, [{ message_id: 'm4', recipient: b }])).get('m4'), { admitted: true });

  // A message whose request never starts (its lane aborted) gives the pair's claim up.
  const d = person();
  assert.deepEqual((await pacing.admit(companyId, null, [{ message_id: 'e1', recipient: d }])).get('e1'), { admitted: true });
  assert.equal(await pacing.slot(companyId, 1000, AbortSignal.abort(), d), false);
  await pacing.flush();
  assert.deepEqual((await pacing.admit(companyId, null, [{ message_id: 'e2', recipient: d }])).get('e2'), { admitted: true });
  // Unsent, a claim holds the pair for PAIR_CLAIM_MS at most.
  clock.advance(PAIR_CLAIM_MS + PAIR - 1);
  assert.equal((await pacing.admit(companyId, null, [{ message_id: 'e3', recipient: d }])).get('e3')!.admitted, false);
  clock.advance(1);
  assert.equal((await pacing.admit(companyId, null, [{ message_id: 'e3', recipient: d }])).get('e3')!.admitted, true);
});

test('messaging limit: new people counted once per moving 24 h while the budget lasts; counted people and open windows not held', async () => {
  const { companyId } = await s.company();
  const clock = new FakeClock();
  const pacing = new WhatsappPacing(db, clock, { pairIntervalMs: PAIR });
  const t0 = clock.now();
  const p = Array.from({ length: 6 }, person);
  const open = person();
  const closed = person();
  // Contacts through the operator API; their last inbound message as the webhooks record it.
  const imported = await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: open }, { phone: closed }] });
  assert.equal(imported.created, 2, JSON.stringify(imported));
  await db.updateTable('contacts').set({ last_inbound_at: new Date(t0 - 22 * H) }).where('company_id', '=', companyId).where('phone', '=', open).execute();
  await db.updateTable('contacts').set({ last_inbound_at: new Date(t0 - 25 * H) }).where('company_id', '=', companyId).where('phone', '=', closed).execute();
  const one = async (id: string, recipient: string) => (await pacing.admit(companyId, 3, [{ message_id: id, recipient }])).get(id);

  assert.deepEqual(await one('a0', p[0]), { admitted: true });
  assert.deepEqual(await limitUsage(db, companyId, clock.now()), { used: 1, resets_at: t0 + 24 * H });
  clock.advance(H);
  const batch = await pacing.admit(companyId, 3, [p[1], p[2], p[3], open, closed].map((recipient, i) => ({ message_id: `b${i}`, recipient })));
  assert.deepEqual(batch, new Map<string, Admission>([
    ['b0', { admitted: true }], ['b1', { admitted: true }],
    ['b2', { admitted: false, reason: 'messaging_limit', until: t0 + 24 * H }],
    ['b3', { admitted: true }], // window open (inbound 23 h ago): not counted
    ['b4', { admitted: false, reason: 'messaging_limit', until: t0 + 24 * H }], // window closed 1 h ago
  ]));
  assert.deepEqual(await limitUsage(db, companyId, clock.now()), { used: 3, resets_at: t0 + 24 * H });

  // People already counted go again without counting (after their pair interval).
  clock.advance(H);
  assert.deepEqual(await one('c0', p[0]), { admitted: true });
  assert.deepEqual(await one('c1', p[2]), { admitted: true });
  assert.deepEqual(await one('c2', p[4]), { admitted: false, reason: 'messaging_limit', until: t0 + 24 * H });
  assert.deepEqual((await limitUsage(db, companyId, clock.now())).used, 3);

  // 24 h after the first count it leaves the window: one new person fits, the next waits for the 2nd oldest.
  clock.set(t0 + 24 * H);
  assert.deepEqual(await pacing.admit(companyId, 3, [{ message_id: 'd0', recipient: p[4] }, { message_id: 'd1', recipient: p[5] }]), new Map<string, Admission>([
    ['d0', { admitted: true }], ['d1', { admitted: false, reason: 'messaging_limit', until: t0 + 25 * H }]]));
  assert.deepEqual(await limitUsage(db, companyId, clock.now()), { used: 3, resets_at: t0 + 25 * H });
  // p[0] was counted at t0: counted again now, as a new person (the budget is spent, so it waits).
  assert.deepEqual(await one('d2', p[0]), { admitted: false, reason: 'messaging_limit', until: t0 + 25 * H });
  // No limit (null): nobody is counted or held.
  assert.deepEqual(await one('d3', p[5]), { admitted: false, reason: 'messaging_limit', until: t0 + 25 * H });
  assert.deepEqual((await pacing.admit(companyId, null, [{ message_id: 'd4', recipient: p[5] }])).get('d4'), { admitted: true });
  assert.equal((await limitUsage(db, companyId, clock.now())).used, 3);

  // Pruning: at t0 + 48 h every pair's time has passed and every count is older than 24 h.
  clock.set(t0 + 48 * H);
  assert.ok(await prunePairs(db, clock.now(), 1_000) >= 6);
  assert.ok(await pruneLimitCounts(db, clock.now(), 1_000) >= 3);
  assert.deepEqual(await limitUsage(db, companyId, clock.now()), { used: 0, resets_at: null });
  assert.equal((await db.selectFrom('whatsapp_pairs').select('recipient').where('company_id', '=', companyId).execute()).length, 0);
});

test('admit() from two connections at once never admits more new people than the limit', async () => {
  const { companyId } = await s.company();
  const clock = new FakeClock();
  const a = new WhatsappPacing(db, clock, { pairIntervalMs: PAIR });
  const b = new WhatsappPacing(second?.db ?? db, clock, { pairIntervalMs: PAIR });
  const limit = 25;
  // 8 calls of 10 distinct new people each, 4 on each connection, all at once; some people in two calls.
  const people = Array.from({ length: 60 }, person);
  const calls = Array.from({ length: 8 }, (_, k) => (k % 2 ? b : a).admit(companyId, limit,
    Array.from({ length: 10 }, (_, i) => ({ message_id: `k${k}-${i}`, recipient: people[(k * 7 + i) % people.length] }))));
  const results = await Promise.all(calls);
  const ok = results.flatMap((m) => [...m].filter(([, x]) => x.admitted).map(([id]) => id));
  const recipients = new Set(ok.map((id) => { const [k, i] = id.slice(1).split('-').map(Number); return people[(k * 7 + i) % people.length]; }));
  assert.equal(recipients.size, limit, `admitted ${recipients.size} distinct people with a limit of ${limit}`);
  assert.equal(ok.length, limit, 'a person is admitted once (the pair interval holds the second message)');
  assert.deepEqual(await limitUsage(db, companyId, clock.now()), { used: limit, resets_at: clock.now() + 24 * H });
  const held = results.flatMap((m) => [...m.values()]).filter((x) => !x.admitted) as { reason: string }[];
  assert.equal(held.length, 80 - limit);
  assert.ok(held.every((x) => x.reason === 'messaging_limit' || x.reason === 'pair_rate'));
  assert.deepEqual(admitted(await a.admit(companyId, limit, [{ message_id: 'late', recipient: person() }])), []);
});

/** Sends `n` requests through `lanes` lanes of `pacing` to the fake Graph API for `numberId`. */
async function sendThrough(pacing: WhatsappPacing, companyId: number, rate: number, numberId: string, n: { left: number }, lanes: number, tag: string): Promise<number> {
  let sent = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (n.left > 0) {
      n.left--;
      assert.equal(await pacing.slot(companyId, rate), true);
      const res = await request(`${graph.baseUrl}/${numberId}/messages`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messaging_product: 'whatsapp', to: `${tag}${sent}`, type: 'template' }),
      });
      await res.body.text();
      sent++;
    }
  }));
  return sent;
}

test('slot(): two instances on two connections stay under the rate at the Graph API; slowed down, under half of it', { timeout: 60_000 }, async () => {
  const { companyId } = await s.company();
  const clock = new FakeClock();
  // The margin of a way that varies as much as this loaded test machine's scheduling can
  // (WHATSAPP_PACING_MARGIN; test/whatsapp/pacing-processes.ts says why).
  const a = new WhatsappPacing(db, clock, { pairIntervalMs: PAIR, marginMs: 150 });
  const b = new WhatsappPacing(second?.db ?? db, clock, { pairIntervalMs: PAIR, marginMs: 150 });
  const rate = 20;
  const numberId = randomPhoneNumberId();
  const left = { left: 70 };
  const [fromA, fromB] = await Promise.all([sendThrough(a, companyId, rate, numberId, left, 12, 'a'), sendThrough(b, companyId, rate, numberId, left, 12, 'b')]);
  const full = await graph.stats(numberId);
  assert.equal(full.count, 70);
  assert.ok(fromA > 10 && fromB > 10, `both instances get slots (${fromA} and ${fromB})`);
  assert.ok(full.most <= rate, `at most ${rate} requests in any 1-s window at the Graph API, got ${full.most}`);

  // 130429: half the rate for every instance until the slow-down ends (the same company's number,
  // its requests counted apart under another path).
  await a.slowDown(companyId, 60_000);
  const slowId = randomPhoneNumberId();
  const slow = { left: 24 };
  await Promise.all([sendThrough(a, companyId, rate, slowId, slow, 8, 'c'), sendThrough(b, companyId, rate, slowId, slow, 8, 'd')]);
  const slowed = await graph.stats(slowId);
  assert.equal(slowed.count, 24);
  assert.ok(slowed.most <= rate / 2, `at most ${rate / 2} in any 1-s window while slowed down, got ${slowed.most}`);
});

test('slot(): a lane whose signal aborts resolves false at once; the lanes behind it are served', { timeout: 30_000 }, async () => {
  const { companyId } = await s.company();
  const pacing = new WhatsappPacing(db, new FakeClock(), { pairIntervalMs: PAIR });
  assert.equal(await pacing.slot(companyId, 1, AbortSignal.abort()), false);
  assert.equal(await pacing.slot(companyId, 1), true); // the number's first slot: at once
  // At 1/s the next slots are about 1.1 s apart: abort the first waiter, the second takes its slot.
  const ctl = new AbortController();
  const first = pacing.slot(companyId, 1, ctl.signal);
  const second_ = pacing.slot(companyId, 1);
  ctl.abort();
  assert.equal(await first, false);
  assert.equal(await second_, true);
});

test('WHATSAPP_PACING_MARGIN: 40 ms by default, 0 ms to 1 s, and the worker registry spaces slots by it', async () => {
  assert.equal(loadConfig({}).whatsappPacingMarginMs, 40);
  assert.equal(loadConfig({ WHATSAPP_PACING_MARGIN: '150ms' }).whatsappPacingMarginMs, 150);
  assert.equal(loadConfig({ WHATSAPP_PACING_MARGIN: '0ms' }).whatsappPacingMarginMs, 0);
  for (const bad of ['banana', '2s', '-5ms', '40']) {
    assert.throws(() => loadConfig({ WHATSAPP_PACING_MARGIN: bad }), (err: unknown) => err instanceof ConfigError && /^WHATSAPP_PACING_MARGIN must be a duration/.test(err.message), bad);
  }
  // At 20/s with the 20 ms tolerance: (1000 + 20 + margin) / 20 ms apart.
  const registry = (marginMs?: number) => createProviderRegistry({
    secrets: s.service.secrets, whatsappRatePerSecond: 80, whatsappPairIntervalMs: 6000, whatsappPacingMarginMs: marginMs,
    db, clock: new FakeClock(), addressPolicy: parseAddressPolicy(undefined), deliveryTimeoutMs: 15_000,
  });
  for (const [margin, spacing] of [[undefined, 53], [150, 58.5]] as const) {
    const r = registry(margin);
    assert.ok(Math.abs(r.whatsappPacing.spacingFor(20) - spacing) < 0.02, `margin ${margin}: ${r.whatsappPacing.spacingFor(20)}`);
    await r.close();
  }
});
