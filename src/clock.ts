/**
 * The clock: milliseconds since the epoch. Every layer that needs "now" (HTTP, queue, events) takes one
 * through its dependencies instead of calling Date.now(); tests pass a fake one (test/helpers/server.ts).
 */
export interface Clock { now(): number }

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };
