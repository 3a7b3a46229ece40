//! The ABP tools: each one parses its arguments, calls one `Engine`
//! operation (the same ones the REST handlers call) and shapes the answer as
//! MCP content. Plugin actions become tools too (`plugin_tools`).

use std::sync::Arc;

use rmcp::model::{ContentBlock, Tool};
use serde_json::{Map, Value, json};
use wabp_core::action::action_params;
use wabp_core::downloads::DownloadState;
use wabp_core::observe::SnapshotRequest;
use wabp_core::snapshot::SnapshotFormat;
use wabp_core::{ActionOptions, Caller, Envelope, Error, ErrorCode, Result};
use wabp_history::{NetworkFilter, RowOwner};

use crate::Context;
use crate::args::{
    Args, optional_bool, optional_int, optional_str, required_str, string_list, tab_id, without_tab,
};

/// The ABP tools with fixed names (plugin action tools come after them).
pub const FIXED_TOOLS: &[&str] = &[
    "browser_navigate",
    "browser_back",
    "browser_forward",
    "browser_reload",
    "browser_wait",
    "browser_screenshot",
    "browser_execute_javascript",
    "browser_get_text",
    "browser_list_tabs",
    "browser_new_tab",
    "browser_close_tab",
    "browser_activate_tab",
    "browser_dialog",
    "browser_file_chooser",
    "browser_select",
    "browser_downloads",
    "browser_network",
    "browser_curl",
    "browser_execution",
    "browser_snapshot",
    crate::screenshot::TOOL_NAME,
];

pub fn object_schema(properties: Map<String, Value>, required: &[&str]) -> Arc<Map<String, Value>> {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    Arc::new(schema)
}

pub fn tab_property() -> Value {
    json!({
        "type": "string",
        "description": "Tab id (from browser_list_tabs or browser_new_tab); default: the active tab"
    })
}

/// `tab_id` plus the standard action options (`wait_until`, `screenshot`,
/// `network`), shared by every action tool.
pub fn action_properties() -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("tab_id".into(), tab_property());
    p.insert(
        "wait_until".into(),
        json!({
            "type": "object",
            "description": "When the action counts as done",
            "properties": {
                "type": {"type": "string", "description": "action_complete (default), immediate, time, or a wait plugin's type"},
                "timeout_ms": {"type": "integer", "minimum": 0, "maximum": 300000, "description": "default 30000"},
                "duration_ms": {"type": "integer", "minimum": 0, "description": "for type \"time\""}
            }
        }),
    );
    p.insert(
        "screenshot".into(),
        json!({
            "type": "object",
            "description": "Before/after screenshots (WebP with element markup)",
            "properties": {
                "area": {"type": "string", "enum": ["viewport", "none"], "description": "none: no screenshots"},
                "markup": {"type": "array", "items": {"type": "string"}, "description": "markup tags to draw (default: all)"},
                "disable_markup": {"type": "array", "items": {"type": "string"}, "description": "e.g. [\"grid\"]"},
                "cursor": {"type": "boolean", "description": "draw the virtual cursor (default true)"}
            }
        }),
    );
    p.insert(
        "network".into(),
        json!({
            "type": "object",
            "description": "Save the HTTP calls the action causes under a tag",
            "properties": {
                "tag": {"type": "string"},
                "types": {"type": "array", "items": {"type": "string"}, "description": "e.g. [\"XHR\", \"Fetch\"]"}
            }
        }),
    );
    p
}

