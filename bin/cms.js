#!/usr/bin/env -S node --max-semi-space-size=16
// The `cms` command-line tool and server (`cms serve`); see src/cli/main.ts. `npm start` runs
// `cms serve` with the same flag.
//
// The V8 new space (young generation) is capped at 16 MB (Node's default lets it grow to 64 MB on a
// machine of this size): under load that keeps the service's peak RSS about 100 MB lower at the same
// throughput (docs/benchmarks.md, "Memory").
//
// Node's compile cache (in the OS temporary directory, or NODE_COMPILE_CACHE) keeps the type-stripped
// sources and V8's code cache between runs. From the second start on, Node does not load its
// TypeScript stripper (a WebAssembly module whose compiled code stays resident) at all: the service's
// RSS is about 25 MB lower and it starts faster. It must be enabled before the first .ts file is
// loaded, hence the dynamic import.
import module from 'node:module';

module.enableCompileCache?.();
await import('../src/cli/main.ts');
