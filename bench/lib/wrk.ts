/**
 * A load driven by wrk (Debian package `wrk`, a C load generator) in a process of its own, so that the
 * load generator neither shares the benchmark's Node process nor takes much CPU from the servers it
 * measures (docs/benchmarks.md#method).
 *
 * `wrkLoad` writes the requests (path, headers, body) to a file, one request a line as JSON, and runs
 * `wrk -t<threads> -c<connections> -d<duration>s --latency -s <script>`: the Lua script reads that file
 * once per wrk thread, formats every request up front (`wrk.format`), and hands them out in turn. When
 * the load ends, the script's `done` prints one line of JSON (requests, errors, latency percentiles)
 * and then waits for a line on its standard input: while it waits, the benchmark reads wrk's own CPU
 * time from /proc, then lets it exit. So wrk's CPU per request is measured exactly, not estimated.
 *
 * Units: durations in seconds, latencies in ms (wrk measures µs), CPU in clock ticks of 10 ms (as
 * bench/lib/accept-load.ts `cpuTicks`). Throws when wrk is missing or exits without its result line.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuTicks, type LoadRequest, type LoadStats } from './accept-load.ts';

/** What one wrk load showed: LoadStats plus wrk's own CPU ticks over the run. */
export interface WrkStats extends LoadStats {
  /** CPU time of the wrk process from its start to the end of the load, in ticks of 10 ms. */
  generatorTicks: number;
}

const SCRIPT = `
local reqs = {}
local n = 0
local i = 0
local function unescape(s)
  return (s:gsub('\\\\(.)', { n = '\\n', r = '\\r', t = '\\t', ['"'] = '"', ['\\\\'] = '\\\\', ['/'] = '/' }))
end
-- One request a line: path TAB header-name=value;... TAB body (tabs and newlines in the body are escaped).
function init(args)
  for line in io.lines(args[1]) do
    local p, h, b = line:match('^([^\\t]*)\\t([^\\t]*)\\t(.*)$')
    local headers = { ["content-type"] = "application/json" }
    for k, v in h:gmatch('([^=;]+)=([^;]*)') do headers[k] = v end
    n = n + 1
    reqs[n] = wrk.format("POST", p, headers, unescape(b))
  end
  i = math.random(n) - 1
end
function request()
  i = i % n + 1
  return reqs[i]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
  io.stdout:flush()
  io.read()
end
`;

/** Escapes a body for the request file's one-line format (the Lua `unescape` above reverses it). */
function escapeBody(body: string): string {
  return body.replace(/[\\\n\r\t]/g, (c) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c]!);
}

/**
 * Runs wrk against `url` (scheme, host and port; each request's own path is used) for `duration`
 * seconds with `connections` connections on `threads` threads (default 1: one thread drives a few
 * thousand requests/s on a fraction of a core), handing out `requests` in turn, starting at a random one.
 * Header names and values must not contain `=`, `;`, tabs or newlines.
 */
export async function wrkLoad(url: string, connections: number, duration: number, requests: readonly LoadRequest[], threads = 1): Promise<WrkStats> {
  if (requests.length === 0) throw new Error('wrkLoad: no requests');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-wrk-'));
  try {
    const scriptFile = path.join(dir, 'load.lua');
    const dataFile = path.join(dir, 'requests.txt');
    fs.writeFileSync(scriptFile, SCRIPT);
    fs.writeFileSync(dataFile, requests.map((r) => {
      const headers = Object.entries(r.headers).map(([k, v]) => `${k}=${v}`).join(';');
      return `${r.path}\t${headers}\t${escapeBody(r.body)}`;
    }).join('\n') + '\n');
    const child = spawn('wrk', [`-t${threads}`, `-c${connections}`, `-d${duration}s`, '--timeout', '10s', '-s', scriptFile, url, '--', dataFile], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    let generatorTicks = -1;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      out += d;
      if (generatorTicks < 0 && out.includes('WRK_RESULT') && out.endsWith('\n')) {
        generatorTicks = cpuTicks(child.pid!); // wrk waits on its stdin in `done`: it is still there
        child.stdin.end('\n');
      }
    });
    const code = await new Promise<number | null>((resolve, reject) => { child.once('error', reject); child.once('exit', resolve); });
    const m = /WRK_RESULT (\{.*\})/.exec(out);
    if (!m) throw new Error(`wrk exited with ${code} without a result:\n${out}`);
    const r = JSON.parse(m[1]) as Record<string, number>;
    const seconds = r.duration_us / 1e6;
    return {
      rps: Math.round(r.requests / seconds), p50: r.p50_us / 1000, p99: r.p99_us / 1000,
      non2xx: r.connect + r.read + r.write + r.status + r.timeout, requests: r.requests, generatorTicks: Math.max(0, generatorTicks),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
