//! The pages: the layout, sign-in, sessions and live tabs, and a tab's live
//! view with its dialog and take-over controls.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Form, Json};
use maud::{DOCTYPE, Markup, html};
use serde::Deserialize;
use serde_json::{Value, json};
use wabp_core::engine::viewer::{HumanInput, PendingPrompt, TabOverview, TabState};

use crate::Signed;
use crate::login::{Viewer, set_cookie};
use crate::{Ui, html, status_of};

/// htmx without `eval` (the CSP has no `unsafe-eval`), without its inline
/// indicator styles (no `unsafe-inline`) and without a history cache (pages
/// hold live, per-person state).
const HTMX_CONFIG: &str = r#"{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"historyCacheSize":0,"refreshOnHistoryMiss":true}"#;

/// Every page: scripts and styles from `/ui/assets`, a header with who is
/// signed in.
pub(crate) fn layout(title: &str, viewer: Option<&Viewer>, body: Markup) -> Markup {
    let version = env!("CARGO_PKG_VERSION");
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="htmx-config" content=(HTMX_CONFIG);
                title { (title) " · wabp" }
                link rel="stylesheet" href={ "/ui/assets/ui-" (version) ".css" };
                script src="/ui/assets/htmx-2.0.11.min.js" {}
                script src="/ui/assets/htmx-ext-sse-2.2.4.min.js" {}
                script src={ "/ui/assets/ui-" (version) ".js" } defer {}
            }
            body {
                header.top {
                    a.brand href="/ui/" { "wabp" }
                    @if let Some(viewer) = viewer {
                        span.who { "signed in as " (viewer.who) }
                        @if viewer.any_user {
                            form.as hx-post="/ui/as" hx-swap="none" {
                                label { "sessions of user "
                                    input name="user" placeholder="(no user)"
                                        value=(viewer.as_user.as_deref().unwrap_or(""));
                                }
                                button { "show" }
                            }
                        }
                        button.link hx-post="/ui/logout" hx-swap="none" { "sign out" }
                    }
                }
                div #flash role="status" {}
                main { (body) }
            }
        }
    }
}

/// A page that says what went wrong, with `status`.
pub(crate) fn failure(status: StatusCode, message: &str) -> Response {
    let page = layout(
        "error",
        None,
        html! { h1 { "Not shown" } p.error { (message) } p { a href="/ui/" { "Back to the sessions" } } },
    );
    (status, html(page)).into_response()
}

pub(crate) fn engine_failure(error: &wabp_core::Error) -> Response {
    failure(status_of(error), &error.message)
}

/// A failed change from a page: the status and message htmx shows in the
/// flash line (`ui.js`).
pub(crate) fn refused(error: &wabp_core::Error) -> Response {
    (
        status_of(error),
        Json(json!({ "error": error.message, "code": error.code })),
    )
        .into_response()
}

#[derive(Deserialize)]
pub(crate) struct KeyQuery {
    key: Option<String>,
}

pub(crate) async fn login_page(
    State(ui): State<Ui>,
    headers: HeaderMap,
    Query(query): Query<KeyQuery>,
) -> Response {
    // The link `wabp serve` prints signs its opener in at once.
    if let Some(key) = query.key {
        if !ui.needs_token() && ui.0.logins.key_matches(&key) {
            return signed_in(&ui, &headers, None, false);
        }
        return failure(
            StatusCode::UNAUTHORIZED,
            "that key is not this engine's: open the link `wabp serve` printed",
        );
    }
    let what = if ui.needs_token() {
        "token"
    } else {
        "key (printed by wabp serve)"
    };
    html(layout(
        "sign in",
        None,
        html! {
            h1 { "Sign in" }
            form.login hx-post="/ui/login" hx-swap="none" {
                label { "Your " (what)
                    input type="password" name="secret" autocomplete="current-password" required autofocus;
                }
                button { "Sign in" }
            }
        },
    ))
}

