// Reading and targeting the page (capability "page").

import * as page from "wabp:plugin/page@0.1.0";
import type { ElementBox, Located, Target, ViewportInfo } from "wabp:plugin/types@0.1.0";

export type { ElementBox, Located, Target, ViewportInfo };

/** Every element matching a CSS selector, in document order (at most 1000). */
export function querySelectorAll(selector: string): ElementBox[] {
  return page.querySelectorAll(selector);
}

/** The first element matching a selector, if any. */
export function querySelector(selector: string): ElementBox | undefined {
  return page.querySelectorAll(selector)[0];
}

/** The topmost element at a viewport point, if any. */
export function elementAt(x: number, y: number): ElementBox | undefined {
  return page.elementAt(x, y) ?? undefined;
}

export function viewport(): ViewportInfo {
  return page.viewport();
}

export function scrollIntoView(selector: string): ElementBox {
  return page.scrollIntoView(selector);
}

/** A target by CSS selector. */
export function selector(css: string): Target {
  return { tag: "selector", val: css };
}

/** A target by snapshot ref (`e12`). */
export function ref(id: string): Target {
  return { tag: "element-ref", val: id };
}

/**
 * The point to act on for a target (its visible centre), scrolled into view
 * first; throws stale-ref, selector-not-found, element-not-visible or
 * element-not-interactable rather than pointing elsewhere.
 */
export function locate(target: Target): Located {
  return page.locate(target);
}

export function focus(target: Target, selectAll = false): ElementBox {
  return page.focus(target, selectAll);
}

export function dispatchChange(target: Target): void {
  page.dispatchChange(target);
}

/** Sets a value an input takes without typing (date, color, range, ...). */
export function setValue(target: Target, value: string): boolean {
  return page.setValue(target, value);
}

export function valueOf(target: Target): string | undefined {
  return page.valueOf(target) ?? undefined;
}
