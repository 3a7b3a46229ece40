//! A site pack for the demo shop in `site/` (serve it with any static file
//! server, e.g. `python3 -m http.server 8000 --directory examples/shop-pack/site`).
//! It turns what an agent would otherwise work out from screenshots into
//! three actions that know the site:
//!
//! - `shop_log_in {"username", "password", "base_url"?}`
//! - `shop_add_to_cart {"product", "quantity"?}` (name or SKU)
//! - `shop_cart {}`: the cart's items and total, read from the cart page
//!
//! They act through trusted input (clicks and typing), so the shop's own
//! handlers run as they would for a person, and they fail with a clear error
//! when the site says no (wrong password, unknown product, not logged in).

use wabp_plugin_sdk::host::{self, Modifiers, MouseButton, Target};
use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, ErrorCode, Params, PluginError, Value, json};

struct ShopPack;

/// How long to wait for a page of the shop to be ready or a log-in to land.
const PAGE_WAIT_MS: u64 = 8000;
const POLL_MS: u32 = 50;

impl ActionPlugin for ShopPack {
    fn actions() -> Vec<ActionSpec> {
        vec![
            ActionSpec::new(
                "shop_log_in",
                "Logs in to the demo shop; opens its log-in page first when needed",
                json!({
                    "type": "object",
                    "required": ["username", "password"],
                    "properties": {
                        "username": { "type": "string" },
                        "password": { "type": "string" },
                        "base_url": { "type": "string", "description": "the shop's address, when the tab is not on the shop yet" }
                    }
                }),
            ),
            ActionSpec::new(
                "shop_add_to_cart",
                "Adds a product (by name or SKU) to the cart `quantity` times; needs a logged-in user",
                json!({
                    "type": "object",
                    "required": ["product"],
                    "properties": {
                        "product": { "type": "string" },
                        "quantity": { "type": "integer", "minimum": 1, "maximum": 20, "default": 1 }
                    }
                }),
            ),
            ActionSpec::new("shop_cart", "Opens the cart page and returns its items and total", json!({ "type": "object", "properties": {} })),
        ]
    }

    fn run(name: &str, params: Value, _ctx: &Context) -> Result<Value, PluginError> {
        let params = Params::new(params)?;
        match name {
            "shop_log_in" => log_in(params.required_str("username")?, params.required_str("password")?, params.optional_str("base_url")?),
            "shop_add_to_cart" => add_to_cart(params.required_str("product")?, params.optional_u32("quantity", 1)?),
            "shop_cart" => read_cart(),
            other => Err(PluginError::not_found(format!("no action {other:?}"))),
        }
    }
}

fn log_in(username: &str, password: &str, base_url: Option<&str>) -> Result<Value, PluginError> {
    open_page("/login.html", "login", base_url)?;
    type_into("#username", username)?;
    type_into("#password", password)?;
    click("#log-in")?;
    // The shop answers either with an error on the page or by storing the
    // user and going to the product list.
    let outcome = poll(|| {
        let state = try_eval("({ user: localStorage.getItem('shop_user'), error: (document.querySelector('#error') || {}).textContent || '' })")?;
        if state["user"] == username {
            return Some(Ok(json!({ "status": "logged_in", "user": username })));
        }
        let error = state["error"].as_str().unwrap_or_default();
        (!error.is_empty()).then(|| Err(PluginError::invalid(format!("the shop refused the log-in: {error}"))))
    });
    outcome.unwrap_or_else(|| Err(PluginError::new(ErrorCode::Timeout, "the shop neither logged in nor showed an error")))
}