#[derive(Deserialize)]
pub(crate) struct LoginForm {
    secret: String,
}

pub(crate) async fn login(
    State(ui): State<Ui>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let secret = form.secret.trim();
    if !ui.needs_token() {
        if ui.0.logins.key_matches(secret) {
            return signed_in(&ui, &headers, None, true);
        }
        return refused(&wabp_core::Error::new(
            wabp_core::ErrorCode::Unauthorized,
            "that is not this engine's UI key (wabp serve printed it)",
        ));
    }
    match ui.0.tokens.authenticate(Some(secret)) {
        Ok(grant) => signed_in(&ui, &headers, Some(grant), true),
        Err(e) => refused(&e),
    }
}

/// Signs the person in and sends them to the sessions.
fn signed_in(
    ui: &Ui,
    headers: &HeaderMap,
    grant: Option<wabp_api::Grant>,
    from_htmx: bool,
) -> Response {
    let (grant, who) = match grant {
        Some(grant) => {
            let who = match grant.user() {
                Some(user) => format!("user {user}"),
                None => "admin".to_string(),
            };
            (grant, who)
        }
        None => match ui.0.tokens.authenticate(None) {
            Ok(grant) => (grant, "local".to_string()),
            Err(e) => return refused(&e),
        },
    };
    let any_user = grant.user().is_none();
    let Some(id) = ui.0.logins.sign_in(grant, who, any_user) else {
        return failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no randomness for a login id",
        );
    };
    let cookie = set_cookie(headers, Some(&id));
    let mut response = if from_htmx {
        StatusCode::NO_CONTENT.into_response()
    } else {
        crate::redirect("/ui/")
    };
    let out = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        out.insert(header::SET_COOKIE, value);
    }
    out.insert("hx-redirect", HeaderValue::from_static("/ui/"));
    response
}

