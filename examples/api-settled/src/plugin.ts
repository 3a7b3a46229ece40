// api-settled: a wait heuristic that ends an action once the page's own API
// calls are over, whatever else the page keeps loading.
//
//   POST /api/v1/tabs/{id}/click
//   {"x": 10, "y": 10, "wait_until": {"type": "api_settled", "quiet_ms": 300}}
//
// `network_idle` waits for every request; on a page with an analytics beacon
// that never answers, a long-poll to another site, or a slow image, it runs
// to its cap. `api_settled` counts only the page's own XHR and fetch calls
// (same site), and a navigation until its load event: it is done when none
// has been in flight for `quiet_ms` (and at least `grace_ms` has passed for
// the action's handlers to start theirs), or at `max_ms`, or when a dialog
// opens.

import { done, pending, PluginError, type Signal, waits } from "@wabp/plugin";

interface Params {
  quiet_ms?: number;
  grace_ms?: number;
  max_ms?: number;
}

interface State {
  quietMs: number;
  graceMs: number;
  maxMs: number;
  /** Ids of the same-site API calls in flight. */
  inFlight: Set<string>;
  navigating: boolean;
  /** When the last call or navigation ended, on the wait's clock. */
  lastActivityMs: number;
  calls: number;
}

const API_TYPES = new Set(["XHR", "Fetch"]);

function bounded(params: Params, field: keyof Params, fallback: number, max: number): number {
  const value = params[field] ?? fallback;
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw PluginError.invalid(`"${field}" must be an integer from 0 to ${max}`);
  }
  return value;
}

/** Applies the signals to the state; true if a dialog opened. */
function observe(state: State, signals: Signal[], nowMs: number): boolean {
  for (const signal of signals) {
    switch (signal.tag) {
      case "request-started":
        if (signal.val.sameSite && API_TYPES.has(signal.val.resourceType)) {
          state.inFlight.add(signal.val.id);
          state.calls += 1;
        }
        break;
      case "request-finished":
        if (state.inFlight.delete(signal.val)) state.lastActivityMs = nowMs;
        break;
      case "navigation-started":
        state.navigating = true;
        break;
      case "load":
        if (state.navigating) state.lastActivityMs = nowMs;
        state.navigating = false;
        break;
      case "dialog-opened":
        return true;
    }
  }
  return false;
}

export const wait = waits({
  api_settled: {
    description:
      "Waits until the page's own XHR/fetch calls and navigations have been quiet for quiet_ms; other sites' requests, images and streams don't hold it",
    params: {
      type: "object",
      properties: {
        quiet_ms: { type: "integer", minimum: 0, maximum: 10000, default: 300, description: "Quiet time required after the last call ended" },
        grace_ms: { type: "integer", minimum: 0, maximum: 10000, default: 100, description: "Time for the action's handlers to start their calls" },
        max_ms: { type: "integer", minimum: 0, maximum: 60000, default: 10000, description: "The longest the wait may take" },
      },
    },
    begin(params: Params) {
      const state: State = {
        quietMs: bounded(params, "quiet_ms", 300, 10000),
        graceMs: bounded(params, "grace_ms", 100, 10000),
        maxMs: bounded(params, "max_ms", 10000, 60000),
        inFlight: new Set(),
        navigating: false,
        lastActivityMs: 0,
        calls: 0,
      };
      return { state, decision: pending(Math.min(state.graceMs, state.maxMs)) };
    },
    poll(state: State, signals, elapsedMs) {
      if (observe(state, signals, elapsedMs)) return done("dialog");
      if (elapsedMs >= state.maxMs) return done("max_ms");
      if (state.inFlight.size > 0 || state.navigating) {
        return pending(Math.min(100, state.maxMs - elapsedMs));
      }
      // The clock may step back a little: never wait longer than quiet_ms from here.
      const quietSince = Math.min(state.lastActivityMs, elapsedMs);
      const readyAt = Math.max(state.graceMs, quietSince + state.quietMs);
      if (elapsedMs >= readyAt) return done(state.calls > 0 ? "api_settled" : "no_api_calls");
      return pending(Math.min(readyAt - elapsedMs, state.maxMs - elapsedMs));
    },
  },
});
