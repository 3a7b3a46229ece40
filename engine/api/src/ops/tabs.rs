//! Tabs and navigation: `/tabs`, `/tabs/{tab_id}` and its history steps.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use wabp_core::engine::TabSummary;
use wabp_core::engine::answers;

use super::{Nothing, Options, ResolveOptions, TabRef, json};
use crate::{Category, Operation, Output, Scope};

#[derive(Deserialize, JsonSchema)]
struct CreateTab {
    /// URL to open (default `about:blank`): http, https, data: or about:blank.
    #[serde(default)]
    url: Option<String>,
    /// Make it the active tab (default true).
    #[serde(default)]
    active: Option<bool>,
    /// Its place in the tab list (default: last).
    #[serde(default, deserialize_with = "crate::input::whole")]
    #[schemars(with = "Option<u64>")]
    index: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
struct Navigate {
    #[serde(flatten)]
    tab: TabRef,
    /// Absolute URL (http, https, data: or about:blank), e.g. https://example.com
    url: String,
    /// Referrer URL
    #[serde(default)]
    referrer: Option<String>,
    /// Accept a `beforeunload` prompt the page raises on leaving (default:
    /// the navigation waits for it, and the envelope says so)
    #[serde(default)]
    accept_beforeunload: bool,
    #[serde(flatten)]
    options: Options,
}

#[derive(Deserialize, JsonSchema)]
struct Pin {
    #[serde(flatten)]
    tab: TabRef,
    /// `true` (default) pins it, `false` unpins it.
    #[serde(default)]
    pinned: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
struct Mute {
    #[serde(flatten)]
    tab: TabRef,
    /// `true` (default) mutes its media elements, `false` gives their sound back.
    #[serde(default)]
    muted: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
struct Reorder {
    #[serde(flatten)]
    tab: TabRef,
    /// Its new place in the caller's tab list, from 0 (kept among the
    /// pinned tabs if it is pinned, after them if not).
    #[serde(default, deserialize_with = "crate::input::whole")]
    #[schemars(with = "u64")]
    index: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
struct TabAction {
    #[serde(flatten)]
    tab: TabRef,
    #[serde(flatten)]
    options: Options,
}

pub fn operations() -> Vec<Operation> {
    let mut all = Vec::new();
    all.extend(tab_list_operations());
    all.extend(tab_place_operations());
    all
}

/// The tab list: open, read, close, activate.
fn tab_list_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "list_tabs",
            "List the caller's open tabs (id, url, title, active).",
            |ctx, _: Nothing| async move {
                json(super::to_json(&ctx.engine.list_tabs(&ctx.caller).await?)?)
            },
        )
        .get("/tabs")
        .tool("browser_list_tabs")
        .answers::<Vec<TabSummary>>(),
        Operation::new(
            "create_tab",
            "Open a new tab, optionally on a URL; returns its id.",
            |ctx, input: CreateTab| async move {
                let created = ctx
                    .engine
                    .create_tab(
                        &ctx.caller,
                        input.url.as_deref(),
                        input.active.unwrap_or(true),
                        input.index.map(|i| i as usize),
                    )
                    .await?;
                json(super::to_json(&created)?)
            },
        )
        .post("/tabs")
        .created()
        .answers::<answers::CreatedTab>()
        .tool("browser_new_tab")
        .scope(Scope::Act)
        .category(Category::Navigation),
        Operation::new(
            "tab_info",
            "One tab: id, url, title, whether it is loading.",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                json(super::to_json(
                    &ctx.engine.tab_info(&ctx.caller, &tab).await?,
                )?)
            },
        )
        .get("/tabs/{tab_id}")
        .answers::<answers::TabInfo>(),
        Operation::new(
            "close_tab",
            "Close a tab.",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                ctx.engine.close_tab(&ctx.caller, &tab).await?;
                json(json!({}))
            },
        )
        .delete("/tabs/{tab_id}")
        .answers_schema(json!({
            "type": "object",
            "description": "Empty: the tab is closed",
            "additionalProperties": false,
        }))
        .tool("browser_close_tab")
        .scope(Scope::Act),
        Operation::new(
            "activate_tab",
            "Make a tab the caller's active one (and bring it to the front).",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                json(super::to_json(
                    &ctx.engine.activate_tab(&ctx.caller, &tab).await?,
                )?)
            },
        )
        .post("/tabs/{tab_id}/activate")
        .answers::<answers::Activated>()
        .tool("browser_activate_tab")
        .scope(Scope::Act),
    ]
}

