/**
 * CPU cost of the request side of 4.3 trigger automation, without HTTP or a database (docs/benchmarks.md): Python-compatible JSON decoding, validation, phone normalisation and de-duplication of 50
 * contacts, and serialising the batch row, for the same body as bench/http.ts. Prints microseconds per
 * request, the median over rounds of 500 requests (the machine is shared). The body steps are measured
 * in every round through both paths, in alternating order: as the service runs them (`parse`,
 * `validate`: parseBody + validateRequest, which take the fast path of src/http/validation/fast.ts
 * for such ordinary bodies) and forced through the exact path (`parse (exact)`, `validate (exact)`:
 * json.ts decoding, validate.ts over PyValues); wall time per step, and CPU time (user + system)
 * of both steps together, garbage collection included. Then, with
 * `--expose-gc`, bytes allocated per request by each path (heap growth over batches small enough
 * that no scavenge runs: give `--max-semi-space-size=64`; the largest of 20 batches is kept).
 *
 *   node --expose-gc --max-semi-space-size=64 bench/request-cpu.ts [--iterations 20000]
 */
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { distinctItems, toJsonText } from '../src/domain/batches.ts';
import { decodeJsonBytes } from '../src/http/validation/decode.ts';
import { parseBody, parsePythonJson, validateRequest, TriggerAutomation, type BodyParse } from '../src/http/validation/index.ts';

const { values: args } = parseArgs({ options: { iterations: { type: 'string', default: '20000' } } });
const N = Number(args.iterations);
const phoneOf = (i: number) => `+49151${String(i).padStart(8, '0')}`;
const bodies = Array.from({ length: 1000 }, (_, seed) => Buffer.from(`{"automation_id":7,"contacts":${JSON.stringify(Array.from({ length: 50 }, (_, i) => ({
  phone: phoneOf(seed * 50 + i), first_name: 'Ada', last_name: 'Lovelace', variables: { order_id: `A-${seed}-${i}` },
})))}}`));

/** The exact path alone: what parseBody did before the fast path (the bodies here are UTF-8 JSON objects). */
const exactParse = (raw: Buffer): BodyParse => ({ kind: 'value', value: parsePythonJson(decodeJsonBytes(raw) as string) });

// The fast path must be taken for these bodies and give what the exact path gives.
const sample = parseBody(bodies[0], 'application/json');
assert.ok(sample.kind === 'value' && sample.json !== undefined, 'fast path not taken');
assert.deepStrictEqual(validateRequest(TriggerAutomation, sample), validateRequest(TriggerAutomation, exactParse(bodies[0])));

type Step = 'parse' | 'validate' | 'parse + validate (CPU)' | 'parse (exact)' | 'validate (exact)' | 'parse + validate (exact, CPU)' |
  'distinct' | 'serialise' | 'JSON.parse (reference)';
const STEPS: Step[] = ['parse', 'validate', 'parse + validate (CPU)', 'parse (exact)', 'validate (exact)', 'parse + validate (exact, CPU)', 'distinct', 'serialise', 'JSON.parse (reference)'];
const CHUNK = 500;
/** Per round, µs per request of each step (the median over rounds is printed: the machine is shared). */
const rounds: Record<Step, number[]> = Object.fromEntries(STEPS.map((k) => [k, []])) as unknown as Record<Step, number[]>;

/** One round of `CHUNK` requests through one path: wall µs per request of each step, CPU µs of both. */
function bodyRound(first: number, exact: boolean): { contacts: any[] }[] {
  let parse = 0;
  let validate = 0;
  const out: { contacts: any[] }[] = [];
  const cpu = process.cpuUsage();
  for (let i = first; i < first + CHUNK; i++) {
    const raw = bodies[i % bodies.length];
    let t = performance.now();
    const body = exact ? exactParse(raw) : parseBody(raw, 'application/json');
    parse += performance.now() - t;
    t = performance.now();
    const v = validateRequest(TriggerAutomation, body);
    validate += performance.now() - t;
    if (!v.ok) throw new Error('invalid');
    out.push(v.body as { contacts: any[] });
  }
  const used = process.cpuUsage(cpu);
  rounds[exact ? 'parse (exact)' : 'parse'].push((parse * 1000) / CHUNK);
  rounds[exact ? 'validate (exact)' : 'validate'].push((validate * 1000) / CHUNK);
  rounds[exact ? 'parse + validate (exact, CPU)' : 'parse + validate (CPU)'].push((used.user + used.system) / CHUNK);
  return out;
}

for (let r = 0; r * CHUNK < N; r++) {
  // Both paths in every round, in alternating order, so that both see the same machine load.
  const fastFirst = r % 2 === 0;
  const validated = bodyRound(r * CHUNK, !fastFirst);
  bodyRound(r * CHUNK, fastFirst);
  let distinct = 0;
  let serialise = 0;
  let reference = 0;
  for (let j = 0; j < CHUNK; j++) {
    const v = validated[j];
    let t = performance.now();
    const items = distinctItems(v.contacts.map((c) => ({
      phone: c.phone, first_name: c.first_name ?? null, last_name: c.last_name ?? null, variables: c.variables ?? null, image_url: null, video_url: null,
    })), 'DE');
    distinct += performance.now() - t;
    t = performance.now();
    toJsonText(items);
    serialise += performance.now() - t;
    t = performance.now();
    JSON.parse(bodies[(r * CHUNK + j) % bodies.length].toString('utf8'));
    reference += performance.now() - t;
  }
  rounds.distinct.push((distinct * 1000) / CHUNK);
  rounds.serialise.push((serialise * 1000) / CHUNK);
  rounds['JSON.parse (reference)'].push((reference * 1000) / CHUNK);
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(`µs per request, median of ${rounds.parse.length} rounds of ${CHUNK} requests per path (wall time per step; CPU time for both steps)`);
for (const k of STEPS) console.log(`${k.padEnd(30)} ${median(rounds[k]).toFixed(1)} µs`);
console.log(`body bytes ${bodies[0].length}`);

const gc = (globalThis as { gc?: () => void }).gc;
if (gc) {
  const BATCH = 50;
  const allocated = (exact: boolean): number => {
    let most = 0;
    for (let round = 0; round < 20; round++) {
      gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < BATCH; i++) {
        const raw = bodies[(round * BATCH + i) % bodies.length];
        validateRequest(TriggerAutomation, exact ? exactParse(raw) : parseBody(raw, 'application/json'));
      }
      most = Math.max(most, process.memoryUsage().heapUsed - before);
    }
    return most / BATCH;
  };
  console.log(`allocated, parse + validate: ${(allocated(false) / 1024).toFixed(1)} kB (exact path ${(allocated(true) / 1024).toFixed(1)} kB)`);
}
