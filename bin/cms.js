#!/usr/bin/env node
// The `cms` command-line tool; see src/cli/main.ts.
import '../src/cli/main.ts';
