#!/usr/bin/env -S node --max-semi-space-size=8 --max-old-space-size=1024
// The `cms` command-line tool and server (`cms serve`); see src/cli/main.ts. `npm start` runs
// `cms serve` with the same flags.
//
// Node version (issue 13 item 4): the sources are TypeScript run by Node's built-in type stripping,
// on by default from Node 22.18 (and 23.6). An older Node fails on the first .ts import with
// ERR_UNKNOWN_FILE_EXTENSION, which says nothing about the cause; so this file, plain JavaScript that
// every Node since 14 parses, checks the version first and exits 1 with a message naming the required
// version. It also exits when type stripping was turned off (`--no-experimental-strip-types`).
//
// Memory (issue 16: peak RSS under 250 MB under the trigger load): the V8 new space (young generation)
// is capped at 8 MB and the old space at 1 GiB (Node's defaults here: 64 MB and about 4 GiB). With the
// default old-space limit V8 lets the old space fill with garbage to several times the live heap (65-72
// MB under load) before a full collection, and the Buffers that garbage holds are malloc'd memory
// that stays: the service peaked at 363-395 MB. With both caps it peaked at 237-244 MB, at about 20%
// more CPU per request (more frequent collections); the service still does 0.84 of the bare durable
// accept server (docs/benchmarks.md, issue 16). The live heap is far below 1 GiB; an operator who
// prefers throughput to memory runs `node --max-semi-space-size=16 bin/cms.js serve` (see README).
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