fn add_to_cart(product: &str, quantity: u32) -> Result<Value, PluginError> {
    if !(1..=20).contains(&quantity) {
        return Err(PluginError::invalid("\"quantity\" must be from 1 to 20"));
    }
    if !matches!(eval("location.pathname")?.as_str(), Some("/" | "/index.html")) {
        open_page("/", "products", None)?;
    } else {
        wait_ready("products")?;
    }
    if eval("localStorage.getItem('shop_user')")?.is_null() {
        return Err(PluginError::invalid("not logged in: call shop_log_in first"));
    }
    let found = eval(&format!(
        "(() => {{ const want = {p}; const cards = [...document.querySelectorAll('.product')];
           const card = cards.find(c => c.dataset.sku === want || c.querySelector('h2').textContent.trim().toLowerCase() === want.toLowerCase());
           return card ? {{ sku: card.dataset.sku, name: card.querySelector('h2').textContent.trim() }}
                       : {{ missing: cards.map(c => c.querySelector('h2').textContent.trim()) }}; }})()",
        p = js(product)
    ))?;
    if let Some(names) = found["missing"].as_array() {
        let names: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
        return Err(PluginError::not_found(format!("the shop has no product {product:?}; it sells {}", names.join(", "))));
    }
    let sku = found["sku"].as_str().unwrap_or_default();
    if sku.is_empty() || !sku.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(PluginError::failed(format!("unexpected SKU {sku:?} on the page")));
    }
    let button = format!(".product[data-sku=\"{sku}\"] button.add");
    for _ in 0..quantity {
        click(&button)?;
    }
    let count = eval("Number(document.querySelector('#cart-count').textContent)")?;
    Ok(json!({ "product": found["name"], "sku": sku, "added": quantity, "cart_count": count }))
}

fn read_cart() -> Result<Value, PluginError> {
    open_page("/cart.html", "cart", None)?;
    eval(
        "(() => ({ items: [...document.querySelectorAll('#cart-table tbody tr')].map(r => ({
             sku: r.dataset.sku, name: r.querySelector('.name').textContent,
             quantity: Number(r.querySelector('.quantity').textContent),
             price: r.querySelector('.price').textContent })),
           total: document.querySelector('#total').textContent }))()",
    )
}

/// Goes to `path` of the shop unless already there, then waits until the
/// page's script has set it up (`body[data-ready]`).
fn open_page(path: &str, ready: &str, base_url: Option<&str>) -> Result<(), PluginError> {
    let here = eval("({ origin: location.origin, path: location.pathname })")?;
    let origin = match base_url {
        Some(url) => url.trim_end_matches('/').to_string(),
        None => match here["origin"].as_str() {
            Some(o) if o.starts_with("http") => o.to_string(),
            _ => return Err(PluginError::invalid("the tab is not on the shop: navigate to it first or pass \"base_url\"")),
        },
    };
    let on_page = base_url.is_none_or(|_| here["origin"].as_str() == Some(origin.as_str())) && here["path"] == path;
    if !on_page {
        host::navigation::navigate(&format!("{origin}{path}"), None)?;
    }
    wait_ready(ready)
}

fn wait_ready(ready: &str) -> Result<(), PluginError> {
    let check = format!("document.body && document.body.dataset.ready === {}", js(ready));
    poll(|| (try_eval(&check)? == true).then_some(()))
        .ok_or_else(|| PluginError::new(ErrorCode::Timeout, format!("the shop's {ready} page did not load within {PAGE_WAIT_MS} ms (is this the demo shop?)")))
}

/// Calls `check` every POLL_MS until it answers, for at most PAGE_WAIT_MS.
fn poll<T>(mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = host::clock::now_ms() + PAGE_WAIT_MS;
    loop {
        if let Some(v) = check() {
            return Some(v);
        }
        if host::clock::now_ms() >= deadline {
            return None;
        }
        host::clock::sleep_ms(POLL_MS);
    }
}

/// Clicks into the field, selects what is there and types over it.
fn type_into(selector: &str, text: &str) -> Result<(), PluginError> {
    click(selector)?;
    host::page::focus(&target(selector), true)?;
    host::input::insert_text(text)?;
    Ok(())
}

/// A trusted left click at the point `locate` gives: scrolled into view,
/// visible and not covered.
fn click(selector: &str) -> Result<(), PluginError> {
    let at = host::page::locate(&target(selector))?;
    host::input::mouse_move(at.x, at.y)?;
    host::input::mouse_down(at.x, at.y, MouseButton::Left, 1, Modifiers::empty())?;
    host::input::mouse_up(at.x, at.y, MouseButton::Left, 1, Modifiers::empty())?;
    Ok(())
}

fn target(selector: &str) -> Target {
    Target::Selector(selector.to_string())
}

fn eval(expression: &str) -> Result<Value, PluginError> {
    Ok(host::script::evaluate(expression)?)
}

/// `None` while the page is between documents (the evaluation fails).
fn try_eval(expression: &str) -> Option<Value> {
    host::script::evaluate(expression).ok()
}

fn js(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

wabp_plugin_sdk::export_action_plugin!(ShopPack);
