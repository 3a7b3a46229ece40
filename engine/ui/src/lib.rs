//! `wabp-ui`: the engine's web UI at `/ui/`, on the engine's own port.
//!
//! Server-rendered HTML (maud) with htmx 2 and its SSE extension, vendored
//! and embedded (`assets/`, `VENDOR.md`): no build step, no script from
//! elsewhere, no inline script. Every read and every change goes through
//! the same catalogue operations as REST and MCP, run as the signed-in
//! person's caller, so the UI sees exactly what their token sees; the
//! engine's viewer methods (`wabp_core::engine::viewer`) add tab states,
//! frames, screencasts and take-over, narrowed by the same caller.
//!
//! - `guard.rs`: the UI's door (its own pages and a person only);
//! - `login.rs`: sign-in by token or one-time key, the login cookie;
//! - `pages.rs`: the layout, sessions and live tabs, the live view;
//! - `timeline.rs`: a session's actions with screenshots, events, network;
//! - `live.rs`: the event streams (tab list, tab state, frames);
//! - `offline.rs`: an exported session shown without an engine (`wabp view`).

pub mod guard;
mod live;
pub mod login;
pub mod offline;
mod pages;
mod timeline;

use std::sync::Arc;

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;
use wabp_api::{Catalogue, Output, Services, Tokens};
use wabp_core::Engine;

pub use guard::UiGuard;
use login::{Logins, Viewer};

/// The web UI: its logins and what it reads from.
#[derive(Clone)]
pub struct Ui(Arc<Inner>);

struct Inner {
    services: Services,
    catalogue: Arc<Catalogue>,
    engine: Arc<Engine>,
    tokens: Arc<Tokens>,
    logins: Logins,
    /// Told when the server shuts down: open event streams end.
    closing: tokio::sync::watch::Sender<bool>,
}

impl Ui {
    pub fn new(
        services: Services,
        catalogue: Arc<Catalogue>,
        engine: Arc<Engine>,
        tokens: Arc<Tokens>,
    ) -> Ui {
        Ui(Arc::new(Inner {
            services,
            catalogue,
            engine,
            tokens,
            logins: Logins::new(),
            closing: tokio::sync::watch::channel(false).0,
        }))
    }

    /// The one-time key that signs a person in when the engine has no
    /// tokens (`/ui/login?key=`).
    pub fn key(&self) -> &str {
        self.0.logins.key()
    }

    /// Whether signing in takes a token (else the key).
    pub fn needs_token(&self) -> bool {
        self.0.tokens.required()
    }

    /// Ends every open event stream (a graceful shutdown waits for them).
    pub fn close_streams(&self) {
        self.0.closing.send_replace(true);
    }

    /// `/ui` and everything under it, behind [`UiGuard`].
    pub fn router(&self, guard: UiGuard) -> Router {
        let guard = Arc::new(guard);
        Router::new()
            .route("/ui", get(|| async { redirect("/ui/") }))
            .route("/ui/", get(pages::home))
            .route("/ui/login", get(pages::login_page).post(pages::login))
            .route("/ui/logout", post(pages::logout))
            .route("/ui/as", post(pages::view_as))
            .route("/ui/assets/{file}", get(asset))
            .route("/ui/live/tabs", get(live::tabs))
            .route("/ui/tabs/{tab_id}", get(pages::tab_page))
            .route("/ui/tabs/{tab_id}/live", get(live::tab_state))
            .route("/ui/tabs/{tab_id}/frames", get(live::frames))
            .route("/ui/tabs/{tab_id}/dialog", post(pages::answer_dialog))
            .route("/ui/tabs/{tab_id}/prompt", post(pages::answer_prompt))
            .route("/ui/tabs/{tab_id}/takeover", post(pages::take_over))
            .route("/ui/tabs/{tab_id}/handback", post(pages::hand_back))
            .route("/ui/tabs/{tab_id}/input", post(pages::input))
            .route("/ui/sessions/{id}", get(timeline::page))
            .route("/ui/sessions/{id}/export", get(timeline::export))
            .route("/ui/actions/{id}", get(timeline::detail))
            .route("/ui/actions/{id}/shot/{which}", get(timeline::screenshot))
            .fallback(|| async {
                pages::failure(StatusCode::NOT_FOUND, "no such page in the web UI")
            })
            .layer(axum::middleware::from_fn(move |req, next| {
                guard::ui_only(guard.clone(), req, next)
            }))
            .with_state(self.clone())
    }