fn props(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn with_action(pairs: &[(&str, Value)]) -> Map<String, Value> {
    let mut p = action_properties();
    p.extend(props(pairs));
    p
}

fn tool(name: &'static str, description: &'static str, schema: Arc<Map<String, Value>>) -> Tool {
    Tool::new(name, description, schema)
}

/// The fixed tools' definitions.
pub fn fixed_tools() -> Vec<Tool> {
    let s = |d: &str| json!({"type": "string", "description": d});
    let tab_only = || object_schema(props(&[("tab_id", tab_property())]), &[]);
    vec![
        tool(
            "browser_navigate",
            "Navigate a tab to a URL. Returns the before and after screenshots and the action envelope (events, scroll, timing).",
            object_schema(
                with_action(&[
                    ("url", s("Absolute URL, e.g. https://example.com")),
                    ("referrer", s("Referrer URL (optional)")),
                ]),
                &["url"],
            ),
        ),
        tool(
            "browser_back",
            "Go back one entry in the tab's history.",
            object_schema(action_properties(), &[]),
        ),
        tool(
            "browser_forward",
            "Go forward one entry in the tab's history.",
            object_schema(action_properties(), &[]),
        ),
        tool(
            "browser_reload",
            "Reload the tab's page.",
            object_schema(action_properties(), &[]),
        ),
        tool(
            "browser_wait",
            "Let the page run for `ms` milliseconds (of its virtual time), then capture it.",
            object_schema(
                with_action(&[(
                    "ms",
                    json!({"type": "integer", "minimum": 0, "maximum": 60000, "description": "milliseconds to wait"}),
                )]),
                &["ms"],
            ),
        ),
        tool(
            "browser_screenshot",
            "Screenshot of a tab's viewport with element markup (clickable, typeable, scrollable, grid, selected), as WebP.",
            object_schema(action_properties(), &[]),
        ),
        tool(
            "browser_execute_javascript",
            "Evaluate a JavaScript expression in the page; returns its value and type.",
            object_schema(
                props(&[
                    ("tab_id", tab_property()),
                    (
                        "expression",
                        s("JavaScript expression, e.g. document.title"),
                    ),
                ]),
                &["expression"],
            ),
        ),
        tool(
            "browser_get_text",
            "The page's visible text, or that of the first element matching `selector`.",
            object_schema(
                props(&[
                    ("tab_id", tab_property()),
                    ("selector", s("CSS selector (optional)")),
                ]),
                &[],
            ),
        ),
        tool(
            "browser_list_tabs",
            "List the open tabs (id, url, title, active).",
            object_schema(Map::new(), &[]),
        ),
        tool(
            "browser_new_tab",
            "Open a new tab, optionally on a URL; returns its id.",
            object_schema(
                props(&[
                    ("url", s("URL to open (default about:blank)")),
                    (
                        "active",
                        json!({"type": "boolean", "description": "make it the active tab (default true)"}),
                    ),
                ]),
                &[],
            ),
        ),
        tool("browser_close_tab", "Close a tab.", tab_only()),
        tool(
            "browser_activate_tab",
            "Make a tab the active one.",
            tab_only(),
        ),
        tool(
            "browser_dialog",
            "The tab's pending JavaScript dialog (alert, confirm, prompt, beforeunload): get it, accept it or dismiss it.",
            object_schema(
                props(&[
                    ("tab_id", tab_property()),
                    (
                        "action",
                        json!({"type": "string", "enum": ["get", "accept", "dismiss"], "description": "default get"}),
                    ),
                    (
                        "prompt_text",
                        s("Text to answer a prompt with (accept only)"),
                    ),
                ]),
                &[],
            ),
        ),
        tool(
            "browser_file_chooser",
            "Answer a pending file chooser (a `file_chooser` event's id) with files, or cancel it.",
            object_schema(
                props(&[
                    ("id", s("The file chooser id from the event")),
                    (
                        "files",
                        json!({"type": "array", "items": {"type": "string"}, "description": "Absolute file paths"}),
                    ),
                    ("path", s("One absolute file path")),
                    ("cancel", json!({"type": "boolean"})),
                ]),
                &["id"],
            ),
        ),
        tool(
            "browser_select",
            "Answer a pending `<select>` popup (a `select_open` event's id) with option indices, or cancel it.",
            object_schema(
                props(&[
                    ("id", s("The select id from the event")),
                    (
                        "indices",
                        json!({"type": "array", "items": {"type": "integer", "minimum": 0}}),
                    ),
                    ("cancel", json!({"type": "boolean"})),
                ]),
                &["id"],
            ),
        ),
        tool(
            "browser_downloads",
            "Downloads: list them (optionally by state), get one, or cancel one.",
            object_schema(
                props(&[
                    (
                        "action",
                        json!({"type": "string", "enum": ["list", "get", "cancel"], "description": "default list"}),
                    ),
                    ("id", s("Download id (get, cancel)")),
                    (
                        "state",
                        json!({"type": "string", "enum": ["in_progress", "completed", "cancelled", "failed"]}),
                    ),
                    (
                        "limit",
                        json!({"type": "integer", "minimum": 1, "maximum": 10000, "description": "default 100"}),
                    ),
                ]),
                &[],
            ),
        ),
        tool(
            "browser_network",
            "Query saved network calls (regex filters over each field), or a tab's live buffer with source \"live\". Save a tab's buffer under a tag with save_tag.",
            object_schema(
                props(&[
                    (
                        "source",
                        json!({"type": "string", "enum": ["saved", "live"], "description": "default saved"}),
                    ),
                    ("save_tag", s("Save the tab's buffer under this tag first")),
                    (
                        "tab_id",
                        s("Tab (live buffer, save_tag) or regex over the tab id (saved)"),
                    ),
                    ("tag", s("regex")),
                    ("url", s("regex")),
                    ("hostname", s("regex")),
                    ("path", s("regex")),
                    ("query", s("regex")),
                    ("method", s("regex")),
                    ("status", s("regex, e.g. 4\\d\\d")),
                    ("type", s("regex over the resource type, e.g. XHR|Fetch")),
                    ("action_id", s("regex")),
                    ("include_body", json!({"type": "boolean"})),
                ]),
                &[],
            ),
        ),
        tool(
            "browser_curl",
            "An HTTP request from the page itself (its cookies and credentials), even while it is frozen.",
            object_schema(
                props(&[
                    ("tab_id", tab_property()),
                    ("url", s("URL, absolute or relative to the page")),
                    ("method", s("default GET")),
                    (
                        "headers",
                        json!({"type": "object", "additionalProperties": {"type": "string"}}),
                    ),
                    ("body", s("Request body")),
                    ("tag", s("Save the call under this tag")),
                ]),
                &["url"],
            ),
        ),
        tool(
            "browser_snapshot",
            "The page's accessibility tree as text with element refs ([e7]) usable as click/type targets; long pages come in windows (pass nextOffset as offset).",
            object_schema(
                props(&[
                    ("tab_id", tab_property()),
                    (
                        "format",
                        json!({"type": "string", "enum": ["text", "json"], "description": "default text"}),
                    ),
                    (
                        "offset",
                        json!({"type": "integer", "minimum": 0, "description": "nextOffset of the previous window (text format)"}),
                    ),
                    (
                        "include_screenshot",
                        json!({"type": "boolean", "description": "add a WebP screenshot with markup"}),
                    ),
                ]),
                &[],
            ),
        ),
        tool(
            "browser_execution",
            "The tab's execution control: get it, or pause/unpause the page between actions (paused) and set its virtual clock (initial_virtual_time, seconds since the epoch).",
            object_schema(
                props(&[
                    ("tab_id", tab_property()),
                    (
                        "paused",
                        json!({"type": "boolean", "description": "omit to just read the state"}),
                    ),
                    (
                        "initial_virtual_time",
                        json!({"type": "number", "minimum": 0}),
                    ),
                ]),
                &[],
            ),
        ),
    ]
}

fn text_json(value: &Value) -> ContentBlock {
    ContentBlock::text(serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string()))
}

