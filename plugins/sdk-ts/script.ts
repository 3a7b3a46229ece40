// Running an expression in the page (capability "script").

import * as script from "wabp:plugin/script@0.1.0";

/** Evaluates an expression in the page's main world, awaiting promises; its value. */
export function evaluate<T = unknown>(expression: string): T {
  return JSON.parse(script.evaluate(expression)) as T;
}
