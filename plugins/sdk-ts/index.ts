// The wabp plugin SDK for TypeScript and JavaScript: a thin, typed layer over
// the bindings generated from wit/ (wabp/types/). One helper per plugin kind
// turns plain objects into the interface the engine calls; errors become the
// WIT `plugin-error` the engine maps to an HTTP status and an ABP code.
// Host capabilities live in their own modules (`@wabp/plugin/log`, `/input`,
// `/page`, `/script`, `/navigation`, `/clock`): import only what plugin.toml
// grants.

import type * as types from "wabp:plugin/types@0.1.0";
import type * as markupWit from "wabp:plugin/markup@0.1.0";
import type * as waitWit from "wabp:plugin/wait@0.1.0";
import type * as policyWit from "wabp:plugin/policy@0.1.0";
import type * as interceptorWit from "wabp:plugin/interceptor@0.1.0";

export type Rect = types.Rect;
export type ElementBox = types.ElementBox;
export type ViewportInfo = types.ViewportInfo;
export type Modifiers = types.Modifiers;
export type MouseButton = types.MouseButton;
export type Target = types.Target;
export type Located = types.Located;

/** The kinds of expected failure, as the engine reports them. */
export type ErrorCode = types.ErrorCode;

/** A JSON Schema (draft 2020-12) object. */
export type JsonSchema = { [key: string]: unknown };

/** An expected failure: the engine answers it with `code`'s HTTP status. */
export class PluginError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.code = code;
  }

  /** 400 INVALID_REQUEST: the params don't fit. */
  static invalid(message: string): PluginError {
    return new PluginError("invalid-request", message);
  }

  /** 404: the thing asked for does not exist. */
  static notFound(message: string): PluginError {
    return new PluginError("not-found", message);
  }

  /** 500: anything else. */
  static failed(message: string): PluginError {
    return new PluginError("failed", message);
  }
}

const HOST_ERROR_CODES: { [tag: string]: ErrorCode } = {
  denied: "failed",
  invalid: "invalid-request",
  failed: "failed",
  "stale-ref": "stale-ref",
  "selector-not-found": "selector-not-found",
  "element-not-visible": "element-not-visible",
  "element-not-interactable": "element-not-interactable",
};

/**
 * Whatever a plugin threw, as the WIT `plugin-error` record: a PluginError
 * keeps its code, a host error (`{ tag, val }`) maps to the matching code,
 * anything else is `failed` with its message.
 */
export function toPluginError(error: unknown): types.PluginError {
  if (error instanceof PluginError) {
    return { code: error.code, message: error.message };
  }
  const hostError = asHostError(error);
  if (hostError) {
    return { code: HOST_ERROR_CODES[hostError.tag] ?? "failed", message: hostError.val };
  }
  if (error instanceof Error) {
    return { code: "failed", message: error.message };
  }
  return { code: "failed", message: String(error) };
}

/** A failed host call's `host-error`, however the runtime delivered it. */
export function asHostError(error: unknown): { tag: string; val: string } | undefined {
  const candidates = [error, (error as { payload?: unknown } | null)?.payload];
  for (const candidate of candidates) {
    if (
      candidate !== null &&
      typeof candidate === "object" &&
      typeof (candidate as { tag?: unknown }).tag === "string" &&
      typeof (candidate as { val?: unknown }).val === "string"
    ) {
      return candidate as { tag: string; val: string };
    }
  }
  return undefined;
}

/** Runs `body`, turning anything it throws into a `plugin-error`. */
function guarded<T>(body: () => T): T {
  try {
    return body();
  } catch (error) {
    throw toPluginError(error);
  }
}

// ---- Actions ---------------------------------------------------------------

/** What an action is called with besides its params. */
export interface ActionContext {
  tabId: string;
  /** Where the previous input action left the virtual pointer. */
  pointer: { x: number; y: number };
}

/** One named action: a REST endpoint, an MCP tool and an agent tool. */
export interface Action<P = any> {
  description: string;
  /** JSON Schema of the params object. */
  params: JsonSchema;
  /** Its result becomes the envelope's `result` (any JSON value). */
  run(params: P, context: ActionContext): unknown;
}

/**
 * The `action` export of an action plugin, from its actions by name
 * (snake_case). `export const action = actions({ ... })`.
 */
export function actions(table: { [name: string]: Action }) {
  return {
    describe() {
      return Object.entries(table).map(([name, action]) => ({
        name,
        description: action.description,
        paramsSchema: JSON.stringify(action.params),
      }));
    },
    run(name: string, params: string, context: { tabId: string; pointerX: number; pointerY: number }): string {
      return guarded(() => {
        const action = Object.prototype.hasOwnProperty.call(table, name) ? table[name] : undefined;
        if (!action) {
          throw PluginError.notFound(`no action ${name} in this plugin`);
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(params);
        } catch (error) {
          throw PluginError.invalid(`params are not JSON: ${String(error)}`);
        }
        const result = action.run(parsed, {
          tabId: context.tabId,
          pointer: { x: context.pointerX, y: context.pointerY },
        });
        return JSON.stringify(result === undefined ? null : result);
      });
    },
  };
}

// ---- Markup ----------------------------------------------------------------

export type Element = markupWit.Element;
export type Shape = markupWit.Shape;
export type Color = markupWit.Color;

