//! Aleph's `browser` tool: one tool with an `action` parameter, answering
//! `{"success", "message", "data"?}`. Each action runs the catalogue's own
//! operation (so scopes, approval policies with their categories, the
//! action loop and the history apply); `start` and `stop` run
//! `browser_start` and `browser_stop`. Without a browser, every other action
//! answers Aleph's "not running" message.
//!
//! A call that is not a valid tool call (an unknown action, a missing
//! field) is a 400; what goes wrong while acting (a stale ref, a policy's
//! refusal, no browser) is a `success: false` answer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use wabp_core::{Error, ErrorCode, Result};

use super::{json, run_operation as op};
use crate::{Ctx, Operation, Output};

pub const NOT_RUNNING: &str =
    "Browser is not running. Use action 'start' to launch a browser first.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Action {
    Start,
    Stop,
    OpenTab,
    CloseTab,
    ListTabs,
    Navigate,
    Click,
    Type,
    Fill,
    Scroll,
    Hover,
    Screenshot,
    Snapshot,
    Evaluate,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Direction {
    Up,
    Down,
    Left,
    Right,
}

/// One call of the tool: `action` and the fields it takes.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolCall {
    /// start, stop, open_tab, close_tab, list_tabs, navigate, click, type,
    /// fill, scroll, hover, screenshot, snapshot, evaluate.
    action: Action,
    /// The tab (from open_tab or list_tabs); default: the active tab.
    #[serde(default, deserialize_with = "crate::input::tab_id")]
    tab_id: Option<String>,
    /// open_tab, navigate: the URL.
    #[serde(default)]
    url: Option<String>,
    /// click, type, fill, hover (and scroll, for an element): a ref from
    /// `snapshot` (`e42`).
    #[serde(default)]
    ref_id: Option<String>,
    /// The same with a CSS selector.
    #[serde(default)]
    selector: Option<String>,
    /// type (appends), fill (replaces): the text.
    #[serde(default)]
    text: Option<String>,
    /// scroll: up, down, left or right.
    #[serde(default)]
    direction: Option<Direction>,
    /// scroll: CSS pixels (default 300).
    #[serde(default)]
    amount: Option<f64>,
    /// screenshot: `full_page`, `format` (png, jpeg, webp), `quality`.
    #[serde(flatten)]
    image: super::browser::ImageOptions,
    /// evaluate: the JavaScript.
    #[serde(default)]
    #[schemars(length(max = 1_048_576))]
    js: Option<String>,
    /// The approval a person gave for this call (after an "Approval
    /// required" answer).
    #[serde(default)]
    approval_id: Option<String>,
    #[serde(flatten)]
    launch: super::browser::Launch,
}

/// What every call answers.
#[derive(Serialize, JsonSchema)]
pub(crate) struct ToolAnswer {
    success: bool,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
}

fn answer(success: bool, message: impl Into<String>, data: Option<Value>) -> Result<Output> {
    json(super::to_json(&ToolAnswer {
        success,
        message: message.into(),
        data,
    })?)
}

pub fn operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "browser_tool",
            "One tool for the whole browser, Aleph's: {\"action\": \"start\" | \"stop\" | \"open_tab\" | \"close_tab\" | \"list_tabs\" | \"navigate\" | \"click\" | \"type\" | \"fill\" | \"scroll\" | \"hover\" | \"screenshot\" | \"snapshot\" | \"evaluate\", ...}. Workflow: start, open_tab, snapshot (elements with ref_id), click/type/fill by ref_id, screenshot, stop. Answers {success, message, data}.",
            |ctx, call: ToolCall| async move { run(ctx, call).await },
        )
        .post("/browser-tool")
        .tool("browser")
        .doors_inside()
        .answers::<ToolAnswer>(),
    ]
}

fn need<'a>(value: &'a Option<String>, field: &str, action: &str) -> Result<&'a str> {
    value
        .as_deref()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| Error::invalid(format!("action {action:?} needs \"{field}\"")))
}

