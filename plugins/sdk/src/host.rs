//! The browser capabilities an action plugin may call. Each module is one
//! `wabp:plugin` interface; `plugin.toml` must grant every module used (and
//! only calls actually made become imports of the component).
//!
//! Errors are [`HostError`]s, which convert into [`PluginError`](crate::PluginError)
//! with `?`.

use crate::bindings::action::wabp::plugin as wit;

pub use wit::types::{ElementBox, HostError, Located, Modifiers, MouseButton, Rect, Target, ViewportInfo};

/// Synthetic, trusted input events (capability `input`).
pub mod input {
    use super::{HostError, Modifiers, MouseButton, wit::input as wit};

    /// Moves the pointer to (x, y) in CSS pixels of the viewport.
    pub fn mouse_move(x: f64, y: f64) -> Result<(), HostError> {
        wit::mouse_move(x, y)
    }

    /// Presses a mouse button; `click_count` is 1 for a single click, 2 for
    /// the second press of a double click, ...
    pub fn mouse_down(x: f64, y: f64, button: MouseButton, click_count: u32, modifiers: Modifiers) -> Result<(), HostError> {
        wit::mouse_down(x, y, button, click_count, modifiers)
    }

    /// Releases a mouse button.
    pub fn mouse_up(x: f64, y: f64, button: MouseButton, click_count: u32, modifiers: Modifiers) -> Result<(), HostError> {
        wit::mouse_up(x, y, button, click_count, modifiers)
    }

    /// A wheel event at (x, y); positive `delta_y` scrolls down.
    pub fn mouse_wheel(x: f64, y: f64, delta_x: f64, delta_y: f64, modifiers: Modifiers) -> Result<(), HostError> {
        wit::mouse_wheel(x, y, delta_x, delta_y, modifiers)
    }

    /// Presses a key; `key` is a DOM key value ("Enter", "a", "ArrowUp", ...).
    pub fn key_down(key: &str, modifiers: Modifiers) -> Result<(), HostError> {
        wit::key_down(key, modifiers)
    }

    /// Releases a key.
    pub fn key_up(key: &str, modifiers: Modifiers) -> Result<(), HostError> {
        wit::key_up(key, modifiers)
    }

    /// Presses and releases a key.
    pub fn key_press(key: &str, modifiers: Modifiers) -> Result<(), HostError> {
        wit::key_press(key, modifiers)
    }

    /// Inserts text at the caret as an IME commit would (no key events).
    pub fn insert_text(text: &str) -> Result<(), HostError> {
        wit::insert_text(text)
    }

    /// Lets `ms` of the page's time pass between input events, as a user's
    /// pause would: on the engine's page clock a jump (the timers that come
    /// due run, no real waiting), elsewhere a real wait.
    pub fn pause(ms: u32) -> Result<(), HostError> {
        wit::pause(ms)
    }
}

/// Reading the page's layout without running page script (capability `page`).
pub mod page {
    use super::{ElementBox, HostError, Located, Target, ViewportInfo, wit::page as wit};

    /// Every element matching a CSS selector, in document order (at most 1000).
    pub fn query_selector_all(selector: &str) -> Result<Vec<ElementBox>, HostError> {
        wit::query_selector_all(selector)
    }

    /// The topmost element at a viewport point, if any.
    pub fn element_at(x: f64, y: f64) -> Result<Option<ElementBox>, HostError> {
        wit::element_at(x, y)
    }

    /// The viewport's size, scroll position and the page's size.
    pub fn viewport() -> Result<ViewportInfo, HostError> {
        wit::viewport()
    }

    /// Scrolls the first match of `selector` into view (centred) and returns
    /// its new box.
    pub fn scroll_into_view(selector: &str) -> Result<ElementBox, HostError> {
        wit::scroll_into_view(selector)
    }

    /// Resolves a ref (`e7`, `f1e7`) or selector to the point to act on,
    /// scrolling it into view first; fails loudly on a stale ref, a
    /// selector matching nothing, or a hidden or covered element.
    pub fn locate(target: &Target) -> Result<Located, HostError> {
        wit::locate(target)
    }

    /// Focuses the target; `select_all` selects its content so inserted
    /// text replaces it, otherwise the caret goes to the end.
    pub fn focus(target: &Target, select_all: bool) -> Result<ElementBox, HostError> {
        wit::focus(target, select_all)
    }

    /// Fires a bubbling `change` event on the target.
    pub fn dispatch_change(target: &Target) -> Result<(), HostError> {
        wit::dispatch_change(target)
    }

    /// Sets the value of an input that takes no typing (date, time,
    /// datetime-local, month, week, color, range) in its value format, with
    /// `input` and `change` events; `Ok(false)` for an element that takes
    /// text. A value the input refuses is `Invalid`, naming the format.
    pub fn set_value(target: &Target, value: &str) -> Result<bool, HostError> {
        wit::set_value(target, value)
    }

    /// The target's value (input, textarea, select) or editable text; `None`
    /// for other elements.
    pub fn value_of(target: &Target) -> Result<Option<String>, HostError> {
        wit::value_of(target)
    }
}

/// Running JavaScript in the page (capability `script`).
pub mod script {
    use super::{HostError, wit::script as wit};
    use serde_json::Value;

    /// Evaluates an expression in the page's main world, awaiting promises;
    /// `undefined` comes back as `null`.
    pub fn evaluate(expression: &str) -> Result<Value, HostError> {
        let json = wit::evaluate(expression)?;
        serde_json::from_str(&json).map_err(|e| HostError::Failed(format!("evaluate returned invalid JSON: {e}")))
    }
}

/// Moving the tab through its history (capability `navigation`).
pub mod navigation {
    use super::{HostError, wit::navigation as wit};

    /// Navigates to `url`, optionally with a referrer.
    pub fn navigate(url: &str, referrer: Option<&str>) -> Result<(), HostError> {
        wit::navigate(url, referrer)
    }

    /// Goes back one history entry.
    pub fn back() -> Result<(), HostError> {
        wit::back()
    }

    /// Goes forward one history entry.
    pub fn forward() -> Result<(), HostError> {
        wit::forward()
    }

    /// Reloads the page.
    pub fn reload() -> Result<(), HostError> {
        wit::reload()
    }
}

/// Time as the host sees it (capability `clock`).
pub mod clock {
    use super::wit::clock as wit;

    /// Milliseconds since the Unix epoch.
    pub fn now_ms() -> u64 {
        wit::now_ms()
    }

    /// Suspends the plugin; the call's deadline keeps running.
    pub fn sleep_ms(ms: u32) {
        wit::sleep_ms(ms)
    }
}
