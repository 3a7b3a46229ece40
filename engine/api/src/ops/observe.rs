//! Reading pages for agents: the accessibility snapshot with refs, and
//! browser-use's state with actions by element index.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use wabp_core::observe::SnapshotRequest;
use wabp_core::snapshot::{SnapshotFormat, SnapshotSource};

use super::{TabRef, json};
use crate::{Operation, Scope};

#[derive(Deserialize, JsonSchema, Default, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Format {
    #[default]
    Text,
    Json,
}

#[derive(Deserialize, JsonSchema, Default, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Source {
    #[default]
    Dom,
    Accessibility,
}

#[derive(Deserialize, JsonSchema)]
struct Snapshot {
    #[serde(flatten)]
    tab: TabRef,
    /// `text` (default: the tree as indented lines with refs) or `json`.
    #[serde(default)]
    format: Option<Format>,
    /// `dom` (default: built from the page's DOM in an isolated world, fast)
    /// or `accessibility` (the browser's own accessibility tree: slower; it
    /// also has text CSS generates and closed shadow roots).
    #[serde(default)]
    source: Option<Source>,
    /// `nextOffset` of the previous window (text format).
    #[serde(default, deserialize_with = "crate::input::whole")]
    #[schemars(with = "Option<u64>")]
    offset: Option<u64>,
    /// Add a WebP screenshot with markup (REST's query also says `includeScreenshot`).
    #[serde(
        default,
        alias = "includeScreenshot",
        deserialize_with = "crate::input::flag"
    )]
    #[schemars(extend("x-aliases" = ["includeScreenshot"]))]
    include_screenshot: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
struct StateAction {
    #[serde(flatten)]
    tab: TabRef,
    /// `{"type": "click" | "input_text" | "scroll", "index", "text", "clear",
    /// "down", "pages"}`; the action's fields may also sit at the top level.
    #[serde(default)]
    action: Option<Map<String, Value>>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

pub fn operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "snapshot",
            "The page's accessibility tree as text with element refs ([e7]) usable as click/type targets; long pages come in windows (pass nextOffset as offset).",
            |ctx, input: Snapshot| async move {
                let tab = input.tab.resolve(&ctx)?;
                let request = SnapshotRequest {
                    format: match input.format.unwrap_or_default() {
                        Format::Text => SnapshotFormat::Text,
                        Format::Json => SnapshotFormat::Json,
                    },
                    source: match input.source.unwrap_or_default() {
                        Source::Dom => SnapshotSource::Dom,
                        Source::Accessibility => SnapshotSource::Accessibility,
                    },
                    offset: input.offset.unwrap_or(0) as usize,
                    include_screenshot: input.include_screenshot.unwrap_or(false),
                };
                json(ctx.engine.snapshot(&ctx.caller, &tab, request).await?)
            },
        )
        .get("/tabs/{tab_id}/snapshot")
        .answers_schema(snapshot_schema())
        .tool("browser_snapshot"),
        Operation::new(
            "state",
            "browser-use's state of the page: url, title, numbered interactive elements, text, scroll.",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                json(ctx.engine.state(&ctx.caller, &tab).await?)
            },
        )
        .get("/tabs/{tab_id}/state")
        .answers_schema(state_schema()),
        Operation::new(
            "state_action",
            "A browser-use action by element index (click, input_text, scroll), with a full envelope.",
            |ctx, input: StateAction| async move {
                let tab = input.tab.resolve(&ctx)?;
                let options = super::options_among(&input.rest, "action_complete")?;
                let body = Value::Object(input.rest);
                let action = match input.action {
                    Some(action) => Value::Object(action),
                    None => body,
                };
                let envelope = ctx
                    .engine
                    .state_action(&ctx.caller, &tab, &action, &options)
                    .await?;
                let mut value = super::to_json(&envelope)?;
                value["success"] = Value::Bool(true);
                json(value)
            },
        )
        .post("/tabs/{tab_id}/state/action")
        .scope(Scope::Act)
        .answers_envelope(),
    ]
}

/// The two shapes of a snapshot: a window of the text format, or the JSON
/// tree (`format=json`).
fn snapshot_schema() -> Value {
    serde_json::json!({
        "oneOf": [
            {
                "title": "text",
                "type": "object",
                "description": "A window of the accessibility tree as indented text, interactive elements with [ref=eN]",
                "required": ["snapshot", "truncated", "totalChars", "hasMore", "url", "refsCount"],
                "properties": {
                    "snapshot": { "type": "string" },
                    "truncated": { "type": "boolean" },
                    "totalChars": { "type": "integer", "minimum": 0 },
                    "hasMore": { "type": "boolean" },
                    "nextOffset": { "type": "integer", "minimum": 0, "description": "the offset of the next window, when hasMore" },
                    "url": { "type": "string" },
                    "refsCount": { "type": "integer", "minimum": 0 },
                    "note": { "type": "string", "description": "why the tree was cut, when it was" },
                    "screenshot": { "type": "object", "description": "with include_screenshot: a WebP screenshot with markup" },
                },
            },
            {
                "title": "json",
                "type": "object",
                "description": "The accessibility tree: every element with its ref, role, name, bounds and children",
                "required": ["elements", "page_title", "page_url", "refs_count"],
                "properties": {
                    "elements": { "type": "array", "items": { "type": "object", "properties": {
                        "ref_id": { "type": "string", "description": "absent on a text its element names" },
                        "role": { "type": "string" },
                        "name": { "type": ["string", "null"] },
                        "value": {},
                        "state": { "type": "array", "items": { "type": "string" } },
                        "bounds": { "type": ["object", "null"] },
                        "frame": { "type": "string" },
                        "level": { "type": "integer" },
                        "children": { "type": "array", "description": "elements of the same shape" },
                    } } },
                    "page_title": { "type": "string" },
                    "page_url": { "type": "string" },
                    "focused_ref": { "type": ["string", "null"] },
                    "refs_count": { "type": "integer", "minimum": 0 },
                    "truncated": { "type": "boolean" },
                    "note": { "type": "string" },
                    "screenshot": { "type": "object" },
                },
            },
        ],
    })
}

/// The browser-use state: the page's interactive elements by index.
fn state_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "required": ["url", "title", "elements"],
        "properties": {
            "url": { "type": "string" },
            "title": { "type": "string" },
            "elements": { "type": "array", "items": {
                "type": "object",
                "required": ["index", "tag", "text"],
                "properties": {
                    "index": { "type": "integer", "description": "the element's number: its ref is e{index}" },
                    "tag": { "type": "string" },
                    "type": { "type": ["string", "null"] },
                    "text": { "type": "string" },
                    "placeholder": { "type": ["string", "null"] },
                    "value": { "type": ["string", "null"], "description": "a password's as bullets, a hidden field's never" },
                    "href": { "type": ["string", "null"] },
                    "ariaLabel": { "type": ["string", "null"] },
                    "className": { "type": ["string", "null"] },
                    "id": { "type": ["string", "null"] },
                    "frame": { "type": "string", "description": "the frame's label, for elements in frames" },
                    "frameUrl": { "type": "string" },
                },
            } },
            "textContent": { "type": "string", "description": "the page's text, the first 2000 characters" },
            "scrollY": { "type": "number" },
            "scrollHeight": { "type": "number" },
            "viewportHeight": { "type": "number" },
            "next": { "description": "what scrolling down would show next" },
        },
    })
}
