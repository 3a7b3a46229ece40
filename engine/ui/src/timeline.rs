//! A session's timeline, the trace viewer for agents: every action in
//! order (and what people did in the UI between them), filtered by tab,
//! type and errors; one action's before and after screenshots, its events,
//! timing, network calls and the agent step that asked for it.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::{Value, json};
use wabp_api::Output;

use crate::login::Viewer;
use crate::pages::{clock, engine_failure, failure, layout};
use crate::{Signed, Ui, html};

/// Event types the UI records for what people did.
const PERSON_EVENTS: [&str; 5] = [
    "taken_over",
    "handed_back",
    "human_input",
    "dialog_answered_in_ui",
    "prompt_answered_in_ui",
];

/// Longest JSON or body shown inline; the rest is cut with a note.
const SHOWN_CHARS: usize = 20_000;

#[derive(Deserialize, Default)]
pub struct Filter {
    #[serde(default)]
    tab: Option<String>,
    #[serde(default, rename = "type")]
    action_type: Option<String>,
    #[serde(default)]
    errors: Option<String>,
    #[serde(default)]
    action: Option<String>,
}

impl Filter {
    fn value(field: &Option<String>) -> Option<&str> {
        field.as_deref().map(str::trim).filter(|v| !v.is_empty())
    }
}

/// A session as the timeline shows it: the session, all its actions the
/// viewer may see (oldest first), and its events.
pub(crate) struct SessionData {
    pub session: Value,
    pub actions: Vec<Value>,
    pub events: Vec<Value>,
}

/// One action with what goes with it.
pub(crate) struct ActionData {
    pub action: Value,
    pub events: Vec<Value>,
    pub calls: Vec<Value>,
    /// The calls come from the tab's live capture (not saved with the
    /// action, bodies not kept).
    pub live_calls: bool,
    /// The agent task and the step of it that asked for the action.
    pub step: Option<(Value, Value)>,
}

pub(crate) async fn page(
    State(ui): State<Ui>,
    Signed { viewer, .. }: Signed,
    Path(session_id): Path<String>,
    Query(filter): Query<Filter>,
) -> Response {
    let data = match session_data(&ui, &viewer, &session_id).await {
        Ok(data) => data,
        Err(e) => return engine_failure(&e),
    };
    let chosen = chosen_action(&data, &filter);
    let detail = match &chosen {
        Some(id) => Some(match action_data(&ui, &viewer, id).await {
            Ok(action) => render_detail(&action, &|which| format!("/ui/actions/{id}/shot/{which}")),
            Err(e) => html! { p.error { (e.message) } },
        }),
        None => None,
    };
    let body = render_page(&session_id, &data, &filter, chosen.as_deref(), detail, true);
    html(layout("timeline", Some(&viewer), body))
}

