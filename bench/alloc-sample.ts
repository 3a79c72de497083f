/**
 * Where a running service's allocations come from (the garbage collector's share, docs/benchmarks.md).
 *
 *   node bench/accept-ratio.ts --rounds 1 --duration 15 --service-flags=--inspect=127.0.0.1:9229 &
 *   # once the service's load has started (its first load, after the warm-up):
 *   node bench/alloc-sample.ts [--inspector http://127.0.0.1:9229] [--seconds 5] [--requests-per-second N]
 *
 * Connects to the process's inspector (Node's global WebSocket), runs V8's sampling heap profiler for
 * `--seconds` with the objects later collected by minor and major GCs included (so it counts what was
 * allocated, not what is still alive), and prints the bytes allocated per allocating function and per
 * nearest function of the service's own TypeScript (the `.ts` frame closest to the allocation), in MB
 * and, given `--requests-per-second` (the load's rate), in kB per request. Sampling interval 8 kB:
 * a few hundred thousand samples in 5 s, so shares above 0.5% are stable to about a tenth.
 */
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    inspector: { type: 'string', default: 'http://127.0.0.1:9229' },
    seconds: { type: 'string', default: '5' },
    'requests-per-second': { type: 'string' },
    top: { type: 'string', default: '25' },
  },
});

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** Sends CDP commands over one WebSocket; resolves each with its `result`. */
async function connect(url: string): Promise<{ call: (method: string, params?: object) => Promise<any>; close: () => void }> {
  const targets = await (await fetch(`${url}/json/list`)).json() as { webSocketDebuggerUrl: string }[];
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => { ws.addEventListener('open', resolve); ws.addEventListener('error', reject); });
  let id = 0;
  const pending = new Map<number, (m: { result?: unknown; error?: unknown }) => void>();
  ws.addEventListener('message', (e) => {
    const m = JSON.parse(String(e.data));
    pending.get(m.id)?.(m);
    pending.delete(m.id);
  });
  const call = (method: string, params: object = {}) => new Promise<any>((resolve, reject) => {
    pending.set(++id, (m) => (m.error ? reject(new Error(JSON.stringify(m.error))) : resolve(m.result)));
    ws.send(JSON.stringify({ id, method, params }));
  });
  return { call, close: () => ws.close() };
}

const frameName = (n: ProfileNode): string =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;

/** Bytes per allocating function, and per nearest `.ts` frame on the allocation's stack. */
function aggregate(head: ProfileNode): { bySelf: Map<string, number>; byTs: Map<string, number>; total: number } {
  const bySelf = new Map<string, number>(), byTs = new Map<string, number>();
  let total = 0;
  const walk = (n: ProfileNode, nearestTs: string | undefined) => {
    const name = frameName(n);
    const ts = n.callFrame.url.endsWith('.ts') ? name : nearestTs;
    if (n.selfSize > 0) {
      total += n.selfSize;
      bySelf.set(name, (bySelf.get(name) ?? 0) + n.selfSize);
      byTs.set(ts ?? name, (byTs.get(ts ?? name) ?? 0) + n.selfSize);
    }
    for (const c of n.children) walk(c, ts);
  };
  walk(head, undefined);
  return { bySelf, byTs, total };
}

const seconds = Number(args.seconds);
const inspector = await connect(args.inspector);
await inspector.call('HeapProfiler.enable');
await inspector.call('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
await new Promise((r) => setTimeout(r, seconds * 1000));
const { profile } = await inspector.call('HeapProfiler.stopSampling') as { profile: { head: ProfileNode } };
inspector.close();

const { bySelf, byTs, total } = aggregate(profile.head);
const requests = args['requests-per-second'] ? Number(args['requests-per-second']) * seconds : undefined;
const fmt = (bytes: number) => `${(bytes / 1e6).toFixed(1).padStart(8)} MB ${(100 * bytes / total).toFixed(1).padStart(5)}%`
  + (requests ? ` ${(bytes / requests / 1000).toFixed(2).padStart(6)} kB/request` : '');
console.log(`allocated in ${seconds} s: ${(total / 1e6).toFixed(0)} MB${requests ? `, ${(total / requests / 1000).toFixed(1)} kB per request` : ''}`);
for (const [title, map] of [['by allocating function', bySelf], ['by nearest .ts frame', byTs]] as const) {
  console.log(`\n${title}:`);
  for (const [name, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(args.top))) console.log(`${fmt(bytes)}  ${name}`);
}
