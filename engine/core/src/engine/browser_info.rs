//! What the browser is (`GET /browser/info`) and the window a tab lives in
//! (`/window`): both asked of the browser's own session.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Engine;
use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::navigator::Navigator;

const LIMIT: Duration = Duration::from_secs(5);

/// The browser and the engine driving it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BrowserInfo {
    /// e.g. `HeadlessChrome/156.0.7445.0`
    pub product: String,
    /// The version part of `product`.
    pub version: String,
    pub revision: String,
    pub user_agent: String,
    /// The DevTools protocol's version.
    pub protocol_version: String,
    pub js_version: String,
    pub executable: Option<String>,
    pub frame_driver: String,
    pub site_isolation: bool,
    /// This engine's version.
    pub engine_version: String,
    /// `linux-x86_64` and the like.
    pub platform: String,
}

/// A window's place, size and state, in screen pixels.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WindowInfo {
    pub window_id: i64,
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
    /// `normal`, `minimized`, `maximized` or `fullscreen`.
    pub state: String,
}

/// The states a window can be put in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WindowState {
    Normal,
    Minimized,
    Maximized,
    Fullscreen,
}

/// New bounds; what is left out stays.
#[derive(Debug, Clone, Copy, Default)]
pub struct WindowBounds {
    pub x: Option<i64>,
    pub y: Option<i64>,
    pub width: Option<i64>,
    pub height: Option<i64>,
}

impl Engine {
    pub(crate) async fn browser_navigator(&self) -> Result<Arc<Navigator>> {
        self.browser.navigator().await
    }

    /// The connection to the browser the caller's tabs and cookies live in.
    pub(crate) async fn navigator_for(&self, caller: &Caller) -> Result<Arc<Navigator>> {
        self.host_of(caller.user_id()).navigator().await
    }

    pub async fn browser_info(&self) -> Result<BrowserInfo> {
        self.ensure_ready()?;
        let version = self
            .browser_navigator()
            .await?
            .send(None, "Browser.getVersion", json!({}), LIMIT)
            .await?;
        let field = |name: &str| {
            version
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let product = field("product");
        Ok(BrowserInfo {
            version: product
                .split_once('/')
                .map(|(_, v)| v.to_string())
                .unwrap_or_default(),
            product,
            revision: field("revision"),
            user_agent: field("userAgent"),
            protocol_version: field("protocolVersion"),
            js_version: field("jsVersion"),
            executable: self.executable_path(),
            frame_driver: self.frame_driver().to_string(),
            site_isolation: self.launch_options().site_isolation,
            engine_version: env!("CARGO_PKG_VERSION").to_string(),
            platform: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        })
    }

    /// The window of the caller's tab `tab_id`.
    pub async fn window(&self, caller: &Caller, tab_id: &str) -> Result<WindowInfo> {
        let tab = self.tab(caller, tab_id)?;
        let navigator = self.navigator_for(caller).await?;
        let found = navigator
            .send(
                None,
                "Browser.getWindowForTarget",
                json!({ "targetId": tab.target_id.inner() }),
                LIMIT,
            )
            .await?;
        let window_id = found
            .get("windowId")
            .and_then(Value::as_i64)
            .ok_or_else(|| Error::internal("the browser named no window for the tab"))?;
        let bounds = found.get("bounds").cloned().unwrap_or(Value::Null);
        let number = |name: &str| bounds.get(name).and_then(Value::as_i64).unwrap_or(0);
        Ok(WindowInfo {
            window_id,
            x: number("left"),
            y: number("top"),
            width: number("width"),
            height: number("height"),
            state: bounds
                .get("windowState")
                .and_then(Value::as_str)
                .unwrap_or("normal")
                .to_string(),
        })
    }

    /// Moves or resizes the tab's window (back to `normal` first: a
    /// maximized window takes no bounds). A headless window has no frame,
    /// so its tab's viewport takes the new size.
    pub async fn set_window_bounds(
        &self,
        caller: &Caller,
        tab_id: &str,
        bounds: WindowBounds,
    ) -> Result<WindowInfo> {
        self.ensure_agent_mode()?;
        for (name, value, min) in [
            ("x", bounds.x, -100_000),
            ("y", bounds.y, -100_000),
            ("width", bounds.width, 100),
            ("height", bounds.height, 100),
        ] {
            if let Some(v) = value
                && !(min..=10_000).contains(&v)
            {
                return Err(Error::invalid(format!(
                    "\"{name}\" must be from {min} to 10000, got {v}"
                )));
            }
        }
        if bounds.x.is_none()
            && bounds.y.is_none()
            && bounds.width.is_none()
            && bounds.height.is_none()
        {
            return Err(Error::invalid(
                "give at least one of \"x\", \"y\", \"width\", \"height\"",
            ));
        }
        let window = self.window(caller, tab_id).await?;
        let navigator = self.navigator_for(caller).await?;
        if window.state != "normal" {
            navigator
                .send(
                    None,
                    "Browser.setWindowBounds",
                    json!({ "windowId": window.window_id, "bounds": { "windowState": "normal" } }),
                    LIMIT,
                )
                .await?;
        }
        let mut wanted = serde_json::Map::new();
        for (name, value) in [
            ("left", bounds.x),
            ("top", bounds.y),
            ("width", bounds.width),
            ("height", bounds.height),
        ] {
            if let Some(v) = value {
                wanted.insert(name.into(), json!(v));
            }
        }
        navigator
            .send(
                None,
                "Browser.setWindowBounds",
                json!({ "windowId": window.window_id, "bounds": wanted }),
                LIMIT,
            )
            .await?;
        let after = self.window(caller, tab_id).await?;
        if !self.launch_options().headed {
            self.follow_window_size(caller, tab_id, &after).await?;
        }
        Ok(after)
    }

    /// Puts the tab's window in `state`.
    pub async fn set_window_state(
        &self,
        caller: &Caller,
        tab_id: &str,
        state: WindowState,
    ) -> Result<WindowInfo> {
        self.ensure_agent_mode()?;
        let window = self.window(caller, tab_id).await?;
        let name = serde_json::to_value(state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "normal".into());
        self.navigator_for(caller)
            .await?
            .send(
                None,
                "Browser.setWindowBounds",
                json!({ "windowId": window.window_id, "bounds": { "windowState": name } }),
                LIMIT,
            )
            .await?;
        let after = self.window(caller, tab_id).await?;
        if !self.launch_options().headed && state != WindowState::Minimized {
            self.follow_window_size(caller, tab_id, &after).await?;
        }
        Ok(after)
    }

    /// The tab's viewport to its (headless, frameless) window's size.
    async fn follow_window_size(
        &self,
        caller: &Caller,
        tab_id: &str,
        window: &WindowInfo,
    ) -> Result<()> {
        let tab = self.tab(caller, tab_id)?;
        tab.session
            .raw(
                "Emulation.setDeviceMetricsOverride",
                json!({
                    "width": window.width,
                    "height": window.height,
                    "deviceScaleFactor": 1,
                    "mobile": false,
                }),
            )
            .await?;
        // Frames drawn before are of the old size.
        tab.frames.page_replaced();
        Ok(())
    }
}
