//! The engine itself: `/browser/*`, `/plugins`, `/openapi.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use wabp_core::InputMode;

use super::{Nothing, TabRef, json};
use crate::{Catalogue, Operation, Scope};
use wabp_core::engine::browser_info::{BrowserInfo, WindowBounds, WindowInfo, WindowState};

/// ABP's status envelope.
#[derive(Serialize, JsonSchema)]
struct Status {
    success: bool,
    data: wabp_core::engine::BrowserStatus,
}

/// Who drives the browser.
#[derive(Serialize, JsonSchema)]
struct Mode {
    input_mode: InputMode,
}

#[derive(Deserialize, JsonSchema)]
struct Shutdown {
    /// How long open work may take to finish, in ms (default 5000, at most 60000).
    #[serde(default, deserialize_with = "crate::input::whole")]
    #[schemars(with = "Option<u64>")]
    timeout_ms: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
struct SetWindowBounds {
    #[serde(flatten)]
    tab: TabRef,
    /// Screen x of the window's left edge.
    #[serde(default)]
    x: Option<i64>,
    /// Screen y of the window's top edge.
    #[serde(default)]
    y: Option<i64>,
    /// Width in pixels (100 to 10000); headless, the viewport follows.
    #[serde(default)]
    width: Option<i64>,
    /// Height in pixels (100 to 10000); headless, the viewport follows.
    #[serde(default)]
    height: Option<i64>,
}

#[derive(Deserialize, JsonSchema)]
struct SetWindowState {
    #[serde(flatten)]
    tab: TabRef,
    state: WindowState,
}

#[derive(Deserialize, JsonSchema)]
struct SetInputMode {
    /// `agent` (pages frozen between actions) or `human` (pages run, a person
    /// may use the window).
    input_mode: InputMode,
}

pub fn operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "browser_status",
            "Whether the browser is up, its components, and the frame driver.",
            |ctx, _: Nothing| async move {
                json(super::to_json(&Status {
                    success: true,
                    data: ctx.engine.status(),
                })?)
            },
        )
        .get("/browser/status")
        .answers::<Status>(),
        Operation::new(
            "browser_info",
            "What the browser is: product, version, user agent, protocol version; the frame driver, site isolation, the engine's version and platform.",
            |ctx, _: Nothing| async move { json(super::to_json(&ctx.engine.browser_info().await?)?) },
        )
        .get("/browser/info")
        .tool("browser_info")
        .answers::<BrowserInfo>(),
        Operation::new(
            "window",
            "The window of a tab (default: the caller's active tab): x, y, width, height, state.",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                json(super::to_json(&ctx.engine.window(&ctx.caller, &tab).await?)?)
            },
        )
        .get("/window")
        .answers::<WindowInfo>(),
        Operation::new(
            "set_window_bounds",
            "Move or resize a tab's window (default: the caller's active tab); headless, the page's viewport takes the new size.",
            |ctx, input: SetWindowBounds| async move {
                let tab = input.tab.resolve(&ctx)?;
                let bounds = WindowBounds {
                    x: input.x,
                    y: input.y,
                    width: input.width,
                    height: input.height,
                };
                json(super::to_json(
                    &ctx.engine.set_window_bounds(&ctx.caller, &tab, bounds).await?,
                )?)
            },
        )
        .post("/window/bounds")
        .answers::<WindowInfo>()
        .scope(Scope::Admin),
        Operation::new(
            "set_window_state",
            "Put a tab's window (default: the caller's active tab) in a state: normal, maximized, minimized or fullscreen.",
            |ctx, input: SetWindowState| async move {
                let tab = input.tab.resolve(&ctx)?;
                json(super::to_json(
                    &ctx.engine.set_window_state(&ctx.caller, &tab, input.state).await?,
                )?)
            },
        )
        .post("/window/state")
        .answers::<WindowInfo>()
        .scope(Scope::Admin),
        Operation::new(
            "browser_shutdown",
            "Close the browser and stop the engine.",
            |ctx, input: Shutdown| async move {
                let timeout = input.timeout_ms.unwrap_or(5000).min(60_000);
                ctx.engine
                    .shutdown(std::time::Duration::from_millis(timeout))
                    .await;
                ctx.shutdown.notify_waiters();
                json(json!({ "success": true }))
            },
        )
        .post("/browser/shutdown")
        .scope(Scope::Admin),
        Operation::new(
            "session_data",
            "Where this session keeps its profile, history database, screenshots and downloads.",
            |ctx, _: Nothing| async move {
                let dir = &ctx.engine.config.session_dir;
                json(json!({
                    "success": true,
                    "data": {
                        "session_dir": dir,
                        "database_path": dir.join("history.db"),
                        "screenshots_dir": dir.join("screenshots"),
                        "screenshots_enabled": ctx.history.is_some(),
                        "downloads_dir": ctx.engine.downloads_dir(),
                    }
                }))
            },
        )
        .get("/browser/session-data"),
        Operation::new(
            "input_mode",
            "Who drives the browser now: the agent or a human.",
            |ctx, _: Nothing| async move {
                json(super::to_json(&Mode {
                    input_mode: ctx.engine.input_mode(),
                })?)
            },
        )
        .get("/browser/input-mode")
        .answers::<Mode>(),
        Operation::new(
            "set_input_mode",
            "Hand the browser to a human (pages run freely) or back to the agent (pages frozen between actions).",
            |ctx, input: SetInputMode| async move {
                ctx.engine.set_input_mode(input.input_mode).await?;
                json(json!({ "input_mode": input.input_mode }))
            },
        )
        .post("/browser/input-mode")
        .scope(Scope::Admin),
        Operation::new(
            crate::approvals::LIST_OPERATION,
            "The approvals policies asked for that wait for a decision: id, operation, prompt, user.",
            |ctx, _: Nothing| async move { json(ctx.approvals.pending()) },
        )
        .get("/approvals")
        .scope(Scope::Admin),
        Operation::new(
            crate::approvals::APPROVE_OPERATION,
            "Decide an approval a policy asked for (an APPROVAL_REQUIRED answer's approval_id): approved, the same request sent again with \"approval_id\" runs once; rejected, it answers POLICY_DENIED.",
            |ctx, input: Decide| async move { json(ctx.approvals.decide(&input.id, input.approve)?) },
        )
        .post("/approvals/{id}")
        .scope(Scope::Admin),
        Operation::new(
            "plugins",
            "The loaded plugins, the actions, markup tags and wait types they provide, and any load errors.",
            |ctx, _: Nothing| async move {
                let registry = &ctx.engine.registry;
                json(json!({
                    "plugins": registry.plugins(),
                    "actions": registry.actions(),
                    "markup_tags": registry.markup_tags(),
                    "wait_types": registry.waits(),
                }))
            },
        )
        .get("/plugins"),
        Operation::new(
            "openapi",
            "This API as an OpenAPI 3.1 document (plugin actions included).",
            |ctx, _: Nothing| async move {
                json(crate::openapi::document(&Catalogue::new(ctx.engine.clone())))
            },
        )
        .get("/openapi.json"),
    ]
}

#[derive(Deserialize, JsonSchema)]
struct Decide {
    /// The approval's id, from an `APPROVAL_REQUIRED` answer.
    id: String,
    /// `true` lets the request run once; `false` refuses it.
    approve: bool,
}