/// Where tabs sit and what they show: pin, mute, duplicate, reorder, stop, navigate.
fn tab_place_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "pin_tab",
            "Pin or unpin a tab: pinned tabs lead the caller's tab list.",
            |ctx, input: Pin| async move {
                let tab = input.tab.resolve(&ctx)?;
                let pinned = input.pinned.unwrap_or(true);
                json(super::to_json(&ctx.engine.pin_tab(&ctx.caller, &tab, pinned).await?)?)
            },
        )
        .post("/tabs/{tab_id}/pin")
        .answers::<answers::TabPlace>()
        .tool("browser_pin_tab")
        .scope(Scope::Act),
        Operation::new(
            "mute_tab",
            "Mute or unmute a tab: its audio and video elements play silently, in this page and the ones after.",
            |ctx, input: Mute| async move {
                let tab = input.tab.resolve(&ctx)?;
                let muted = input.muted.unwrap_or(true);
                json(super::to_json(&ctx.engine.mute_tab(&ctx.caller, &tab, muted).await?)?)
            },
        )
        .post("/tabs/{tab_id}/mute")
        .answers::<answers::TabPlace>()
        .tool("browser_mute_tab")
        .scope(Scope::Act),
        Operation::new(
            "duplicate_tab",
            "Open a copy of a tab: a new tab of the same user at the same URL, right after it, made active.",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                json(super::to_json(&ctx.engine.duplicate_tab(&ctx.caller, &tab).await?)?)
            },
        )
        .post("/tabs/{tab_id}/duplicate")
        .created()
        .answers::<answers::CreatedTab>()
        .tool("browser_duplicate_tab")
        .scope(Scope::Act)
        .category(Category::Navigation),
        Operation::new(
            "reorder_tab",
            "Move a tab to another place in the caller's tab list.",
            |ctx, input: Reorder| async move {
                let tab = input.tab.resolve(&ctx)?;
                let index = input.index.ok_or_else(|| {
                    wabp_core::Error::invalid("\"index\" is required: the tab's new place, from 0")
                })?;
                let index = usize::try_from(index).unwrap_or(usize::MAX);
                json(super::to_json(&ctx.engine.reorder_tab(&ctx.caller, &tab, index).await?)?)
            },
        )
        .post("/tabs/{tab_id}/reorder")
        .answers::<answers::TabPlace>()
        .tool("browser_reorder_tab")
        .scope(Scope::Act),
        Operation::new(
            "stop_tab",
            "Stop loading the tab's page.",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                json(super::to_json(&ctx.engine.stop_tab(&ctx.caller, &tab).await?)?)
            },
        )
        .post("/tabs/{tab_id}/stop")
        .answers::<answers::Stopped>()
        .scope(Scope::Act),
        Operation::new(
            "navigate",
            "Navigate a tab to a URL. Returns the before and after screenshots and the action envelope (events, scroll, timing).",
            |ctx, input: Navigate| async move {
                let tab = input.tab.resolve(&ctx)?;
                let options = input.options.resolve("action_complete")?;
                let envelope = ctx
                    .engine
                    .navigate(
                        &ctx.caller,
                        &tab,
                        &input.url,
                        input.referrer.as_deref(),
                        input.accept_beforeunload,
                        &options,
                    )
                    .await?;
                Ok(Output::Envelope(envelope))
            },
        )
        .post("/tabs/{tab_id}/navigate")
        .tool("browser_navigate")
        .scope(Scope::Act)
        .category(Category::Navigation)
        .answers_envelope(),
        history_step("back", "Go back one entry in the tab's history.", -1),
        history_step("forward", "Go forward one entry in the tab's history.", 1),
        Operation::new(
            "reload",
            "Reload the tab's page.",
            |ctx, input: TabAction| async move {
                let tab = input.tab.resolve(&ctx)?;
                let options = input.options.resolve("action_complete")?;
                Ok(Output::Envelope(
                    ctx.engine.reload(&ctx.caller, &tab, &options).await?,
                ))
            },
        )
        .post("/tabs/{tab_id}/reload")
        .tool("browser_reload")
        .scope(Scope::Act)
        .category(Category::Navigation)
        .answers_envelope(),
    ]
}

fn history_step(name: &str, description: &str, step: i64) -> Operation {
    Operation::new(name, description, move |ctx, input: TabAction| async move {
        let tab = input.tab.resolve(&ctx)?;
        let options = input.options.resolve("action_complete")?;
        Ok(Output::Envelope(
            ctx.engine
                .history_step(&ctx.caller, &tab, step, &options)
                .await?,
        ))
    })
    .post(&format!("/tabs/{{tab_id}}/{name}"))
    .tool(&format!("browser_{name}"))
    .scope(Scope::Act)
    .category(Category::Navigation)
    .answers_envelope()
}
