/** `cms segment ...` (issue 15 item 3). Stub until written. */
import type { Command } from 'commander';

/** Register `segment` on `program`. */
export function registerSegment(_program: Command): void {
}
