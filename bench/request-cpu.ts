/**
 * CPU cost of the request side of 4.3 trigger automation, without HTTP or a database (issue 4 item 3):
 * Python-compatible JSON decoding, validation, phone normalisation and de-duplication of 50 contacts,
 * and serialising the batch row, for the same body as bench/http.ts. Prints microseconds per request.
 *
 *   node bench/request-cpu.ts [--iterations 20000]
 */
import { parseArgs } from 'node:util';
import { distinctItems, toJsonText } from '../src/domain/batches.ts';
import { parseBody, validateRequest, TriggerAutomation } from '../src/http/validation/index.ts';

const { values: args } = parseArgs({ options: { iterations: { type: 'string', default: '20000' } } });
const N = Number(args.iterations);
const phoneOf = (i: number) => `+49151${String(i).padStart(8, '0')}`;
const bodies = Array.from({ length: 1000 }, (_, seed) => Buffer.from(`{"automation_id":7,"contacts":${JSON.stringify(Array.from({ length: 50 }, (_, i) => ({
  phone: phoneOf(seed * 50 + i), first_name: 'Ada', last_name: 'Lovelace', variables: { order_id: `A-${seed}-${i}` },
})))}}`));

type Step = 'parse' | 'validate' | 'distinct' | 'serialise' | 'JSON.parse (reference)';
const spent: Record<Step, number> = { parse: 0, validate: 0, distinct: 0, serialise: 0, 'JSON.parse (reference)': 0 };
for (let i = 0; i < N; i++) {
  const raw = bodies[i % bodies.length];
  let t = performance.now();
  const body = parseBody(raw, 'application/json');
  spent.parse += performance.now() - t;
  t = performance.now();
  const v = validateRequest(TriggerAutomation, body);
  spent.validate += performance.now() - t;
  if (!v.ok) throw new Error('invalid');
  t = performance.now();
  const items = distinctItems((v.body as { contacts: any[] }).contacts.map((c) => ({
    phone: c.phone, first_name: c.first_name ?? null, last_name: c.last_name ?? null, variables: c.variables ?? null, image_url: null, video_url: null,
  })), 'DE');
  spent.distinct += performance.now() - t;
  t = performance.now();
  toJsonText(items);
  spent.serialise += performance.now() - t;
  t = performance.now();
  JSON.parse(raw.toString('utf8'));
  spent['JSON.parse (reference)'] += performance.now() - t;
}
for (const [k, v] of Object.entries(spent)) console.log(`${k.padEnd(24)} ${(v * 1000 / N).toFixed(1)} µs`);
console.log(`body bytes ${bodies[0].length}`);