/** A renderer: the tags it draws, and the shapes for a capture's elements. */
export interface Markup {
  tags: string[];
  render(tags: string[], viewport: { width: number; height: number }, elements: Element[]): Shape[];
}

/** Colour from components (alpha 0-255, default opaque). */
export function rgba(r: number, g: number, b: number, a = 255): Color {
  return { r, g, b, a };
}

/** A rectangle outline, `width` px wide, dashed if `dash` has lengths, filled if `fill` is given. */
export function outline(rect: Rect, stroke: Color, width = 2, dash: number[] = [], fill?: Color): Shape {
  // A plain array: the runtime takes one for any list (the bindings say Float32Array).
  return { tag: "rect", val: { rect, stroke, strokeWidth: width, fill, dash: dash as unknown as Float32Array } };
}

/** A text label with its top-left corner at (x, y). */
export function label(x: number, y: number, text: string, color: Color, background?: Color, size = 12): Shape {
  return { tag: "label", val: { x, y, text, color, background, size } };
}

/** A straight line from (x1, y1) to (x2, y2), `width` px wide. */
export function line(x1: number, y1: number, x2: number, y2: number, color: Color, width = 2): Shape {
  return { tag: "line", val: { x1, y1, x2, y2, color, width } };
}

/** The `markup` export of a markup plugin. */
export function markup(renderer: Markup) {
  return {
    describe: () => renderer.tags,
    render(tags: string[], viewportWidth: number, viewportHeight: number, elements: Element[]): Shape[] {
      return guarded(() => renderer.render(tags, { width: viewportWidth, height: viewportHeight }, elements));
    },
  };
}

// ---- Waits -----------------------------------------------------------------

export type Signal = waitWit.Signal;
export type Decision = waitWit.Decision;

/** Ask again after `ms` (or sooner, on new signals). */
export function pending(ms: number): Decision {
  return { tag: "pending", val: Math.max(0, Math.round(ms)) };
}

/** Settled; `reason` goes into the envelope's timing. */
export function done(reason: string): Decision {
  return { tag: "done", val: reason };
}

/** One wait type: `begin` makes the state a wait polls with. */
export interface Wait<P = any, S = any> {
  description: string;
  params: JsonSchema;
  begin(params: P): { state: S; decision: Decision };
  poll(state: S, signals: Signal[], elapsedMs: number): Decision;
}

/**
 * The `wait` export of a wait plugin. One wait runs at a time on an
 * instance, so the state of the wait in progress is kept here.
 */
export function waits(table: { [name: string]: Wait }) {
  let current: { wait: Wait; state: unknown } | undefined;
  return {
    describe() {
      return Object.entries(table).map(([name, wait]) => ({
        name,
        description: wait.description,
        paramsSchema: JSON.stringify(wait.params),
      }));
    },
    begin(name: string, params: string): Decision {
      return guarded(() => {
        const wait = Object.prototype.hasOwnProperty.call(table, name) ? table[name] : undefined;
        if (!wait) {
          throw PluginError.notFound(`no wait type ${name} in this plugin`);
        }
        const started = wait.begin(JSON.parse(params));
        current = { wait, state: started.state };
        return started.decision;
      });
    },
    poll(signals: Signal[], elapsedMs: number | bigint): Decision {
      if (!current) {
        return done("no wait in progress");
      }
      return current.wait.poll(current.state, signals, Number(elapsedMs));
    },
  };
}

// ---- Policies ----------------------------------------------------------------

export type PolicyRequest = policyWit.Request;
export type Verdict = policyWit.Verdict;

export const allow: Verdict = { tag: "allow" };
export function deny(reason: string): Verdict {
  return { tag: "deny", val: reason };
}
export function ask(prompt: string): Verdict {
  return { tag: "ask", val: prompt };
}

/** The `policy` export: `decide` gets the operator's policy file as JSON. */
export function policy(decide: (settings: any, request: PolicyRequest) => Verdict) {
  return {
    decide(settings: string, request: PolicyRequest): Verdict {
      return guarded(() => decide(JSON.parse(settings), request));
    },
  };
}

// ---- Interceptors ------------------------------------------------------------

export type InterceptedRequest = interceptorWit.Request;
export type Outcome = interceptorWit.Outcome;
export type Header = interceptorWit.Header;

/** Let the request go, setting these headers. */
export function proceed(headers: Header[] = []): Outcome {
  return { tag: "proceed", val: headers };
}
/** Fail the request as blocked. */
export function abort(reason: string): Outcome {
  return { tag: "abort", val: reason };
}
/** Answer the request; it never leaves the browser. */
export function fulfill(status: number, body: string | Uint8Array, headers: Header[] = []): Outcome {
  const bytes = typeof body === "string" ? utf8(body) : body;
  return { tag: "fulfill", val: { status, headers, body: bytes } };
}

/** UTF-8 bytes of a string (not every runtime has TextEncoder). */
function utf8(text: string): Uint8Array {
  const out: number[] = [];
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return new Uint8Array(out);
}

/** A request's header, by name (case-insensitive). */
export function header(request: InterceptedRequest, name: string): string | undefined {
  const lower = name.toLowerCase();
  return request.headers.find((h: Header) => h.name.toLowerCase() === lower)?.value;
}

/** The `interceptor` export. */
export function interceptor(intercept: (request: InterceptedRequest) => Outcome) {
  return {
    intercept(request: InterceptedRequest): Outcome {
      return guarded(() => intercept(request));
    },
  };
}