async fn session_data(
    ui: &Ui,
    viewer: &Viewer,
    session_id: &str,
) -> wabp_core::Result<SessionData> {
    let session = ui
        .json(viewer, "history_session", json!({ "id": session_id }))
        .await?;
    let actions = ui
        .json(
            viewer,
            "history_actions",
            json!({ "session_id": session_id }),
        )
        .await?["actions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let events = ui
        .json(
            viewer,
            "history_events",
            json!({ "session_id": session_id }),
        )
        .await
        .map(|v| v["events"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default();
    Ok(SessionData {
        session,
        actions,
        events,
    })
}

/// The actions the filter keeps.
fn kept<'a>(data: &'a SessionData, filter: &Filter) -> Vec<&'a Value> {
    data.actions
        .iter()
        .filter(|a| Filter::value(&filter.tab).is_none_or(|t| a["tab_id"].as_str() == Some(t)))
        .filter(|a| {
            Filter::value(&filter.action_type).is_none_or(|t| a["action_type"].as_str() == Some(t))
        })
        .filter(|a| filter.errors.is_none() || !a["error"].is_null())
        .collect()
}

/// The action shown first: the one asked for, else the first kept.
pub(crate) fn chosen_action(data: &SessionData, filter: &Filter) -> Option<String> {
    let actions = kept(data, filter);
    Filter::value(&filter.action)
        .and_then(|id| actions.iter().find(|a| a["id"].as_str() == Some(id)))
        .or(actions.first())
        .and_then(|a| a["id"].as_str())
        .map(str::to_string)
}

/// The timeline's body. `live`: links to the engine's other pages (a
/// download of the session for `wabp view`).
pub(crate) fn render_page(
    session_id: &str,
    data: &SessionData,
    filter: &Filter,
    chosen: Option<&str>,
    detail: Option<Markup>,
    live: bool,
) -> Markup {
    let in_tab = |tab: Option<&str>| Filter::value(&filter.tab).is_none_or(|t| tab == Some(t));
    let tabs = distinct(data.actions.iter().filter_map(|a| a["tab_id"].as_str()));
    let types = distinct(
        data.actions
            .iter()
            .filter_map(|a| a["action_type"].as_str()),
    );
    let only_errors = filter.errors.is_some();
    let actions = kept(data, filter);
    // What people did, between the actions (not with the type or error filter).
    let person: Vec<Value> = if only_errors || Filter::value(&filter.action_type).is_some() {
        Vec::new()
    } else {
        data.events
            .iter()
            .filter(|e| {
                e["action_id"].is_null()
                    && in_tab(e["tab_id"].as_str())
                    && e["type"]
                        .as_str()
                        .is_some_and(|t| PERSON_EVENTS.contains(&t))
            })
            .cloned()
            .collect()
    };
    let rows = merged(&actions, &person);
    let session = &data.session;
    html! {
        h1 { "Session " (session_id) }
        p.hint {
            "Started " (clock(session["started_ms"].as_i64()))
            @if let Some(end) = session["ended_ms"].as_i64() { ", ended " (clock(Some(end))) }
            ". " (actions.len()) " actions shown. Keys: ↑/↓ or k/j move between actions."
            @if live {
                " " a href={ "/ui/sessions/" (session_id) "/export" } download { "Download this session" }
                " (one file with its screenshots; open it with " code { "wabp view FILE" } ")."
            }
        }
        form.filters method="get" {
            label { "Tab "
                select name="tab" {
                    option value="" { "all" }
                    @for tab in &tabs {
                        option value=(tab) selected[Filter::value(&filter.tab) == Some(*tab)] { (tab) }
                    }
                }
            }
            label { "Type "
                select name="type" {
                    option value="" { "all" }
                    @for kind in &types {
                        option value=(kind) selected[Filter::value(&filter.action_type) == Some(*kind)] { (kind) }
                    }
                }
            }
            label { input type="checkbox" name="errors" value="1" checked[only_errors]; " errors only" }
            button { "Filter" }
        }
        div.timeline {
            ol #actions {
                @for row in &rows {
                    @match row {
                        Row::Action(action) => {
                            @let id = action["id"].as_str().unwrap_or_default();
                            @let failed = !action["error"].is_null();
                            li.action.failed[failed].selected[chosen == Some(id)] data-action=(id) {
                                a href={ "/ui/actions/" (id) } hx-get={ "/ui/actions/" (id) } hx-target="#detail" hx-push-url="false" {
                                    span.kind { (action["action_type"].as_str().unwrap_or("?")) }
                                    span.ms { (action["duration_ms"].as_i64().unwrap_or(0)) " ms" }
                                    span.tabid { (short(action["tab_id"].as_str().unwrap_or_default())) }
                                    @if failed { span.badge.broken { "error" } }
                                }
                            }
                        }
                        Row::Person(event) => {
                            li.person { span.badge.human { (person_text(event)) } }
                        }
                    }
                }
            }
            section #detail hx-disable {
                @match detail {
                    Some(detail) => (detail),
                    None => p.hint { "No action matches." },
                }
            }
        }
    }
}