/// An envelope as MCP content: the before and after screenshots as images
/// (before first), then the rest of the envelope as JSON text.
pub fn envelope_content(envelope: &Envelope) -> Result<Vec<ContentBlock>> {
    let mut value = serde_json::to_value(envelope).map_err(|e| Error::internal(e.to_string()))?;
    let mut content = Vec::with_capacity(3);
    for key in ["screenshot_before", "screenshot_after"] {
        if let Some(Value::Object(shot)) = value.get_mut(key) {
            if let Some(Value::String(data)) = shot.remove("data") {
                content.push(ContentBlock::image(data, "image/webp"));
            }
        }
    }
    content.push(text_json(&value));
    Ok(content)
}

fn options(args: &Args, default_wait: &str) -> Result<ActionOptions> {
    ActionOptions::from_request(&without_tab(args), default_wait)
}

/// Runs a fixed tool; `None` when `name` is not one.
pub async fn call_fixed(
    ctx: &Context,
    caller: &Caller,
    name: &str,
    args: &Args,
) -> Option<Result<Vec<ContentBlock>>> {
    let engine = &ctx.engine;
    let result = match name {
        "browser_navigate" => async {
            let tab = tab_id(engine, caller, args)?;
            let url = required_str(args, "url")?;
            let referrer = optional_str(args, "referrer")?;
            let options = options(args, "action_complete")?;
            envelope_content(&engine.navigate(caller, &tab, url, referrer, &options).await?)
        }
        .await,
        "browser_back" | "browser_forward" => async {
            let tab = tab_id(engine, caller, args)?;
            let options = options(args, "action_complete")?;
            let step = if name == "browser_back" { -1 } else { 1 };
            envelope_content(&engine.history_step(caller, &tab, step, &options).await?)
        }
        .await,
        "browser_reload" => async {
            let tab = tab_id(engine, caller, args)?;
            let options = options(args, "action_complete")?;
            envelope_content(&engine.reload(caller, &tab, &options).await?)
        }
        .await,
        "browser_wait" => async {
            let ms = optional_int(args, "ms", 0, 60_000)?
                .ok_or_else(|| Error::invalid("missing argument \"ms\" (0 to 60000)"))?;
            let tab = tab_id(engine, caller, args)?;
            let options = options(args, "time")?;
            envelope_content(&engine.wait(caller, &tab, ms, &options).await?)
        }
        .await,
        "browser_screenshot" => async {
            let tab = tab_id(engine, caller, args)?;
            let options = options(args, "immediate")?;
            envelope_content(&engine.screenshot_action(caller, &tab, &options).await?)
        }
        .await,
        "browser_execute_javascript" => async {
            let tab = tab_id(engine, caller, args)?;
            // REST's name for it is `script`; accept both.
            let expression = match optional_str(args, "expression")? {
                Some(e) => e,
                None => optional_str(args, "script")?.ok_or_else(|| {
                    Error::invalid("missing argument \"expression\" (a string)")
                })?,
            };
            Ok(vec![text_json(
                &json!({ "result": engine.execute(caller, &tab, expression).await? }),
            )])
        }
        .await,
        "browser_get_text" => async {
            let tab = tab_id(engine, caller, args)?;
            let selector = optional_str(args, "selector")?;
            let text = engine.text(caller, &tab, selector).await?;
            Ok(vec![ContentBlock::text(text.unwrap_or_default())])
        }
        .await,
        "browser_list_tabs" => async {
            let tabs = engine.list_tabs(caller).await?;
            Ok(vec![text_json(
                &serde_json::to_value(tabs).map_err(|e| Error::internal(e.to_string()))?,
            )])
        }
        .await,
        "browser_new_tab" => async {
            let url = optional_str(args, "url")?;
            let active = optional_bool(args, "active")?.unwrap_or(true);
            Ok(vec![text_json(&engine.create_tab(caller, url, active, None).await?)])
        }
        .await,
        "browser_close_tab" => async {
            let tab = tab_id(engine, caller, args)?;
            engine.close_tab(caller, &tab).await?;
            Ok(vec![text_json(&json!({ "closed": tab }))])
        }
        .await,
        "browser_activate_tab" => async {
            let tab = tab_id(engine, caller, args)?;
            Ok(vec![text_json(&engine.activate_tab(caller, &tab).await?)])
        }
        .await,
        "browser_dialog" => async {
            let tab = tab_id(engine, caller, args)?;
            let value = match optional_str(args, "action")?.unwrap_or("get") {
                "get" => engine.dialog(caller, &tab).await?,
                "accept" => {
                    let prompt = optional_str(args, "prompt_text")?.map(str::to_string);
                    engine.handle_dialog(caller, &tab, true, prompt).await?
                }
                "dismiss" => engine.handle_dialog(caller, &tab, false, None).await?,
                other => {
                    return Err(Error::invalid(format!(
                        "action must be get, accept or dismiss, not {other:?}"
                    )));
                }
            };
            Ok(vec![text_json(&value)])
        }
        .await,
        "browser_file_chooser" => async {
            let id = required_str(args, "id")?;
            let files = string_list(args, "files")?;
            let path = optional_str(args, "path")?.map(str::to_string);
            let cancel = optional_bool(args, "cancel")?.unwrap_or(false);
            Ok(vec![text_json(
                &engine.answer_file_chooser(id, files, path, cancel, caller).await?,
            )])
        }
        .await,
        "browser_select" => async {
            let id = required_str(args, "id")?;
            let indices = match args.get("indices") {
                None | Some(Value::Null) => None,
                Some(Value::Array(items)) => Some(
                    items
                        .iter()
                        .map(|v| {
                            v.as_u64().ok_or_else(|| {
                                Error::invalid(
                                    "argument \"indices\" must be a list of non-negative integers",
                                )
                            })
                        })
                        .collect::<Result<Vec<u64>>>()?,
                ),
                Some(_) => {
                    return Err(Error::invalid(
                        "argument \"indices\" must be a list of non-negative integers",
                    ));
                }
            };
            let cancel = optional_bool(args, "cancel")?.unwrap_or(false);
            Ok(vec![text_json(
                &engine.answer_select(id, indices, cancel, caller).await?,
            )])
        }
        .await,
        "browser_downloads" => async {
            let value = match optional_str(args, "action")?.unwrap_or("list") {
                "list" => {
                    let state = match optional_str(args, "state")? {
                        None | Some("") => None,
                        Some(text) => Some(DownloadState::parse(text).ok_or_else(|| {
                            Error::invalid(format!(
                                "state must be in_progress, completed, cancelled or failed, not {text:?}"
                            ))
                        })?),
                    };
                    let limit = optional_int(args, "limit", 1, 10_000)?.unwrap_or(100) as usize;
                    json!({ "downloads": engine.downloads(state, limit, caller) })
                }
                "get" => engine.download(caller, required_str(args, "id")?)?.detail(),
                "cancel" => engine.cancel_download(caller, required_str(args, "id")?).await?,
                other => {
                    return Err(Error::invalid(format!(
                        "action must be list, get or cancel, not {other:?}"
                    )));
                }
            };
            Ok(vec![text_json(&value)])
        }
        .await,
        "browser_network" => network(ctx, caller, args).await,
        "browser_snapshot" => snapshot(ctx, caller, args).await,
        "browser_curl" => async {
            let tab = tab_id(engine, caller, args)?;
            let url = required_str(args, "url")?.to_string();
            let method = optional_str(args, "method")?.unwrap_or("GET").to_string();
            let headers = match args.get("headers") {
                None | Some(Value::Null) => Default::default(),
                Some(Value::Object(h)) => {
                    if h.values().any(|v| !v.is_string()) {
                        return Err(Error::invalid("argument \"headers\": values must be strings"));
                    }
                    h.clone()
                }
                Some(_) => {
                    return Err(Error::invalid(
                        "argument \"headers\" must be an object of strings",
                    ));
                }
            };
            let body = optional_str(args, "body")?
                .filter(|b| !b.is_empty())
                .map(str::to_string);
            let tag = optional_str(args, "tag")?.map(str::to_string);
            let answer = engine
                .curl(
                    caller,
                    &tab,
                    wabp_core::engine::CurlRequest {
                        url,
                        method,
                        headers,
                        body,
                        tag,
                    },
                )
                .await?;
            Ok(vec![text_json(&answer)])
        }
        .await,
        "browser_execution" => async {
            let tab = tab_id(engine, caller, args)?;
            let state = match optional_bool(args, "paused")? {
                None => engine.execution(caller, &tab).await?,
                Some(paused) => {
                    let initial = match args.get("initial_virtual_time") {
                        None | Some(Value::Null) => None,
                        Some(v) => Some(v.as_f64().filter(|t| t.is_finite() && *t >= 0.0).ok_or_else(
                            || {
                                Error::invalid(
                                    "argument \"initial_virtual_time\" must be a non-negative number of seconds since the Unix epoch",
                                )
                            },
                        )?),
                    };
                    engine.set_execution(caller, &tab, paused, initial).await?
                }
            };
            Ok(vec![text_json(
                &serde_json::to_value(state).map_err(|e| Error::internal(e.to_string()))?,
            )])
        }
        .await,
        _ => return None,
    };
    Some(result)
}