async fn run(ctx: Ctx, call: ToolCall) -> Result<Output> {
    let name = serde_json::to_value(call.action)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    match call.action {
        Action::Start => return start(&ctx, &call).await,
        Action::Stop => return stop(&ctx).await,
        _ => {}
    }
    if !ctx.engine.browser_running() {
        return answer(false, NOT_RUNNING, None);
    }
    let mut input = Map::new();
    if let Some(tab) = &call.tab_id {
        input.insert("tab_id".into(), json!(tab));
    }
    if let Some(id) = &call.approval_id {
        input.insert("approval_id".into(), json!(id));
    }
    let quiet = json!({ "area": "none" });
    let outcome = match call.action {
        Action::OpenTab => {
            input.insert("url".into(), json!(need(&call.url, "url", &name)?));
            op(&ctx, "create_tab", Value::Object(input)).await.map(|out| {
                let v = value_of(out);
                let id = v["id"].as_str().unwrap_or_default().to_string();
                (format!("Opened tab {id}."), Some(json!({ "tab_id": id, "url": v["url"] })))
            })
        }
        Action::CloseTab => {
            let tab = need(&call.tab_id, "tab_id", &name)?.to_string();
            op(&ctx, "close_tab", Value::Object(input))
                .await
                .map(|_| (format!("Closed tab {tab}."), None))
        }
        Action::ListTabs => op(&ctx, "list_tabs", json!({})).await.map(|out| {
            let tabs: Vec<Value> = value_of(out)
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|t| json!({ "tab_id": t["id"], "url": t["url"], "title": t["title"], "active": t["active"] }))
                .collect();
            (format!("{} tab(s) open.", tabs.len()), Some(json!({ "tabs": tabs })))
        }),
        Action::Navigate => {
            let url = need(&call.url, "url", &name)?.to_string();
            input.insert("url".into(), json!(url));
            input.insert("screenshot".into(), quiet);
            op(&ctx, "navigate", Value::Object(input)).await.map(|out| {
                (format!("Navigated to {url}."), Some(json!({ "action_id": action_id(&out) })))
            })
        }
        Action::Click | Action::Hover | Action::Type | Action::Fill => {
            target(&call, &name, &mut input, true)?;
            if matches!(call.action, Action::Type | Action::Fill) {
                let text = call
                    .text
                    .as_deref()
                    .ok_or_else(|| Error::invalid(format!("action {name:?} needs \"text\"")))?;
                input.insert("text".into(), json!(text));
            }
            input.insert("screenshot".into(), quiet);
            let done = match call.action {
                Action::Click => "Clicked.",
                Action::Hover => "Hovered.",
                Action::Type => "Typed.",
                _ => "Filled.",
            };
            op(&ctx, &format!("action:{name}"), Value::Object(input))
                .await
                .map(|out| (done.to_string(), Some(json!({ "action_id": action_id(&out) }))))
        }
        Action::Scroll => scroll(&ctx, &call, &name, input).await?,
        Action::Screenshot => {
            input.insert("full_page".into(), json!(call.image.full_page.unwrap_or(false)));
            input.insert("format".into(), json!(call.image.format.as_deref().unwrap_or("png").to_ascii_lowercase()));
            if let Some(quality) = call.image.quality {
                input.insert("quality".into(), json!(quality));
            }
            // Its options are checked by the operation: a bad one is the
            // caller's 400, not a failed screenshot.
            match op(&ctx, "plain_screenshot", Value::Object(input)).await {
                Err(e) if e.code == ErrorCode::InvalidRequest => return Err(e),
                outcome => outcome.map(|out| {
                    let v = value_of(out);
                    let message = format!(
                        "Screenshot captured ({}x{} {}).",
                        v["width"],
                        v["height"],
                        v["format"].as_str().unwrap_or("")
                    );
                    (message, Some(v))
                }),
            }
        }
        Action::Snapshot => {
            input.insert("format".into(), json!("json"));
            op(&ctx, "snapshot", Value::Object(input)).await.map(|out| {
                let mut v = value_of(out);
                if let Some(o) = v.as_object_mut() {
                    o.remove("refs_count");
                }
                let count = v["elements"].as_array().map(Vec::len).unwrap_or(0);
                (format!("Snapshot of {} with {count} top-level elements.", v["page_url"].as_str().unwrap_or("")), Some(v))
            })
        }
        Action::Evaluate => {
            input.insert("script".into(), json!(need(&call.js, "js", &name)?));
            op(&ctx, "execute", Value::Object(input)).await.map(|out| {
                let result = value_of(out)["result"].clone();
                let message = match &result["value"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (message, Some(result))
            })
        }
        Action::Start | Action::Stop => unreachable!("handled above"),
    };
    match outcome {
        Ok((message, data)) => answer(true, message, data),
        Err(e) => failed(e, ctx.engine.browser_running()),
    }
}

