//! An exported session (`GET /history/sessions/{id}/export?screenshots=true`,
//! or the timeline's download) shown without an engine or a browser:
//! `wabp view FILE` serves the same timeline from the file, on loopback,
//! behind the same guard and a one-time key.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;
use maud::html;
use serde_json::Value;

use crate::guard::UiGuard;
use crate::login::{Logins, set_cookie};
use crate::pages::{failure, layout};
use crate::timeline::{self, ActionData, Filter, SessionData};

/// An export, read and checked.
pub struct Export {
    session_id: String,
    data: SessionData,
    calls: Vec<Value>,
    /// Action id → (before, after) WebP bytes.
    screenshots: HashMap<String, (Option<Vec<u8>>, Option<Vec<u8>>)>,
}

impl Export {
    /// Reads an export document; says what is wrong with one that isn't.
    pub fn parse(text: &str) -> Result<Export, String> {
        let mut doc: Value =
            serde_json::from_str(text).map_err(|e| format!("not a JSON document: {e}"))?;
        let session = doc["session"].take();
        let Some(session_id) = session["id"].as_str().map(str::to_string) else {
            return Err(
                "not a session export: it has no session.id (GET /api/v1/history/sessions/{id}/export?screenshots=true makes one)"
                    .into(),
            );
        };
        let list = |doc: &mut Value, field: &str| -> Result<Vec<Value>, String> {
            match doc[field].take() {
                Value::Array(items) => Ok(items),
                Value::Null => Ok(Vec::new()),
                _ => Err(format!("{field} must be a list")),
            }
        };
        let actions = list(&mut doc, "actions")?;
        let events = list(&mut doc, "events")?;
        let calls = list(&mut doc, "network_calls")?;
        let mut screenshots = HashMap::new();
        if let Value::Object(shots) = doc["screenshots"].take() {
            let decode = |v: &Value| {
                v.as_str()
                    .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
            };
            for (id, shot) in shots {
                screenshots.insert(id, (decode(&shot["before"]), decode(&shot["after"])));
            }
        }
        Ok(Export {
            session_id,
            data: SessionData {
                session,
                actions,
                events,
            },
            calls,
            screenshots,
        })
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// How many actions it holds, and how many of them have screenshots.
    pub fn counts(&self) -> (usize, usize) {
        (self.data.actions.len(), self.screenshots.len())
    }

    fn action(&self, id: &str) -> Option<ActionData> {
        let mut action = self
            .data
            .actions
            .iter()
            .find(|a| a["id"].as_str() == Some(id))?
            .clone();
        // Paths on the machine that recorded it mean nothing here.
        let (before, after) = self.screenshots.get(id).cloned().unwrap_or_default();
        if before.is_none() {
            action["screenshot_before"] = Value::Null;
        }
        if after.is_none() {
            action["screenshot_after"] = Value::Null;
        }
        Some(ActionData {
            events: self
                .data
                .events
                .iter()
                .filter(|e| e["action_id"].as_str() == Some(id))
                .cloned()
                .collect(),
            calls: self
                .calls
                .iter()
                .filter(|c| c["action_id"].as_str() == Some(id))
                .cloned()
                .collect(),
            live_calls: false,
            step: None,
            action,
        })
    }
}

#[derive(Clone)]
struct Offline {
    export: Arc<Export>,
    logins: Arc<Logins>,
}

/// The viewer's routes for `export`. The returned key signs a person in
/// (`/ui/login?key=`).
pub fn router(export: Export, guard: UiGuard) -> (Router, String) {
    let logins = Arc::new(Logins::new());
    let key = logins.key().to_string();
    let state = Offline {
        export: Arc::new(export),
        logins,
    };
    let guard = Arc::new(guard);
    let router = Router::new()
        .route(
            "/ui/",
            get(|State(s): State<Offline>| async move {
                (
                    StatusCode::SEE_OTHER,
                    [(
                        header::LOCATION,
                        format!("/ui/sessions/{}", s.export.session_id),
                    )],
                )
                    .into_response()
            }),
        )
        .route("/ui/login", get(login))
        .route("/ui/assets/{file}", get(crate::asset))
        .route("/ui/sessions/{id}", get(page))
        .route("/ui/actions/{id}", get(detail))
        .route("/ui/actions/{id}/shot/{which}", get(screenshot))
        .fallback(|| async { failure(StatusCode::NOT_FOUND, "no such page in this export") })
        .layer(axum::middleware::from_fn(move |req, next| {
            crate::guard::ui_only(guard.clone(), req, next)
        }))
        .with_state(state);
    (router, key)
}

#[derive(serde::Deserialize)]
struct KeyQuery {
    key: Option<String>,
}

async fn login(
    State(s): State<Offline>,
    headers: HeaderMap,
    Query(query): Query<KeyQuery>,
) -> Response {
    if !query.key.is_some_and(|k| s.logins.key_matches(&k)) {
        return failure(
            StatusCode::UNAUTHORIZED,
            "open the link `wabp view` printed (it carries the key)",
        );
    }
    let Ok(grant) = wabp_api::Tokens::new(None).authenticate(None) else {
        return failure(StatusCode::INTERNAL_SERVER_ERROR, "no grant");
    };
    let Some(id) = s.logins.sign_in(grant, "viewer".into(), false) else {
        return failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no randomness for a login id",
        );
    };
    let mut response = crate::redirect("/ui/");
    if let Ok(value) = HeaderValue::from_str(&set_cookie(&headers, Some(&id))) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

fn signed_in(s: &Offline, headers: &HeaderMap) -> Result<(), Response> {
    match s.logins.viewer(headers) {
        Some(_) => Ok(()),
        None => Err(failure(
            StatusCode::UNAUTHORIZED,
            "open the link `wabp view` printed (it carries the key)",
        )),
    }
}

async fn page(
    State(s): State<Offline>,
    headers: HeaderMap,
    Path(session_id): Path<String>,
    Query(filter): Query<Filter>,
) -> Response {
    if let Err(r) = signed_in(&s, &headers) {
        return r;
    }
    if session_id != s.export.session_id {
        return failure(StatusCode::NOT_FOUND, "this export holds another session");
    }
    let chosen = timeline::chosen_action(&s.export.data, &filter);
    let detail = chosen.as_deref().and_then(|id| {
        let action = s.export.action(id)?;
        Some(timeline::render_detail(&action, &|which| {
            format!("/ui/actions/{id}/shot/{which}")
        }))
    });
    let body = timeline::render_page(
        &session_id,
        &s.export.data,
        &filter,
        chosen.as_deref(),
        detail,
        false,
    );
    crate::html(layout(
        "timeline (export)",
        None,
        html! { p.hint { "An exported session, shown from its file." } (body) },
    ))
}

async fn detail(
    State(s): State<Offline>,
    headers: HeaderMap,
    Path(action_id): Path<String>,
) -> Response {
    if let Err(r) = signed_in(&s, &headers) {
        return r;
    }
    match s.export.action(&action_id) {
        Some(action) => timeline::detail_answer(
            &headers,
            None,
            timeline::render_detail(&action, &|which| {
                format!("/ui/actions/{action_id}/shot/{which}")
            }),
        ),
        None => failure(StatusCode::NOT_FOUND, "no such action in this export"),
    }
}

async fn screenshot(
    State(s): State<Offline>,
    headers: HeaderMap,
    Path((action_id, which)): Path<(String, String)>,
) -> Response {
    if let Err(r) = signed_in(&s, &headers) {
        return r;
    }
    let shot = s
        .export
        .screenshots
        .get(&action_id)
        .and_then(|(before, after)| match which.as_str() {
            "before" => before.clone(),
            "after" => after.clone(),
            _ => None,
        });
    match shot {
        Some(bytes) => ([(header::CONTENT_TYPE, "image/webp")], bytes).into_response(),
        None => failure(StatusCode::NOT_FOUND, "this export has no such screenshot"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_that_are_not_say_why() {
        let error = |text: &str| Export::parse(text).err().unwrap_or_default();
        assert!(error("nope").contains("not a JSON document"));
        assert!(error("{}").contains("session.id"));
        assert!(error(r#"{"session":{"id":"s"},"actions":3}"#).contains("actions must be a list"));
        let export = Export::parse(
            r#"{"session":{"id":"s"},"actions":[{"id":"a","screenshot_after":"/x.webp"}],"events":[],"network_calls":[],
                "screenshots":{"a":{"after":"UklGRg=="}}}"#,
        )
        .unwrap();
        assert_eq!(export.counts(), (1, 1));
        let action = export.action("a").unwrap();
        assert!(action.action["screenshot_before"].is_null());
        assert!(!action.action["screenshot_after"].is_null());
    }
}
