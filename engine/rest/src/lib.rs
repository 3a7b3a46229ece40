//! `wabp-rest`: the Agent Browser Protocol REST API at `/api/v1`, plus wabp's
//! additive extensions. Generated from the catalogue (`wabp-api`): one route
//! per operation with a REST route, all served by one handler that gathers
//! path, query and body into the operation's input and shapes its output.
//! Nothing here owns behaviour.

mod body;
mod caller;
mod error;
pub mod guard;

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, on, post};
use axum::{Extension, Json};
use serde_json::{Map, Value};
use wabp_api::{Catalogue, Method, Operation, Output, Services};
use wabp_core::{Caller, ErrorCode};

pub use caller::{Callers, resolve_caller};
pub use error::{ApiError, RETRY_AFTER_SECS, error_response, status_of};
pub use guard::{ClientGuard, client_only};

#[derive(Clone)]
pub struct AppState {
    pub services: Services,
    pub catalogue: Arc<Catalogue>,
    /// The bearer tokens requests must present (none: no token needed).
    pub tokens: Arc<wabp_api::Tokens>,
}

/// The `/api/v1` router: a route per catalogue operation, ABP's short
/// paths for the built-in actions, and any action by name.
pub fn router(state: AppState) -> Router {
    let mut router = Router::new();
    for op in state.catalogue.fixed() {
        let Some(rest) = &op.rest else { continue };
        let op = Arc::new(op.clone());
        let filter = match rest.method {
            Method::Get => MethodFilter::GET,
            Method::Post => MethodFilter::POST,
            Method::Delete => MethodFilter::DELETE,
        };
        router = router.route(
            &rest.path,
            on(
                filter,
                move |State(s): State<AppState>,
                      Extension(caller): Extension<Caller>,
                      path: PathParams,
                      query: RawQuery,
                      body: body::Body| {
                    let op = op.clone();
                    async move { serve(&s, &op, caller, path, query, body).await }
                },
            ),
        );
    }
    // Actions are looked up when called: plugins come and go.
    for (action, path) in wabp_api::BUILTIN_PATHS {
        router = router.route(
            path,
            post(
                move |State(s): State<AppState>,
                      Extension(caller): Extension<Caller>,
                      path: PathParams,
                      query: RawQuery,
                      body: body::Body| async move {
                    match s.catalogue.action(action) {
                        Ok(op) => serve(&s, &op, caller, path, query, body).await,
                        Err(e) => ApiError(e).into_response(),
                    }
                },
            ),
        );
    }
    router = router.route(
        wabp_api::ACTION_ROUTE,
        post(
            |State(s): State<AppState>,
             Extension(caller): Extension<Caller>,
             path: PathParams,
             query: RawQuery,
             body: body::Body| async move {
                let mut params = match path {
                    Ok(Path(params)) => params,
                    Err(e) => return bad_path(e),
                };
                // The action's name is the route's, not one of its params.
                let name = params
                    .iter()
                    .position(|(k, _)| k == "name")
                    .map(|i| params.remove(i).1)
                    .unwrap_or_default();
                match s.catalogue.action(&name) {
                    Ok(op) => serve(&s, &op, caller, Ok(Path(params)), query, body).await,
                    Err(e) => ApiError(e).into_response(),
                }
            },
        ),
    );
    router
        .fallback(|| async {
            error_response(
                StatusCode::NOT_FOUND,
                ErrorCode::NotFound,
                "no such endpoint; GET /api/v1/openapi.json lists them",
            )
        })
        .method_not_allowed_fallback(|| async {
            error_response(
                StatusCode::METHOD_NOT_ALLOWED,
                ErrorCode::InvalidRequest,
                "method not allowed on this endpoint",
            )
        })
        .layer(axum::middleware::from_fn_with_state(
            state.services.engine.engine_id(),
            misdirected,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Callers {
                engine: state.services.engine.clone(),
                tokens: state.tokens.clone(),
            },
            resolve_caller,
        ))
        .with_state(state)
}

/// A request naming a tab, download, chooser or approval another engine of
/// the fleet holds answers 421 `WRONG_ENGINE` with that engine's id, so the
/// balancer or client can send it there (ids end in their engine's id).
async fn misdirected(
    State(engine): State<wabp_core::ids::EngineId>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let foreign = request
        .uri()
        .path()
        .split('/')
        .find_map(|segment| Some((segment, engine.foreign(segment)?)));
    match foreign {
        Some((id, holder)) => ApiError(wabp_core::Error::wrong_engine(id, &holder)).into_response(),
        None => next.run(request).await,
    }
}

/// The route's parameters (`{tab_id}`, `{id}`), decoded.
type PathParams = Result<Path<Vec<(String, String)>>, PathRejection>;

/// A path that doesn't decode (bad percent-encoding) is the client's fault.
fn bad_path(rejection: PathRejection) -> Response {
    error_response(
        StatusCode::BAD_REQUEST,
        ErrorCode::InvalidRequest,
        format!("bad path: {}", rejection.body_text()),
    )
}

/// Runs `op` on the request: the query (typed by the input schema), then
/// the JSON body, then the path parameters, as one input object.
async fn serve(
    s: &AppState,
    op: &Operation,
    caller: Caller,
    path: PathParams,
    RawQuery(query): RawQuery,
    body::Body(body): body::Body,
) -> Response {
    let params = match path {
        Ok(Path(params)) => params,
        Err(e) => return bad_path(e),
    };
    let mut input: Map<String, Value> =
        wabp_api::coerce_query(&op.input_schema, caller::query_pairs(query.as_deref()));
    if let Value::Object(fields) = body {
        input.extend(fields);
    }
    for (name, value) in params {
        input.insert(name, Value::String(value));
    }
    let status = op
        .rest
        .as_ref()
        .and_then(|r| StatusCode::from_u16(r.status).ok())
        .unwrap_or(StatusCode::OK);
    match op.run(s.services.ctx(caller), Value::Object(input)).await {
        Ok(Output::Envelope(envelope)) => match serde_json::to_value(envelope) {
            Ok(value) => (status, Json(value)).into_response(),
            Err(e) => ApiError(wabp_core::Error::internal(e.to_string())).into_response(),
        },
        Ok(Output::Json(value)) => (status, Json(value)).into_response(),
        Ok(Output::Bytes { mime, bytes }) => {
            (status, [(header::CONTENT_TYPE, mime)], bytes).into_response()
        }
        Ok(Output::Events(events)) => {
            use futures::StreamExt;
            let events = events.map(|e| {
                Ok::<_, std::convert::Infallible>(
                    Event::default().event(e.event).data(e.data.to_string()),
                )
            });
            Sse::new(events)
                .keep_alive(KeepAlive::default())
                .into_response()
        }
        Err(e) => ApiError(e).into_response(),
    }
}
