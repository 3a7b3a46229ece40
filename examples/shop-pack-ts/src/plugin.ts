// The shop-pack site pack (examples/shop-pack) in TypeScript, with the same
// actions and errors, for the demo shop in examples/shop-pack/site:
//
// - shop_log_in {"username", "password", "base_url"?}
// - shop_add_to_cart {"product", "quantity"?} (name or SKU)
// - shop_cart {}: the cart's items and total, read from the cart page
//
// They act through trusted input (clicks and typing), so the shop's own
// handlers run as they would for a person, and they fail with a clear error
// when the site says no (wrong password, unknown product, not logged in).

import { actions, PluginError } from "@wabp/plugin";
import { nowMs, sleepMs } from "@wabp/plugin/clock";
import { click as clickAt, insertText } from "@wabp/plugin/input";
import { navigate } from "@wabp/plugin/navigation";
import { focus, locate, selector } from "@wabp/plugin/page";
import { evaluate } from "@wabp/plugin/script";

/** How long to wait for a page of the shop to be ready or a log-in to land. */
const PAGE_WAIT_MS = 8000;
const POLL_MS = 50;

interface LogInParams {
  username: string;
  password: string;
  base_url?: string;
}

interface AddParams {
  product: string;
  quantity?: number;
}

export const action = actions({
  shop_log_in: {
    description: "Logs in to the demo shop; opens its log-in page first when needed",
    params: {
      type: "object",
      required: ["username", "password"],
      properties: {
        username: { type: "string" },
        password: { type: "string" },
        base_url: { type: "string", description: "the shop's address, when the tab is not on the shop yet" },
      },
    },
    run: (params: LogInParams) => logIn(required(params, "username"), required(params, "password"), params.base_url),
  },
  shop_add_to_cart: {
    description: "Adds a product (by name or SKU) to the cart `quantity` times; needs a logged-in user",
    params: {
      type: "object",
      required: ["product"],
      properties: {
        product: { type: "string" },
        quantity: { type: "integer", minimum: 1, maximum: 20, default: 1 },
      },
    },
    run: (params: AddParams) => addToCart(required(params, "product"), params.quantity ?? 1),
  },
  shop_cart: {
    description: "Opens the cart page and returns its items and total",
    params: { type: "object", properties: {} },
    run: () => readCart(),
  },
});

function required<P, K extends keyof P>(params: P, name: K): string {
  const value = params[name];
  if (typeof value !== "string") {
    throw PluginError.invalid(`"${String(name)}" is required and must be a string`);
  }
  return value;
}

function logIn(username: string, password: string, baseUrl?: string) {
  openPage("/login.html", "login", baseUrl);
  typeInto("#username", username);
  typeInto("#password", password);
  click("#log-in");
  // The shop answers either with an error on the page or by storing the
  // user and going to the product list.
  const outcome = poll(() => {
    const state = tryEval<{ user: string | null; error: string }>(
      "({ user: localStorage.getItem('shop_user'), error: (document.querySelector('#error') || {}).textContent || '' })",
    );
    if (!state) return undefined;
    if (state.user === username) return { status: "logged_in", user: username };
    if (state.error) throw PluginError.invalid(`the shop refused the log-in: ${state.error}`);
    return undefined;
  });
  if (!outcome) throw new PluginError("timeout", "the shop neither logged in nor showed an error");
  return outcome;
}

function addToCart(product: string, quantity: number) {
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > 20) {
    throw PluginError.invalid('"quantity" must be from 1 to 20');
  }
  const path = evaluate<string>("location.pathname");
  if (path !== "/" && path !== "/index.html") {
    openPage("/", "products");
  } else {
    waitReady("products");
  }
  if (evaluate<string | null>("localStorage.getItem('shop_user')") === null) {
    throw PluginError.invalid("not logged in: call shop_log_in first");
  }
  const found = evaluate<{ sku?: string; name?: string; missing?: string[] }>(`(() => { const want = ${js(product)};
      const cards = [...document.querySelectorAll('.product')];
      const card = cards.find(c => c.dataset.sku === want || c.querySelector('h2').textContent.trim().toLowerCase() === want.toLowerCase());
      return card ? { sku: card.dataset.sku, name: card.querySelector('h2').textContent.trim() }
                  : { missing: cards.map(c => c.querySelector('h2').textContent.trim()) }; })()`);
  if (found.missing) {
    throw PluginError.notFound(`the shop has no product ${js(product)}; it sells ${found.missing.join(", ")}`);
  }
  const sku = found.sku ?? "";
  if (!/^[A-Za-z0-9-]+$/.test(sku)) {
    throw PluginError.failed(`unexpected SKU ${js(sku)} on the page`);
  }
  const button = `.product[data-sku="${sku}"] button.add`;
  for (let i = 0; i < quantity; i++) click(button);
  const count = evaluate<number>("Number(document.querySelector('#cart-count').textContent)");
  return { product: found.name, sku, added: quantity, cart_count: count };
}

function readCart() {
  openPage("/cart.html", "cart");
  return evaluate(`(() => ({ items: [...document.querySelectorAll('#cart-table tbody tr')].map(r => ({
      sku: r.dataset.sku, name: r.querySelector('.name').textContent,
      quantity: Number(r.querySelector('.quantity').textContent),
      price: r.querySelector('.price').textContent })),
    total: document.querySelector('#total').textContent }))()`);
}

/** Goes to `path` of the shop unless already there, then waits until the
 * page's script has set it up (`body[data-ready]`). */
function openPage(path: string, ready: string, baseUrl?: string) {
  const here = evaluate<{ origin: string; path: string }>("({ origin: location.origin, path: location.pathname })");
  let origin: string;
  if (baseUrl !== undefined) {
    origin = baseUrl.replace(/\/+$/, "");
  } else if (here.origin.startsWith("http")) {
    origin = here.origin;
  } else {
    throw PluginError.invalid('the tab is not on the shop: navigate to it first or pass "base_url"');
  }
  const onPage = (baseUrl === undefined || here.origin === origin) && here.path === path;
  if (!onPage) navigate(`${origin}${path}`);
  waitReady(ready);
}

function waitReady(ready: string) {
  const check = `document.body && document.body.dataset.ready === ${js(ready)}`;
  if (!poll(() => (tryEval<boolean>(check) === true ? true : undefined))) {
    throw new PluginError(
      "timeout",
      `the shop's ${ready} page did not load within ${PAGE_WAIT_MS} ms (is this the demo shop?)`,
    );
  }
}

/** Calls `check` every POLL_MS until it answers, for at most PAGE_WAIT_MS. */
function poll<T>(check: () => T | undefined): T | undefined {
  const deadline = nowMs() + PAGE_WAIT_MS;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (nowMs() >= deadline) return undefined;
    sleepMs(POLL_MS);
  }
}

/** Clicks into the field, selects what is there and types over it. */
function typeInto(css: string, text: string) {
  click(css);
  focus(selector(css), true);
  insertText(text);
}

/** A trusted left click at the point `locate` gives: scrolled into view,
 * visible and not covered. */
function click(css: string) {
  const at = locate(selector(css));
  clickAt(at.x, at.y);
}

/** `undefined` while the page is between documents (the evaluation fails). */
function tryEval<T>(expression: string): T | undefined {
  try {
    return evaluate<T>(expression);
  } catch {
    return undefined;
  }
}

function js(text: string): string {
  return JSON.stringify(text);
}