    /// The person signed in on this request, or the answer that sends them
    /// to sign in.
    fn viewer(&self, headers: &HeaderMap) -> Result<(String, Viewer), Response> {
        self.0.logins.viewer(headers).ok_or_else(|| {
            if headers.contains_key("hx-request") {
                let mut response = StatusCode::UNAUTHORIZED.into_response();
                response
                    .headers_mut()
                    .insert("hx-redirect", HeaderValue::from_static("/ui/login"));
                response
            } else {
                redirect("/ui/login")
            }
        })
    }

    /// Runs catalogue operation `name` as the viewer's caller.
    async fn run(&self, viewer: &Viewer, name: &str, input: Value) -> wabp_core::Result<Output> {
        let caller = viewer.caller()?;
        let operation = self.0.catalogue.operation(name)?;
        operation.run(self.0.services.ctx(caller), input).await
    }

    /// [`Ui::run`] for an operation that answers JSON.
    async fn json(&self, viewer: &Viewer, name: &str, input: Value) -> wabp_core::Result<Value> {
        match self.run(viewer, name, input).await? {
            Output::Json(value) => Ok(value),
            Output::Envelope(envelope) => serde_json::to_value(envelope)
                .map_err(|e| wabp_core::Error::internal(e.to_string())),
            _ => Err(wabp_core::Error::internal(format!(
                "{name} did not answer JSON"
            ))),
        }
    }

    fn closing(&self) -> tokio::sync::watch::Receiver<bool> {
        self.0.closing.subscribe()
    }
}

/// The signed-in person of a request. A handler that takes it answers,
/// for anyone else, the way to sign in (a redirect; 401 to htmx).
pub(crate) struct Signed {
    pub login: String,
    pub viewer: Viewer,
}

impl axum::extract::FromRequestParts<Ui> for Signed {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        ui: &Ui,
    ) -> Result<Signed, Response> {
        let (login, viewer) = ui.viewer(&parts.headers)?;
        Ok(Signed { login, viewer })
    }
}

fn redirect(to: &'static str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response()
}

/// The embedded files: the vendored htmx (see `assets/VENDOR.md`) and the
/// UI's own script and styles. Names carry the version, so they are cached
/// for good.
const ASSETS: [(&str, &str, &[u8]); 4] = [
    (
        "htmx-2.0.11.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/htmx.min.js"),
    ),
    (
        "htmx-ext-sse-2.2.4.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/sse.min.js"),
    ),
    (
        concat!("ui-", env!("CARGO_PKG_VERSION"), ".js"),
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/ui.js"),
    ),
    (
        concat!("ui-", env!("CARGO_PKG_VERSION"), ".css"),
        "text/css; charset=utf-8",
        include_bytes!("../assets/ui.css"),
    ),
];

pub(crate) async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, mime, bytes)) => (
            [
                (header::CONTENT_TYPE, *mime),
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
            ],
            *bytes,
        )
            .into_response(),
        None => pages::failure(StatusCode::NOT_FOUND, "no such file"),
    }
}

/// An HTML answer no cache keeps (pages show live, per-person state).
fn html(markup: maud::Markup) -> Response {
    (
        [(header::CACHE_CONTROL, "no-store")],
        Html(markup.into_string()),
    )
        .into_response()
}

/// The status an engine error maps to, as REST answers it.
fn status_of(error: &wabp_core::Error) -> StatusCode {
    wabp_rest::status_of(error.code)
}