/// `start`: a browser launched as `launch` says, or the one running.
async fn start(ctx: &Ctx, call: &ToolCall) -> Result<Output> {
    let launch = serde_json::to_value(&call.launch).map_err(|e| Error::internal(e.to_string()))?;
    match op(ctx, "browser_start", launch).await {
        Ok(Output::Json(v)) if v["already_running"] == true => {
            answer(true, "Browser is already running.", Some(v))
        }
        Ok(Output::Json(v)) => answer(true, "Browser started successfully.", Some(v)),
        Ok(_) => answer(true, "Browser started successfully.", None),
        Err(e) => failed(e, ctx.engine.browser_running()),
    }
}

/// `stop`: the browser and its tabs end; the engine stays.
async fn stop(ctx: &Ctx) -> Result<Output> {
    if !ctx.engine.browser_running() {
        return answer(true, "Browser is not running.", None);
    }
    match op(ctx, "browser_stop", json!({})).await {
        Ok(_) => answer(true, "Browser stopped.", None),
        Err(e) => failed(e, ctx.engine.browser_running()),
    }
}

/// The element an action is on: `ref_id` (from a snapshot) or `selector`.
fn target(
    call: &ToolCall,
    name: &str,
    input: &mut Map<String, Value>,
    required: bool,
) -> Result<()> {
    match (&call.ref_id, &call.selector) {
        (Some(r), _) => {
            input.insert("ref".into(), json!(r));
        }
        (None, Some(s)) => {
            input.insert("selector".into(), json!(s));
        }
        (None, None) if required => {
            return Err(Error::invalid(format!(
                "action {name:?} needs \"ref_id\" (from snapshot) or \"selector\""
            )));
        }
        _ => {}
    }
    Ok(())
}

/// `scroll` by `amount` pixels in `direction`, over the element when one is
/// named. A bad argument is the caller's error; the operation's outcome is
/// the tool's answer.
async fn scroll(
    ctx: &Ctx,
    call: &ToolCall,
    name: &str,
    mut input: Map<String, Value>,
) -> Result<Result<(String, Option<Value>)>> {
    let direction = call.direction.ok_or_else(|| {
        Error::invalid("action \"scroll\" needs \"direction\": up, down, left or right")
    })?;
    let amount = call.amount.unwrap_or(300.0);
    if !(amount.is_finite() && amount > 0.0 && amount <= 100_000.0) {
        return Err(Error::invalid(
            "\"amount\" must be a number of pixels in (0, 100000]",
        ));
    }
    let (dx, dy) = match direction {
        Direction::Up => (0.0, -amount),
        Direction::Down => (0.0, amount),
        Direction::Left => (-amount, 0.0),
        Direction::Right => (amount, 0.0),
    };
    target(&call, &name, &mut input, false)?;
    input.insert("delta_x".into(), json!(dx));
    input.insert("delta_y".into(), json!(dy));
    input.insert("screenshot".into(), json!({ "area": "none" }));
    let word = serde_json::to_value(direction)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    Ok(op(ctx, "action:scroll", Value::Object(input))
        .await
        .map(|out| {
            let scroll = match &out {
                Output::Envelope(e) => serde_json::to_value(&e.scroll).ok(),
                _ => None,
            };
            (
                format!("Scrolled {word}."),
                Some(json!({ "scroll": scroll, "action_id": action_id(&out) })),
            )
        }))
}

/// A failure while acting, as the tool tells it: the policy's words, an
/// approval's prompt and id, or the engine's message.
fn failed(e: Error, running: bool) -> Result<Output> {
    match e.code {
        ErrorCode::ApprovalRequired => {
            let mut data = e.details.map(|d| *d).unwrap_or_default();
            data.insert("approval_required".into(), json!(true));
            answer(false, e.message, Some(Value::Object(data)))
        }
        // The browser went away during the call.
        ErrorCode::NotReady if !running => answer(false, NOT_RUNNING, None),
        // Who may call what is the caller's answer, not the tool's.
        ErrorCode::Unauthorized | ErrorCode::Forbidden => Err(e),
        _ => answer(
            false,
            crate::errors::said(&e, crate::errors::Voice::Tools),
            None,
        ),
    }
}

fn value_of(output: Output) -> Value {
    match output {
        Output::Json(v) => v,
        Output::Envelope(e) => serde_json::to_value(e).unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

fn action_id(output: &Output) -> Option<String> {
    match output {
        Output::Envelope(e) => e.action_id.clone(),
        _ => None,
    }
}
