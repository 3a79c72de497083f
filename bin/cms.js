#!/usr/bin/env -S node --max-semi-space-size=16
// The `cms` command-line tool and server (`cms serve`); see src/cli/main.ts. `npm start` runs
// `cms serve` with the same flag.
//
// Node version (issue 13 item 4): the sources are TypeScript run by Node's built-in type stripping,
// on by default from Node 22.18 (and 23.6). An older Node fails on the first .ts import with
// ERR_UNKNOWN_FILE_EXTENSION, which says nothing about the cause; so this file, plain JavaScript that
// every Node since 14 parses, checks the version first and exits 1 with a message naming the required
// version. It also exits when type stripping was turned off (`--no-experimental-strip-types`).
//
// The V8 new space (young generation) is capped at 16 MB (Node's default lets it grow to 64 MB on a
// machine of this size): under load that keeps the service's peak RSS about 100 MB lower at the same
// throughput (docs/benchmarks.md, "Memory"). The old space is left at Node's default limit (about
// 4 GiB here): capping it (`--max-old-space-size=1024` or `1536`) makes V8 collect it more often and
// lowered the peak RSS under the trigger load from 363-391 MB to 245-279 MB, but cost 35-110 µs more
// service CPU per request (about +10-20%) in paired runs (issue 16, 2026-11-24); an operator who
// prefers memory can set it in NODE_OPTIONS.
//
// Node's compile cache (in the OS temporary directory, or NODE_COMPILE_CACHE) keeps the type-stripped
// sources and V8's code cache between runs. From the second start on, Node does not load its
// TypeScript stripper (a WebAssembly module whose compiled code stays resident) at all: the service's
// RSS is about 25 MB lower and it starts faster. It must be enabled before the first .ts file is
// loaded, hence the dynamic import.
import module from 'node:module';

const REQUIRED = '22.18';
const [major, minor] = process.versions.node.split('.').map(Number);
const supported = major >= 24 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);
if (!supported || process.features.typescript === false) {
  process.stderr.write(
    (supported
      ? `cms: this Node.js ${process.versions.node} has TypeScript type stripping turned off (--no-experimental-strip-types in NODE_OPTIONS?); cms needs it on.\n`
      : `cms requires Node.js ${REQUIRED} or newer (Node 24 LTS recommended); this is Node.js ${process.versions.node}.\n`) +
      'It runs its TypeScript sources with Node\'s built-in type stripping. Install a current Node from https://nodejs.org/ (or `nvm install 24`).\n',
  );
  process.exit(1);
}

module.enableCompileCache?.();
await import('../src/cli/main.ts');