async fn snapshot(ctx: &Context, caller: &Caller, args: &Args) -> Result<Vec<ContentBlock>> {
    let format = match optional_str(args, "format")?.unwrap_or("text") {
        "text" => SnapshotFormat::Text,
        "json" => SnapshotFormat::Json,
        other => {
            return Err(Error::invalid(format!(
                "format must be text or json, not {other:?}"
            )));
        }
    };
    let offset = optional_int(args, "offset", 0, u32::MAX as u64)?.unwrap_or(0) as usize;
    let include_screenshot = optional_bool(args, "include_screenshot")?.unwrap_or(false);
    let tab = tab_id(&ctx.engine, caller, args)?;
    let mut out = ctx
        .engine
        .snapshot(
            caller,
            &tab,
            SnapshotRequest {
                format,
                offset,
                include_screenshot,
            },
        )
        .await?;
    let mut content = Vec::new();
    if let Some(Value::Object(shot)) = out.get_mut("screenshot") {
        if let Some(Value::String(data)) = shot.remove("data") {
            content.push(ContentBlock::image(data, "image/webp"));
        }
    }
    // The tree reads best as plain text; the rest (url, refs, paging) as JSON.
    if let Some(Value::String(text)) = out.as_object_mut().and_then(|o| o.remove("snapshot")) {
        content.push(ContentBlock::text(text));
    }
    content.push(text_json(&out));
    Ok(content)
}

