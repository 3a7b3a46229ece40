// Leaving the page (capability "navigation").

import * as navigation from "wabp:plugin/navigation@0.1.0";

export function navigate(url: string, referrer?: string): void {
  navigation.navigate(url, referrer);
}

export function back(): void {
  navigation.back();
}

export function forward(): void {
  navigation.forward();
}

export function reload(): void {
  navigation.reload();
}
