/**
 * The event loop's per-endpoint gate (src/queue/events/lanes.ts, over p-limit) on its own: at most
 * EVENT_CONCURRENCY attempts in flight per endpoint while other endpoints go on; what the process holds
 * (queued or in flight) and which leases are renewed; an endpoint holding its whole share is skipped
 * by the next claim; dropping a disabled endpoint's queued deliveries uncounts them without attempting
 * them; closing starts nothing more; the claimer is woken when a lane has room again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClaimedDelivery } from '../../src/db/events.ts';
import { EndpointLanes, QUEUE_FACTOR } from '../../src/queue/events/lanes.ts';

let seq = 0;
const delivery = (endpointId: number) => ({ event_id: `evt_${++seq}`, endpoint_id: endpointId, attempts: 0, payload: '{}', url: 'http://x', secret_sealed: 's', lease: 'l' }) as ClaimedDelivery;
const tick = () => new Promise((r) => setImmediate(r));

/** A gate whose attempts wait until released one by one; records what started. */
function gate(perEndpoint: number) {
  const started: ClaimedDelivery[] = [];
  const release = new Map<ClaimedDelivery, () => void>();
  let rooms = 0;
  const lanes = new EndpointLanes({
    perEndpoint,
    attempt: (d) => new Promise<void>((resolve) => { started.push(d); release.set(d, () => { lanes.settle(d); resolve(); }); }),
    onRoom: () => { rooms++; },
  });
  return { lanes, started, finish: (d: ClaimedDelivery) => release.get(d)!(), rooms: () => rooms };
}

test('at most perEndpoint attempts in flight per endpoint; another endpoint is not held up', async () => {
  const { lanes, started, finish } = gate(2);
  const a = [1, 2, 3, 4, 5].map(() => delivery(1));
  const b = delivery(2);
  lanes.add([...a, b]);
  await tick();
  assert.deepEqual(started, [a[0], a[1], b]);
  assert.equal(lanes.held, 6);
  assert.equal(lanes.busy, true);
  assert.equal(lanes.holding().length, 6);

  finish(a[0]);
  await tick();
  assert.deepEqual(started, [a[0], a[1], b, a[2]], 'the next of the lane starts when one ends');
  assert.equal(lanes.held, 5);
  assert.equal(lanes.holding().includes(a[0]), false, 'a settled delivery is no longer renewed');
  for (const d of [a[1], a[2], b]) finish(d);
  await tick();
  finish(a[3]);
  await tick();
  finish(a[4]);
  await tick();
  assert.equal(lanes.held, 0);
  assert.equal(lanes.busy, false);
});

test('a lane holding its whole share is saturated; the claimer is woken when it has room again', async () => {
  const { lanes, started, finish, rooms } = gate(1);
  const all = Array.from({ length: QUEUE_FACTOR }, () => delivery(7));
  lanes.add(all);
  await tick();
  assert.equal(lanes.laneCap, QUEUE_FACTOR);
  assert.deepEqual(lanes.saturated(), [7]);
  finish(started[0]);
  await tick();
  assert.deepEqual(lanes.saturated(), []);
  assert.ok(rooms() >= 1, 'room again: the claimer is nudged');
});

test('dropping a disabled endpoint forgets its queued deliveries (never attempted); closing starts nothing more', async () => {
  const { lanes, started, finish } = gate(1);
  const a = [1, 2, 3].map(() => delivery(3));
  const b = [1, 2].map(() => delivery(4));
  lanes.add([...a, ...b]);
  await tick();
  assert.deepEqual(started, [a[0], b[0]]);
  lanes.dropQueued([3]);
  assert.equal(lanes.held, 3, 'the in-flight one of endpoint 3 and both of endpoint 4');
  assert.deepEqual(lanes.holding(), [a[0], b[0], b[1]]);
  finish(a[0]);
  await tick();
  assert.deepEqual(started, [a[0], b[0]], 'the dropped ones never start');

  lanes.close();
  finish(b[0]);
  await tick();
  assert.deepEqual(started, [a[0], b[0]], 'closed: the queued one stays with its lease');
  assert.equal(lanes.held, 1);
  assert.deepEqual(lanes.holding(), [b[1]]);
  assert.equal(lanes.busy, false);
});