enum Row<'a> {
    Action(&'a Value),
    Person(&'a Value),
}

/// Actions and people's events in the order they happened.
fn merged<'a>(actions: &[&'a Value], person: &'a [Value]) -> Vec<Row<'a>> {
    let mut rows: Vec<(i64, Row<'a>)> = actions
        .iter()
        .map(|a| (a["started_ms"].as_i64().unwrap_or(0), Row::Action(a)))
        .chain(
            person
                .iter()
                .map(|e| (e["recorded_ms"].as_i64().unwrap_or(0), Row::Person(e))),
        )
        .collect();
    rows.sort_by_key(|(at, _)| *at);
    rows.into_iter().map(|(_, row)| row).collect()
}

fn person_text(event: &Value) -> String {
    let data = &event["data"];
    let by = data["by"].as_str().unwrap_or("a person");
    match event["type"].as_str().unwrap_or_default() {
        "taken_over" => format!("{by} took the tab over"),
        "handed_back" => format!("{by} handed the tab back"),
        "dialog_answered_in_ui" => format!("{by} answered a dialog"),
        "prompt_answered_in_ui" => format!(
            "{by} answered a {}",
            data["prompt"]
                .as_str()
                .unwrap_or("prompt")
                .replace('_', " ")
        ),
        _ => match data["input"].as_str().unwrap_or_default() {
            "click" => format!(
                "{by} clicked at {}, {}",
                data["x"].as_f64().unwrap_or(0.0),
                data["y"].as_f64().unwrap_or(0.0)
            ),
            "key" => format!("{by} pressed {}", data["key"].as_str().unwrap_or("a key")),
            "text" => format!(
                "{by} typed {} characters",
                data["characters"].as_u64().unwrap_or(0)
            ),
            "scroll" => format!("{by} scrolled"),
            _ => format!("{by} used the tab"),
        },
    }
}

fn short(id: &str) -> &str {
    id.split('.').next().unwrap_or(id)
}

fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// One action: as a fragment for the timeline, or a page of its own.
pub(crate) async fn detail(
    State(ui): State<Ui>,
    Signed { viewer, .. }: Signed,
    headers: HeaderMap,
    Path(action_id): Path<String>,
) -> Response {
    let markup = match action_data(&ui, &viewer, &action_id).await {
        Ok(action) => render_detail(&action, &|which| {
            format!("/ui/actions/{action_id}/shot/{which}")
        }),
        Err(e) => return engine_failure(&e),
    };
    detail_answer(&headers, Some(&viewer), markup)
}

/// A detail as htmx asks for it (the fragment) or as a page.
pub(crate) fn detail_answer(
    headers: &HeaderMap,
    viewer: Option<&Viewer>,
    markup: Markup,
) -> Response {
    if headers.contains_key("hx-request") {
        html(markup)
    } else {
        html(layout(
            "action",
            viewer,
            html! { section #detail hx-disable { (markup) } },
        ))
    }
}

async fn action_data(ui: &Ui, viewer: &Viewer, action_id: &str) -> wabp_core::Result<ActionData> {
    let action = ui
        .json(viewer, "history_action", json!({ "id": action_id }))
        .await?;
    let events = ui
        .json(viewer, "history_events", json!({ "action_id": action_id }))
        .await
        .map(|v| v["events"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default();
    let anchored = format!("^{}$", action_id.replace('.', "\\."));
    let calls = ui
        .json(
            viewer,
            "network",
            json!({ "action_id": anchored, "include_body": true }),
        )
        .await
        .map(|v| v["calls"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default();
    // Nothing saved with it: the calls the tab's live capture saw while it
    // ran, if the tab is still open and they are still in its buffer.
    let (calls, live_calls) = match (calls.is_empty(), action["tab_id"].as_str()) {
        (true, Some(tab)) => {
            let started = action["started_ms"].as_i64().unwrap_or(0);
            let completed = action["completed_ms"].as_i64().unwrap_or(i64::MAX);
            let seen: Vec<Value> = ui
                .json(viewer, "tab_network", json!({ "tab_id": tab }))
                .await
                .map(|v| v["calls"].as_array().cloned().unwrap_or_default())
                .unwrap_or_default()
                .into_iter()
                .filter(|c| {
                    c["timestamp_ms"]
                        .as_i64()
                        .is_some_and(|at| at >= started && at <= completed)
                })
                .collect();
            let live = !seen.is_empty();
            (seen, live)
        }
        (_, _) => (calls, false),
    };
    let step = agent_step(ui, viewer, action_id).await;
    Ok(ActionData {
        action,
        events,
        calls,
        live_calls,
        step,
    })
}

/// The agent step that asked for the action: the task's goal and the step.
async fn agent_step(ui: &Ui, viewer: &Viewer, action_id: &str) -> Option<(Value, Value)> {
    let tasks = ui.json(viewer, "agent_tasks", json!({})).await.ok()?;
    tasks["tasks"].as_array()?.iter().find_map(|task| {
        task["history"]
            .as_array()?
            .iter()
            .find(|item| item["action_id"].as_str() == Some(action_id))
            .map(|item| (task.clone(), item.clone()))
    })
}

/// An action's detail; `image_url` gives where its `before`/`after`
/// screenshot is.
pub(crate) fn render_detail(data: &ActionData, image_url: &dyn Fn(&str) -> String) -> Markup {
    let ActionData {
        action,
        events,
        calls,
        live_calls,
        step,
    } = data;
    let (console, events): (Vec<&Value>, Vec<&Value>) = events
        .iter()
        .partition(|e| e["type"].as_str() == Some("console"));
    let id = action["id"].as_str().unwrap_or_default();
    let has = |field: &str| !action[field].is_null();
    let timing = action["timing"].as_object();
    html! {
        article.action-detail data-action=(id) {
            h2 { (action["action_type"].as_str().unwrap_or("?")) " " small { (id) } }
            p {
                "Tab " code { (action["tab_id"].as_str().unwrap_or_default()) }
                ", started " (clock(action["started_ms"].as_i64()))
                ", took " (action["duration_ms"].as_i64().unwrap_or(0)) " ms"
                // The page's clock reads the date it was frozen at.
                @if let Some(vt) = action["virtual_time_ms"].as_i64() { ", page clock " (clock(Some(vt))) }
            }
            @if let Some(error) = action["error"].as_str() { p.error { (error) } }
            @if let Some((task, item)) = step {
                div.step {
                    h3 { "Agent step " (item["step"].as_u64().unwrap_or(0)) }
                    p { "Goal: " (task["task"].as_str().unwrap_or_default()) }
                    p { "Model's action: " code { (item["details"].as_str().unwrap_or_default()) } }
                    @if let Some(ms) = item["model_ms"].as_f64() { p { "Model answered in " (ms.round()) " ms" } }
                }
            }
            div.shots {
                @for (which, field) in [("before", "screenshot_before"), ("after", "screenshot_after")] {
                    figure {
                        figcaption { (which) }
                        @if has(field) {
                            img.shot data-which=(which) src=(image_url(which)) alt={ "the page " (which) " the action" } loading="lazy";
                        } @else {
                            p.hint { "no screenshot" }
                        }
                    }
                }
            }
            @if let Some(timing) = timing {
                h3 { "Timing" }
                table.timing {
                    // Durations only: the clock readings beside them say when, not how long.
                    @for (phase, ms) in timing {
                        @if let Some(ms) = ms.as_f64().filter(|ms| *ms < 1e9) { tr { th { (phase) } td { (format!("{ms:.1}")) " ms" } } }
                    }
                }
            }
            h3 { "Parameters" }
            pre { (shown(&action["params"])) }
            @if has("result") { h3 { "Result" } pre { (shown(&action["result"])) } }
            h3 { "Events (" (events.len()) ")" }
            @if events.is_empty() { p.hint { "none" } }
            ul.events {
                @for event in events {
                    li { strong { (event["type"].as_str().unwrap_or_default()) } " " code { (shown(&event["data"])) } }
                }
            }
            h3 { "Console (" (console.len()) ")" }
            @if console.is_empty() { p.hint { "The page wrote nothing to its console." } }
            ul.console {
                @for message in &console {
                    @let level = message["data"]["level"].as_str().unwrap_or("log");
                    li class={ "level-" (level) } {
                        span.badge { (level) } " " code { (message["data"]["text"].as_str().unwrap_or_default()) }
                    }
                }
            }
            h3 { "Network (" (calls.len()) ")" }
            @if calls.is_empty() { p.hint { "No calls were saved with this action (ask for them with the action's network option), and the tab's live capture has none from its time." } }
            @if *live_calls { p.hint { "From the tab's live capture (not saved with the action: save them with the action's network option to keep them)." } }
            (waterfall(calls))
        }
    }
}

/// Calls as rows with a bar from their start to their end.
fn waterfall(calls: &[Value]) -> Markup {
    let start = calls
        .iter()
        .filter_map(|c| c["timestamp_ms"].as_i64())
        .min()
        .unwrap_or(0);
    let end = calls
        .iter()
        .filter_map(|c| {
            Some(c["timestamp_ms"].as_i64()? + c["timing_ms"].as_f64().unwrap_or(0.0) as i64)
        })
        .max()
        .unwrap_or(start)
        .max(start + 1);
    let span = (end - start) as f64;
    html! {
        ol.waterfall {
            @for call in calls {
                @let at = call["timestamp_ms"].as_i64().unwrap_or(start) - start;
                @let took = call["timing_ms"].as_f64().unwrap_or(0.0);
                // Ten steps of 10%: the stylesheet has a class per step
                // (the CSP allows no inline styles).
                @let left = ((at as f64 / span) * 10.0).floor().clamp(0.0, 9.0) as u32;
                @let width = ((took / span) * 10.0).ceil().clamp(1.0, 10.0 - left as f64) as u32;
                li {
                    details {
                        summary {
                            span.method { (call["method"].as_str().unwrap_or_default()) }
                            span.status { (call["status"].as_u64().map(|s| s.to_string()).unwrap_or_else(|| call["state"].as_str().unwrap_or("").to_string())) }
                            span.callurl { (call["url"].as_str().unwrap_or_default()) }
                            span class={ "bar at" (left) " w" (width) } title={ (took.round()) " ms" } {}
                        }
                        h4 { "Request headers" } pre { (shown(&call["request_headers"])) }
                        @if let Some(body) = call["request_body"].as_str() { h4 { "Request body" } pre { (cut(body)) } }
                        h4 { "Response headers" } pre { (shown(&call["response_headers"])) }
                        @if let Some(body) = call["response_body"].as_str() { h4 { "Response body" } pre { (cut(body)) } }
                    }
                }
            }
        }
    }
}

fn shown(value: &Value) -> String {
    cut(&serde_json::to_string_pretty(value).unwrap_or_default()).to_string()
}

fn cut(text: &str) -> String {
    if text.len() <= SHOWN_CHARS {
        return text.to_string();
    }
    let mut end = SHOWN_CHARS;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes more)", &text[..end], text.len() - end)
}

/// An action's screenshot, as the history keeps it (WebP).
pub(crate) async fn screenshot(
    State(ui): State<Ui>,
    Signed { viewer, .. }: Signed,
    Path((action_id, which)): Path<(String, String)>,
) -> Response {
    if which != "before" && which != "after" {
        return failure(StatusCode::NOT_FOUND, "screenshots are before or after");
    }
    match ui
        .run(
            &viewer,
            "history_action_screenshot",
            json!({ "id": action_id, "which": which }),
        )
        .await
    {
        Ok(Output::Bytes { mime, bytes }) => (
            [
                (header::CONTENT_TYPE, mime),
                (header::CACHE_CONTROL, "private, max-age=3600"),
            ],
            bytes,
        )
            .into_response(),
        Ok(_) => failure(StatusCode::INTERNAL_SERVER_ERROR, "not an image"),
        Err(e) => engine_failure(&e),
    }
}

/// The session as one file with its screenshots, for `wabp view`.
pub(crate) async fn export(
    State(ui): State<Ui>,
    Signed { viewer, .. }: Signed,
    Path(session_id): Path<String>,
) -> Response {
    match ui
        .json(
            &viewer,
            "history_export",
            json!({ "id": session_id, "screenshots": true }),
        )
        .await
    {
        Ok(export) => {
            let disposition = format!("attachment; filename=\"wabp-{session_id}.json\"");
            let mut response = axum::Json(export).into_response();
            if let Ok(value) = axum::http::HeaderValue::from_str(&disposition) {
                response
                    .headers_mut()
                    .insert(header::CONTENT_DISPOSITION, value);
            }
            response
        }
        Err(e) => engine_failure(&e),
    }
}
