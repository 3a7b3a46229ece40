//! The REST frontend at the router, over a fake engine (no browser): what
//! a client meets before any engine work, routing, statuses, scopes, the
//! caller a tab belongs to, and how engine errors are said.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt as _;
use wabp_api::testing::{
    DIALOG_IN_THE_WAY, FAIL_INTERNALLY, FakeEngine, INTERNAL_DETAIL, NoPlugins,
};
use wabp_api::{Catalogue, Services, Tokens};
use wabp_rest::{AppState, Callers, ClientGuard};

/// The `/api/v1` stack as the server assembles it: guard, caller, router.
fn app(tokens: Tokens) -> Router {
    let registry: Arc<dyn wabp_core::plugin::PluginRegistry> = Arc::new(NoPlugins);
    let engine: Arc<dyn wabp_api::Backend> = Arc::new(FakeEngine::new(registry.clone()));
    let tokens = Arc::new(tokens);
    let state = AppState {
        services: Services::new(engine.clone(), None),
        catalogue: Arc::new(Catalogue::new(registry)),
        tokens: tokens.clone(),
    };
    let guard = Arc::new(ClientGuard {
        loopback: true,
        allowed_origins: Vec::new(),
    });
    Router::new()
        .nest("/api/v1", wabp_rest::router(state))
        .layer(axum::middleware::from_fn_with_state(
            Callers { engine, tokens },
            wabp_rest::resolve_caller,
        ))
        .layer(axum::middleware::from_fn(move |req, next| {
            wabp_rest::client_only(guard.clone(), req, next)
        }))
}

struct Call<'a> {
    method: &'a str,
    path: &'a str,
    body: Option<Value>,
    headers: Vec<(&'a str, &'a str)>,
}

fn get(path: &str) -> Call<'_> {
    Call {
        method: "GET",
        path,
        body: None,
        headers: Vec::new(),
    }
}

fn post(path: &str, body: Value) -> Call<'_> {
    Call {
        method: "POST",
        path,
        body: Some(body),
        headers: Vec::new(),
    }
}

impl<'a> Call<'a> {
    fn header(mut self, name: &'a str, value: &'a str) -> Self {
        self.headers.push((name, value));
        self
    }

    async fn on(self, app: &Router) -> (StatusCode, Value) {
        let mut request = Request::builder()
            .method(self.method)
            .uri(format!("http://127.0.0.1:8222/api/v1{}", self.path))
            .header(header::HOST, "127.0.0.1:8222");
        for (name, value) in &self.headers {
            request = request.header(*name, *value);
        }
        let body = match &self.body {
            Some(body) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Body::from(body.to_string())
            }
            None => Body::empty(),
        };
        let response = app
            .clone()
            .oneshot(request.body(body).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, value)
    }
}

