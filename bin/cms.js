#!/usr/bin/env -S node --max-semi-space-size=16
// The `cms` command-line tool; see src/cli/main.ts. The V8 new space (young generation) is capped
// at 16 MB (Node's default lets it grow to 64 MB on a machine of this size): under load that keeps
// the service's peak RSS about 100 MB lower at the same throughput (docs/benchmarks.md, "Memory").
// `npm start` passes the same flag.
import '../src/cli/main.ts';