pub(crate) async fn logout(State(ui): State<Ui>, headers: HeaderMap) -> Response {
    if let Some((id, _)) = ui.0.logins.viewer(&headers) {
        ui.0.logins.sign_out(&id);
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Ok(value) = HeaderValue::from_str(&set_cookie(&headers, None)) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
        .headers_mut()
        .insert("hx-redirect", HeaderValue::from_static("/ui/login"));
    response
}

#[derive(Deserialize)]
pub(crate) struct AsForm {
    user: String,
}

pub(crate) async fn view_as(
    State(ui): State<Ui>,
    Signed { login: id, viewer }: Signed,
    Form(form): Form<AsForm>,
) -> Response {
    let user = Some(form.user.trim().to_string()).filter(|u| !u.is_empty());
    if !viewer.any_user && user.is_some() {
        return refused(&wabp_core::Error::new(
            wabp_core::ErrorCode::Forbidden,
            "your token shows only your own sessions",
        ));
    }
    // The name must be one a request could give.
    if let Err(e) = viewer.grant.caller(user.as_deref()) {
        return refused(&e);
    }
    ui.0.logins.view_as(&id, user);
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert("hx-refresh", HeaderValue::from_static("true"));
    response
}

/// The sessions page: the caller's live tabs and the recorded sessions.
pub(crate) async fn home(State(ui): State<Ui>, Signed { viewer, .. }: Signed) -> Response {
    let tabs = tab_rows(&ui, &viewer).await;
    let sessions = match ui.json(&viewer, "history_sessions", json!({})).await {
        Ok(value) => value["sessions"].as_array().cloned().unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let current =
        ui.0.services
            .history
            .as_ref()
            .and_then(|h| h.current_session_id());
    let mut summaries = Vec::new();
    for session in sessions.iter().rev() {
        let id = session["id"].as_str().unwrap_or_default().to_string();
        let actions = ui
            .json(&viewer, "history_actions", json!({ "session_id": id }))
            .await
            .map(|v| v["actions"].as_array().cloned().unwrap_or_default())
            .unwrap_or_default();
        summaries.push((session.clone(), actions));
    }
    let body = html! {
        h1 { "Tabs" }
        p.hint { "Live: tabs open, close, navigate and act as you watch." }
        div hx-ext="sse" sse-connect="/ui/live/tabs" {
            table.tabs {
                thead { tr { th { "Tab" } th { "State" } th { "Agent task" } th { "Address" } } }
                tbody #tabs sse-swap="tabs" { (tabs) }
            }
        }
        h1 { "Sessions" }
        table.sessions {
            thead { tr { th { "Session" } th { "Started" } th { "Ended" } th { "Actions" } th { "Tabs" } th { "Errors" } } }
            tbody {
                @for (session, actions) in &summaries {
                    @let id = session["id"].as_str().unwrap_or_default();
                    @let tabs = distinct(actions.iter().filter_map(|a| a["tab_id"].as_str()));
                    @let errors = actions.iter().filter(|a| !a["error"].is_null()).count();
                    tr {
                        td { a href={ "/ui/sessions/" (id) } { (id) }
                            @if current.as_deref() == Some(id) { " " span.badge.running { "now" } } }
                        td { (clock(session["started_ms"].as_i64())) }
                        td { (clock(session["ended_ms"].as_i64())) }
                        td { (actions.len()) }
                        td.session-tabs {
                            @for tab in tabs.iter().take(6) {
                                a href={ "/ui/sessions/" (id) "?tab=" (tab) } { (tab.split('.').next().unwrap_or(tab)) } " "
                            }
                            @if tabs.len() > 6 { "and " (tabs.len() - 6) " more" }
                        }
                        td { @if errors > 0 { span.badge.broken { (errors) } } @else { "0" } }
                    }
                }
            }
        }
    };
    html(layout("sessions", Some(&viewer), body))
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

/// `YYYY-MM-DD HH:MM:SS` (UTC) of milliseconds since the epoch.
pub(crate) fn clock(ms: Option<i64>) -> String {
    let Some(ms) = ms else {
        return "—".into();
    };
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to a civil date (proleptic Gregorian), after Howard Hinnant.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The caller's tabs as table rows (also what the live stream swaps in).
pub(crate) async fn tab_rows(ui: &Ui, viewer: &Viewer) -> Markup {
    let overview = match viewer.caller() {
        Ok(caller) => ui.0.engine.tab_overview(&caller).await,
        Err(e) => Err(e),
    };
    let tasks = ui
        .json(viewer, "agent_tasks", json!({}))
        .await
        .map(|v| v["tasks"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default();
    match overview {
        Ok(tabs) if tabs.is_empty() => html! { tr { td colspan="4" .hint { "No tabs open." } } },
        Ok(tabs) => html! {
            @for tab in &tabs {
                @let task = tasks.iter().rev().find(|t| t["tab_id"].as_str() == Some(tab.id.as_str()));
                tr data-tab=(tab.id) {
                    td { a href={ "/ui/tabs/" (tab.id) } { (label(&tab.title, &tab.url)) } }
                    td { (state_badge(tab)) }
                    td {
                        @if let Some(task) = task {
                            span.task { (task["task"].as_str().unwrap_or_default()) }
                            " " span.badge { (task["status"].as_str().unwrap_or_default()) }
                        }
                    }
                    td.url title=(tab.url) { (shortened(&tab.url)) }
                }
            }
        },
        Err(e) => html! { tr { td colspan="4" .error { (e.message) } } },
    }
}

/// A tab's name: its title, else its address (shortened).
fn label(title: &str, url: &str) -> String {
    if title.trim().is_empty() {
        shortened(url)
    } else {
        shortened(title)
    }
}

/// At most 120 characters, with an ellipsis (`data:` URLs hold whole pages).
pub(crate) fn shortened(text: &str) -> String {
    const MAX: usize = 120;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

pub(crate) fn state_badge(tab: &TabOverview) -> Markup {
    let (class, text) = match tab.state {
        TabState::Paused => ("paused", "paused"),
        TabState::Running => ("running", "running"),
        TabState::Loading => ("running", "loading"),
        TabState::DialogOpen => ("dialog", "dialog open"),
        TabState::Broken => ("broken", "broken, repaired on next use"),
    };
    html! {
        span class={ "badge " (class) } data-state=(text) { (text) }
        @if let Some(by) = &tab.taken_over_by { " " span.badge.human { "taken over by " (by) } }
    }
}

/// A tab's live view: its frame, its state, its dialog and take-over.
pub(crate) async fn tab_page(
    State(ui): State<Ui>,
    Signed { viewer, .. }: Signed,
    Path(tab_id): Path<String>,
) -> Response {
    let state = match tab_state(&ui, &viewer, &tab_id).await {
        Ok(state) => state,
        Err(e) => return engine_failure(&e),
    };
    let session =
        ui.0.services
            .history
            .as_ref()
            .and_then(|h| h.current_session_id());
    let body = html! {
        div hx-ext="sse" sse-connect={ "/ui/tabs/" (tab_id) "/live" } {
            div #state sse-swap="state" { (state) }
        }
        div #view .view tabindex="0" data-tab=(tab_id)
            data-frames={ "/ui/tabs/" (tab_id) "/frames" }
            data-input={ "/ui/tabs/" (tab_id) "/input" } {
            img #frame alt="the tab's latest frame";
        }
        p.hint { "Frames come from each action's after-screenshot, and from a screencast while the page runs. Take the tab over to click and type in it." }
        @if let Some(session) = session {
            p { a href={ "/ui/sessions/" (session) "?tab=" (tab_id) } { "Timeline of this tab" } }
        }
    };
    html(layout("live view", Some(&viewer), body))
}

/// The state panel: address, state, the dialog's form, take-over buttons.
pub(crate) async fn tab_state(ui: &Ui, viewer: &Viewer, tab_id: &str) -> wabp_core::Result<Markup> {
    let caller = viewer.caller()?;
    let tab = ui.0.engine.tab_overview_of(&caller, tab_id).await?;
    let taken = tab.taken_over_by.is_some();
    Ok(html! {
        div #tab-state data-taken-over=(taken) data-state=(serde_json::to_value(tab.state).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()) {
            h1 { (label(&tab.title, &tab.url)) }
            p { span.url title=(tab.url) { (shortened(&tab.url)) } " " (state_badge(&tab)) }
            @if let Some(failure) = &tab.failure { p.error { (failure) } }
            div.controls {
                @if taken {
                    button hx-post={ "/ui/tabs/" (tab.id) "/handback" } hx-swap="none" { "Hand back to the agent" }
                } @else {
                    button hx-post={ "/ui/tabs/" (tab.id) "/takeover" } hx-swap="none" { "Take over" }
                }
            }
            @if let Some(dialog) = &tab.dialog {
                form.dialog hx-post={ "/ui/tabs/" (tab.id) "/dialog" } hx-swap="none" {
                    p { strong { (dialog.dialog_type.as_deref().unwrap_or("dialog")) } ": " span.message { (dialog.message.as_deref().unwrap_or("")) } }
                    @if dialog.dialog_type.as_deref() == Some("prompt") {
                        input name="text" value=(dialog.default_prompt.as_deref().unwrap_or(""));
                    }
                    button name="accept" value="true" { "Accept" }
                    button name="accept" value="false" { "Dismiss" }
                }
            }
            @for prompt in &tab.prompts {
                (prompt_form(&tab.id, prompt))
            }
        }
    })
}

/// A `<select>`, picker or file chooser, as a form that answers it.
fn prompt_form(tab_id: &str, prompt: &PendingPrompt) -> Markup {
    let action = format!("/ui/tabs/{tab_id}/prompt");
    match prompt {
        PendingPrompt::Select {
            id,
            multiple,
            options,
        } => html! {
            form.prompt.select hx-post=(action) hx-swap="none" data-prompt=(id) {
                p { strong { "The page opened a list" } ": choose" @if *multiple { " one or more" } }
                input type="hidden" name="kind" value="select";
                input type="hidden" name="id" value=(id);
                select name="index" multiple[*multiple] {
                    @for (position, option) in options.as_array().into_iter().flatten().enumerate() {
                        option value=(option["index"].as_u64().unwrap_or(position as u64))
                            selected[option["selected"] == json!(true)]
                            disabled[option["disabled"] == json!(true)] {
                            (option["label"].as_str().unwrap_or(""))
                        }
                    }
                }
                button name="answer" value="choose" { "Choose" }
                button name="answer" value="cancel" { "Cancel" }
            }
        },
        PendingPrompt::Picker { id, input_type } => html! {
            form.prompt.picker hx-post=(action) hx-swap="none" data-prompt=(id) {
                p { strong { "The page opened a " (input_type) " picker" } }
                input type="hidden" name="kind" value=(if input_type == "color" { "color" } else { "datetime" });
                input type="hidden" name="id" value=(id);
                input name="value" type=(input_type);
                button name="answer" value="choose" { "Set" }
                button name="answer" value="cancel" { "Cancel" }
            }
        },
        PendingPrompt::FileChooser { id, multiple } => html! {
            form.prompt.files hx-post=(action) hx-swap="none" data-prompt=(id) {
                p { strong { "The page asks for " @if *multiple { "files" } @else { "a file" } } " (paths on the engine's machine, one per line)" }
                input type="hidden" name="kind" value="file_chooser";
                input type="hidden" name="id" value=(id);
                textarea name="paths" rows="2" {}
                button name="answer" value="choose" { "Give" }
                button name="answer" value="cancel" { "Cancel" }
            }
        },
    }
}

/// Answers a `<select>`, picker or file chooser from its form (fields:
/// kind, id, answer = choose|cancel, index… / value / paths).
pub(crate) async fn answer_prompt(
    State(ui): State<Ui>,
    Signed { viewer, .. }: Signed,
    Path(tab_id): Path<String>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let (Some(kind), Some(id)) = (field("kind"), field("id")) else {
        return refused(&wabp_core::Error::invalid("kind and id are required"));
    };
    let cancel = field("answer") == Some("cancel");
    let (operation, input) = match kind {
        "select" => {
            let mut indices = Vec::new();
            for (_, v) in fields.iter().filter(|(k, _)| k == "index") {
                match v.parse::<u64>() {
                    Ok(i) => indices.push(i),
                    Err(_) => {
                        return refused(&wabp_core::Error::invalid(format!(
                            "index must be a number, not {v:?}"
                        )));
                    }
                }
            }
            (
                "select",
                json!({ "id": id, "indices": indices, "cancel": cancel }),
            )
        }
        "datetime" | "color" => (
            if kind == "color" {
                "color_picker"
            } else {
                "datetime_picker"
            },
            json!({ "id": id, "value": field("value"), "cancel": cancel }),
        ),
        "file_chooser" => {
            let files: Vec<&str> = field("paths")
                .unwrap_or("")
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            (
                "file_chooser",
                json!({ "id": id, "files": files, "cancel": cancel }),
            )
        }
        other => {
            return refused(&wabp_core::Error::invalid(format!(
                "kind must be select, datetime, color or file_chooser, not {other:?}"
            )));
        }
    };
    match ui.run(&viewer, operation, input).await {
        Ok(_) => {
            record(
                &ui,
                &viewer,
                &tab_id,
                "prompt_answered_in_ui",
                json!({ "prompt": kind, "cancelled": cancel, "by": viewer.who }),
            )
            .await;
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => refused(&e),
    }
}

#[derive(Deserialize)]
pub(crate) struct DialogForm {
    accept: String,
    #[serde(default)]
    text: Option<String>,
}

pub(crate) async fn answer_dialog(
    State(ui): State<Ui>,
    Signed { viewer, .. }: Signed,
    Path(tab_id): Path<String>,
    Form(form): Form<DialogForm>,
) -> Response {
    let (operation, input) = match form.accept.as_str() {
        "true" => (
            "dialog_accept",
            json!({ "tab_id": tab_id, "prompt_text": form.text }),
        ),
        "false" => ("dialog_dismiss", json!({ "tab_id": tab_id })),
        other => {
            return refused(&wabp_core::Error::invalid(format!(
                "accept must be true or false, not {other:?}"
            )));
        }
    };
    match ui.run(&viewer, operation, input).await {
        Ok(_) => {
            record(
                &ui,
                &viewer,
                &tab_id,
                "dialog_answered_in_ui",
                json!({ "accepted": form.accept == "true", "by": viewer.who }),
            )
            .await;
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => refused(&e),
    }
}

pub(crate) async fn take_over(
    State(ui): State<Ui>,
    Signed { viewer, .. }: Signed,
    Path(tab_id): Path<String>,
) -> Response {
    hold(&ui, &viewer, &tab_id, true).await
}

pub(crate) async fn hand_back(
    State(ui): State<Ui>,
    Signed { viewer, .. }: Signed,
    Path(tab_id): Path<String>,
) -> Response {
    hold(&ui, &viewer, &tab_id, false).await
}

/// Takes the tab over for the viewer (`take`), or hands it back; recorded.
async fn hold(ui: &Ui, viewer: &Viewer, tab_id: &str, take: bool) -> Response {
    let caller = match viewer.caller() {
        Ok(caller) => caller,
        Err(e) => return refused(&e),
    };
    let (done, kind) = match take {
        true => (
            ui.0.engine.take_over(&caller, tab_id, &viewer.who).await,
            "taken_over",
        ),
        false => (ui.0.engine.hand_back(&caller, tab_id).await, "handed_back"),
    };
    match done {
        Ok(()) => {
            record(ui, viewer, tab_id, kind, json!({ "by": viewer.who })).await;
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => refused(&e),
    }
}

/// A person's input on a tab they took over (sent by `ui.js`).
pub(crate) async fn input(
    State(ui): State<Ui>,
    Signed { viewer, .. }: Signed,
    Path(tab_id): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let input: HumanInput = match serde_json::from_slice(&body) {
        Ok(input) => input,
        Err(e) => {
            return refused(&wabp_core::Error::invalid(format!("bad input event: {e}")));
        }
    };
    let done = match viewer.caller() {
        Ok(caller) => ui.0.engine.human_input(&caller, &tab_id, &input).await,
        Err(e) => Err(e),
    };
    match done {
        Ok(()) => {
            if let Some(summary) = input.summary() {
                let mut data = summary;
                data["by"] = Value::String(viewer.who.clone());
                record(&ui, &viewer, &tab_id, "human_input", data).await;
            }
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => refused(&e),
    }
}

/// Records what a person did in the history, under the tab and the
/// caller's user (the timeline shows it among the agent's actions).
async fn record(ui: &Ui, viewer: &Viewer, tab_id: &str, kind: &str, data: Value) {
    let Some(history) = &ui.0.services.history else {
        return;
    };
    let user_id = viewer
        .caller()
        .ok()
        .and_then(|c| c.user_id().map(str::to_string));
    let event = wabp_history::NewEvent {
        tab_id: tab_id.to_string(),
        event_type: kind.to_string(),
        virtual_time_ms: None,
        data,
        user_id,
    };
    if let Err(e) = history.record_events(None, vec![event]).await {
        tracing::warn!("recording {kind} in the history: {e}");
    }
}