fn error_of(answer: &Value) -> &str {
    answer["error"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn routes_answer_with_their_status_and_unknown_ones_do_not() {
    let app = app(Tokens::default());
    let (status, created) = post("/tabs", json!({ "url": "https://example.com/" }))
        .on(&app)
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let tab = created["id"].as_str().unwrap().to_string();
    let (status, listed) = get("/tabs").on(&app).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    let (status, info) = get(&format!("/tabs/{tab}")).on(&app).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(info["url"], "https://example.com/");
    let (status, text) = post(&format!("/tabs/{tab}/text"), json!({})).on(&app).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(text["text"], "fake text", "{text}");
    let (status, wrong) = get(&format!("/tabs/{tab}/text")).on(&app).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{wrong}");

    let (status, missing) = get("/tabs/tab_nope").on(&app).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(missing["code"], "TAB_NOT_FOUND");
    let (status, _) = get("/no/such/route").on(&app).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = Call {
        method: "DELETE",
        path: "/browser/status",
        body: None,
        headers: Vec::new(),
    }
    .on(&app)
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn bad_input_is_a_400_that_names_the_field() {
    let app = app(Tokens::default());
    let (_, created) = post("/tabs", json!({})).on(&app).await;
    let tab = created["id"].as_str().unwrap();
    for (body, says) in [
        (
            json!({ "url": "https://example.com/", "colour": "red" }),
            "colour",
        ),
        (json!({ "url": 7 }), "url"),
        (
            json!({ "url": "https://example.com/", "wait_until": { "clock": "moon" } }),
            "wait_until.clock",
        ),
        (
            json!({ "url": "https://example.com/", "screenshot": { "area": "page" } }),
            "screenshot.area",
        ),
    ] {
        let (status, answer) = post(&format!("/tabs/{tab}/navigate"), body).on(&app).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(error_of(&answer).contains(says), "{says}: {answer}");
    }
}

#[tokio::test]
async fn a_users_tabs_are_theirs_alone() {
    let app = app(Tokens::default());
    let (_, created) = post("/tabs?userId=alice", json!({})).on(&app).await;
    let tab = created["id"].as_str().unwrap().to_string();
    let (status, _) = get(&format!("/tabs/{tab}?userId=alice")).on(&app).await;
    assert_eq!(status, StatusCode::OK);
    for other in ["?userId=bob", ""] {
        let (status, answer) = get(&format!("/tabs/{tab}{other}")).on(&app).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{other}: {answer}");
        let (_, listed) = get(&format!("/tabs{other}")).on(&app).await;
        assert_eq!(listed, json!([]), "{other}");
    }
    let (status, _) = Call {
        method: "DELETE",
        path: &format!("/tabs/{tab}?userId=bob"),
        body: None,
        headers: Vec::new(),
    }
    .on(&app)
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "bob can't close alice's tab");
}

#[tokio::test]
async fn tokens_and_scopes_are_checked_before_the_engine() {
    let mut tokens = Tokens::new(Some("admin-secret-token-0123456789"));
    tokens
        .add_file(
            r#"
[[token]]
token = "reader-secret-token-0123456789"
user = "reader"
scopes = ["read"]
"#,
        )
        .unwrap();
    let app = app(tokens);
    let (status, answer) = get("/tabs").on(&app).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    let (status, _) = get("/tabs")
        .header("authorization", "Bearer wrong")
        .on(&app)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = get("/tabs")
        .header("authorization", "Bearer reader-secret-token-0123456789")
        .on(&app)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, answer) = post("/tabs", json!({}))
        .header("authorization", "Bearer reader-secret-token-0123456789")
        .on(&app)
        .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a read token can't act: {answer}"
    );
    let (status, answer) = get("/tabs?userId=someone-else")
        .header("authorization", "Bearer reader-secret-token-0123456789")
        .on(&app)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "bound to its user: {answer}");
    let (status, _) = post("/tabs", json!({}))
        .header("authorization", "Bearer admin-secret-token-0123456789")
        .on(&app)
        .await;
    assert_eq!(status, StatusCode::CREATED);
}

#[tokio::test]
async fn web_pages_are_turned_away_at_the_door() {
    let app = app(Tokens::default());
    let (status, _) = post("/tabs", json!({}))
        .header("origin", "https://evil.example")
        .on(&app)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = get("/tabs")
        .header("sec-fetch-site", "cross-site")
        .on(&app)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = get("/tabs").header("sec-fetch-mode", "cors").on(&app).await;
    assert_eq!(status, StatusCode::OK, "Node's fetch is a client");
    let mut request = Request::builder()
        .method("POST")
        .uri("http://127.0.0.1:8222/api/v1/tabs")
        .header(header::HOST, "127.0.0.1:8222")
        .header(header::CONTENT_TYPE, "text/plain")
        .body(Body::from("{}"))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    request = Request::builder()
        .method("GET")
        .uri("http://evil.example/api/v1/tabs")
        .header(header::HOST, "evil.example")
        .body(Body::empty())
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "DNS rebinding");
}

#[tokio::test]
async fn engine_errors_are_said_for_a_rest_client() {
    let app = app(Tokens::default());
    let (_, created) = post("/tabs", json!({})).on(&app).await;
    let tab = created["id"].as_str().unwrap();
    let (status, answer) = post(
        &format!("/tabs/{tab}/execute"),
        json!({ "script": FAIL_INTERNALLY }),
    )
    .on(&app)
    .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(answer["code"], "INTERNAL");
    let said = error_of(&answer);
    assert!(
        !said.contains(INTERNAL_DETAIL) && !said.contains("secret-path"),
        "{answer}"
    );
    assert!(
        said.contains("internal error") && said.contains("err_"),
        "{answer}"
    );

    let (status, answer) = post(
        &format!("/tabs/{tab}/execute"),
        json!({ "script": DIALOG_IN_THE_WAY }),
    )
    .on(&app)
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        error_of(&answer).contains(&format!("POST /api/v1/tabs/{tab}/dialog/accept")),
        "the next step as a route: {answer}"
    );
}