async fn network(ctx: &Context, caller: &Caller, args: &Args) -> Result<Vec<ContentBlock>> {
    let engine = &ctx.engine;
    let mut out = Map::new();
    if let Some(tag) = optional_str(args, "save_tag")? {
        let tab = optional_str(args, "tab_id")?;
        let saved = engine.save_network(caller, tab, tag).await?;
        out.insert("saved".into(), json!(saved));
    }
    match optional_str(args, "source")?.unwrap_or("saved") {
        "live" => {
            let tab = tab_id(engine, caller, args)?;
            let (calls, dropped) = engine.tab_network(caller, &tab)?;
            out.insert("total".into(), json!(calls.len()));
            out.insert("dropped".into(), json!(dropped));
            out.insert("calls".into(), json!(calls));
        }
        "saved" => {
            let store = ctx.history.as_ref().ok_or_else(|| {
                Error::new(
                    ErrorCode::NotFound,
                    "network calls are not saved by this engine",
                )
            })?;
            let mut filter = Map::new();
            for field in [
                "tag",
                "tab_id",
                "url",
                "hostname",
                "path",
                "query",
                "method",
                "status",
                "type",
                "action_id",
            ] {
                if let Some(v) = optional_str(args, field)? {
                    filter.insert(field.into(), json!(v));
                }
            }
            if let Some(b) = optional_bool(args, "include_body")? {
                filter.insert("include_body".into(), json!(b));
            }
            let mut filter: NetworkFilter = serde_json::from_value(Value::Object(filter))
                .map_err(|e| Error::invalid(format!("bad filter: {e}")))?;
            // Only the caller's own saved calls.
            filter.owner = RowOwner::Only(caller.user_id().map(str::to_string));
            let calls = store.query_network(filter).await.map_err(|e| {
                let code = match &e {
                    wabp_history::Error::InvalidFilter { .. } => ErrorCode::InvalidRequest,
                    _ => ErrorCode::Internal,
                };
                Error::new(code, format!("history: {e}"))
            })?;
            out.insert("total".into(), json!(calls.len()));
            out.insert("calls".into(), json!(calls));
        }
        other => {
            return Err(Error::invalid(format!(
                "source must be \"saved\" or \"live\", not {other:?}"
            )));
        }
    }
    Ok(vec![text_json(&Value::Object(out))])
}

/// Runs a plugin action as a tool: the arguments minus `tab_id` and the
/// options are the action's params.
pub async fn call_action(
    ctx: &Context,
    caller: &Caller,
    action: &str,
    args: &Args,
) -> Result<Vec<ContentBlock>> {
    let engine = &ctx.engine;
    let tab = tab_id(engine, caller, args)?;
    let body = without_tab(args);
    let options = ActionOptions::from_request(&body, "action_complete")?;
    let envelope = engine
        .plugin_action(caller, &tab, action, action_params(&body), &options)
        .await?;
    envelope_content(&envelope)
}
