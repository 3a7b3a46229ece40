// Input as a mouse and keyboard make it (capability "input"). Each call
// throws the host's error; the action helpers turn it into a plugin error.

import * as input from "wabp:plugin/input@0.1.0";
import type { Modifiers, MouseButton } from "wabp:plugin/types@0.1.0";

export type { Modifiers, MouseButton };

const NONE: Modifiers = { alt: false, control: false, meta: false, shift: false };

export interface ClickOptions {
  button?: MouseButton;
  clickCount?: number;
  modifiers?: Modifiers;
}

export function move(x: number, y: number): void {
  input.mouseMove(x, y);
}

/** Move, press and release at (x, y), as a user's click. */
export function click(x: number, y: number, options: ClickOptions = {}): void {
  const button = options.button ?? "left";
  const modifiers = { ...NONE, ...options.modifiers };
  const count = options.clickCount ?? 1;
  input.mouseMove(x, y);
  input.mouseDown(x, y, button, count, modifiers);
  input.mouseUp(x, y, button, count, modifiers);
}

export function mouseDown(x: number, y: number, options: ClickOptions = {}): void {
  input.mouseDown(x, y, options.button ?? "left", options.clickCount ?? 1, { ...NONE, ...options.modifiers });
}

export function mouseUp(x: number, y: number, options: ClickOptions = {}): void {
  input.mouseUp(x, y, options.button ?? "left", options.clickCount ?? 1, { ...NONE, ...options.modifiers });
}

/** A wheel event at (x, y); positive `deltaY` scrolls down. */
export function wheel(x: number, y: number, deltaX: number, deltaY: number, modifiers: Modifiers = NONE): void {
  input.mouseWheel(x, y, deltaX, deltaY, { ...NONE, ...modifiers });
}

/** Presses a key by its DOM key value ("Enter", "a", "ArrowUp"). */
export function press(key: string, modifiers: Modifiers = NONE): void {
  input.keyPress(key, { ...NONE, ...modifiers });
}

export function keyDown(key: string, modifiers: Modifiers = NONE): void {
  input.keyDown(key, { ...NONE, ...modifiers });
}

export function keyUp(key: string, modifiers: Modifiers = NONE): void {
  input.keyUp(key, { ...NONE, ...modifiers });
}

/** Types text key by key, as a keyboard does. */
export function type(text: string): void {
  for (const ch of text) {
    input.keyPress(ch, NONE);
  }
}

/** Inserts text at the caret as an IME commit would (no key events). */
export function insertText(text: string): void {
  input.insertText(text);
}

/** Lets `ms` of the page's time pass, as a user's pause would. */
export function pause(ms: number): void {
  input.pause(Math.max(0, Math.round(ms)));
}
