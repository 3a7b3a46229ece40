// Wall-clock time and sleeping (capability "clock").

import * as clock from "wabp:plugin/clock@0.1.0";

/** Milliseconds since the Unix epoch. */
export function nowMs(): number {
  return Number(clock.nowMs());
}

/** Suspends the plugin; the call's deadline keeps running. */
export function sleepMs(ms: number): void {
  clock.sleepMs(Math.max(0, Math.round(ms)));
}
