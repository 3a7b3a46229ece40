//! The agent loop against real Chromium and a scripted LLM on 127.0.0.1
//! that speaks each provider's wire format (OpenAI chat completions,
//! Anthropic messages, Google generateContent): tasks that finish, the step
//! limit, failures in a row, stop, answers that are not actions, provider
//! errors and retries, plugin actions, server-sent events, MCP-free REST
//! inputs, and `wabp run`.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// What the scripted model is shown on one call.
#[derive(Clone, Debug)]
struct Turn {
    /// 1-based count of calls so far, this one included.
    call: usize,
    user: String,
}

/// What the scripted model answers.
enum Reply {
    /// The answer's text (an action's JSON, or anything).
    Text(String),
    /// An HTTP error with this body, and `Retry-After: 0`.
    Status(u16, Value),
    /// The answer after a delay.
    Later(Duration, Box<Reply>),
}

fn action(value: Value) -> Reply {
    Reply::Text(value.to_string())
}

type Script = Arc<dyn Fn(&Turn) -> Reply + Send + Sync>;

#[derive(Clone)]
struct Llm {
    script: Script,
    calls: Arc<Mutex<Vec<(String, HeaderMap, Value)>>>,
}

/// A scripted LLM server, which also serves the test page at `/form`.
struct LlmServer {
    /// `http://127.0.0.1:PORT`
    base: String,
    calls: Arc<Mutex<Vec<(String, HeaderMap, Value)>>>,
}

impl LlmServer {
    fn calls(&self) -> Vec<(String, HeaderMap, Value)> {
        self.calls.lock().unwrap().clone()
    }
}

const FORM: &str = r#"<!doctype html><title>Greeter</title>
<h1>Greeter</h1>
<input id="name" placeholder="Your name">
<button id="go" onclick="document.getElementById('out').textContent = 'Hello ' + document.getElementById('name').value">Greet</button>
<p id="out"></p>
<div style="height: 3000px">tall</div>"#;

async fn start_llm(script: impl Fn(&Turn) -> Reply + Send + Sync + 'static) -> LlmServer {
    let llm = Llm {
        script: Arc::new(script),
        calls: Default::default(),
    };
    let calls = llm.calls.clone();
    let app = axum::Router::new()
        .route("/form", get(|| async { Html(FORM) }))
        .route("/v1/chat/completions", post(answer))
        .route("/v1/messages", post(answer))
        .route("/v1beta/models/{model}", post(answer))
        .with_state(llm);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    common::runtime().spawn(async move { axum::serve(listener, app).await.unwrap() });
    LlmServer { base, calls }
}

/// One model call, in the format of the provider whose path was called.
async fn answer(
    State(llm): State<Llm>,
    uri: Uri,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let path = uri.path().to_string();
    let (system, user) = if path.ends_with("/chat/completions") {
        (
            body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            body["messages"][1]["content"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        )
    } else if path.ends_with("/messages") {
        (
            body["system"].as_str().unwrap_or("").to_string(),
            body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        )
    } else {
        (
            body["systemInstruction"]["parts"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            body["contents"][0]["parts"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        )
    };
    let call = {
        let mut calls = llm.calls.lock().unwrap();
        calls.push((path.clone(), headers, body));
        calls.len()
    };
    let _ = system;
    let mut reply = (llm.script)(&Turn { call, user });
    loop {
        match reply {
            Reply::Later(delay, then) => {
                tokio::time::sleep(delay).await;
                reply = *then;
            }
            Reply::Status(status, body) => {
                return (
                    StatusCode::from_u16(status).unwrap(),
                    [("retry-after", "0")],
                    Json(body),
                )
                    .into_response();
            }
            Reply::Text(text) => {
                let body = if path.ends_with("/chat/completions") {
                    json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]})
                } else if path.ends_with("/messages") {
                    json!({"id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "end_turn", "content": [{"type": "text", "text": text}]})
                } else {
                    json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": [{"text": text}]}}]})
                };
                return Json(body).into_response();
            }
        }
    }
}

/// The index the page state gives the element whose line contains `needle`.
fn index_of(user: &str, needle: &str) -> u64 {
    let line = user
        .lines()
        .find(|l| l.starts_with('[') && l.contains(needle))
        .unwrap_or_else(|| panic!("no element with {needle:?} in the prompt:\n{user}"));
    line[1..line.find(']').unwrap()].parse().unwrap()
}

fn settings(provider: &str, llm: &LlmServer) -> Value {
    let base_url = match provider {
        "openai" => format!("{}/v1", llm.base),
        _ => llm.base.clone(),
    };
    json!({"llmProvider": provider, "apiKey": "sk-test-secret-key", "model": "test-model", "baseUrl": base_url})
}

/// A new tab on the scripted server's form page.
async fn form_tab(h: &common::Harness, llm: &LlmServer) -> String {
    let (status, tab) = h
        .post("/tabs", json!({"url": format!("{}/form", llm.base)}))
        .await;
    assert_eq!(status, 201, "{tab}");
    tab["id"].as_str().unwrap().to_string()
}

/// Starts a task and waits for it to end (60 s at most).
async fn run_task(h: &common::Harness, tab: &str, body: Value) -> Value {
    let mut body = body;
    body["tab_id"] = json!(tab);
    let (status, started) = h.post("/agent/tasks", body).await;
    assert_eq!(status, 201, "{started}");
    assert_eq!(started["status"], "running");
    let id = started["id"].as_str().unwrap().to_string();
    let (status, done) = h.get(&format!("/agent/tasks/{id}?wait_ms=60000")).await;
    assert_eq!(status, 200, "{done}");
    assert_ne!(done["status"], "running", "{done}");
    done
}

/// The scripted model of a task that greets Ada: type the name, click the
/// button, then say done once the page shows the greeting.
fn greeter(turn: &Turn) -> Reply {
    if turn.user.contains("Hello Ada") {
        return action(json!({"type": "done", "text": "The page says Hello Ada", "success": true}));
    }
    if turn.user.contains("input_text \"Ada\"") {
        return action(json!({"type": "click", "index": index_of(&turn.user, "\"Greet\"")}));
    }
    action(json!({"type": "input_text", "index": index_of(&turn.user, "id=name"), "text": "Ada"}))
}

/// Reads a finished task's server-sent events: (event name, data).
async fn events_of(h: &common::Harness, id: &str) -> Vec<(String, Value)> {
    let response = h
        .http
        .get(format!("{}/agent/tasks/{id}/events", h.server.api))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let text = tokio::time::timeout(Duration::from_secs(60), response.text())
        .await
        .expect("the event stream ends with the task")
        .unwrap();
    parse_events(&text)
}

fn parse_events(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut name = None;
            let mut data = None;
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    name = Some(v.trim().to_string());
                }
                if let Some(v) = line.strip_prefix("data:") {
                    data = serde_json::from_str(v.trim()).ok();
                }
            }
            Some((name?, data?))
        })
        .collect()
}

#[test]
fn openai_task_types_clicks_and_finishes() {
    let (h, _g) = common::shared();
    common::block_on(async {
        let llm = start_llm(greeter).await;
        let tab = form_tab(h, &llm).await;
        let done = run_task(
            h,
            &tab,
            json!({"task": "Greet Ada on this page", "settings": settings("openai", &llm)}),
        )
        .await;
        assert_eq!(done["status"], "success", "{done}");
        assert_eq!(done["result"]["text"], "The page says Hello Ada");
        assert_eq!(done["result"]["success"], true);
        assert_eq!(done["step"], 3);
        assert_eq!(done["maxSteps"], 25);
        let history = done["history"].as_array().unwrap();
        let kinds: Vec<&str> = history
            .iter()
            .map(|i| i["action"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["input_text", "click", "done"], "{done}");
        assert!(history.iter().all(|i| i.get("error").is_none()), "{done}");
        // The page really changed.
        assert_eq!(
            h.eval(&tab, "document.getElementById('out').textContent")
                .await,
            "Hello Ada"
        );
        // Each browser step went through the action loop and the history.
        for item in &history[..2] {
            let id = item["action_id"].as_str().expect("a recorded action");
            let (status, record) = h.get(&format!("/history/actions/{id}")).await;
            assert_eq!(status, 200, "{record}");
        }
        // The key is sent to the provider and nowhere else.
        let text = done.to_string();
        assert!(!text.contains("sk-test-secret-key"), "{text}");
        assert_eq!(done["settings"]["llmProvider"], "openai");
        assert_eq!(done["settings"]["model"], "test-model");
        let calls = llm.calls();
        assert_eq!(calls.len(), 3);
        let (path, headers, body) = &calls[0];
        assert_eq!(path, "/v1/chat/completions");
        assert_eq!(headers["authorization"], "Bearer sk-test-secret-key");
        assert_eq!(body["model"], "test-model");
        // The model sees the task, the page and the actions, plugin ones with
        // their schemas.
        let system = body["messages"][0]["content"].as_str().unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        assert!(user.contains("Task: Greet Ada on this page"), "{user}");
        assert!(user.contains("Title: Greeter"), "{user}");
        assert!(user.contains("placeholder=\"Your name\""), "{user}");
        for name in [
            "- click:",
            "- input_text:",
            "- navigate:",
            "- scroll:",
            "- search:",
            "- done:",
        ] {
            assert!(system.contains(name), "{name} missing from {system}");
        }
        assert!(
            system.contains("- keyboard_press: Presses and releases a key"),
            "{system}"
        );
        assert!(system.contains("- fill:"), "{system}");
        // Later prompts carry the earlier steps and their results.
        let third = calls[2].2["messages"][1]["content"].as_str().unwrap();
        assert!(third.contains("1. input_text \"Ada\" into ["), "{third}");
        assert!(
            third.contains("2. click [") && third.contains("-> ok"),
            "{third}"
        );

        // The events, replayed after the end: the extension's messages in order.
        let id = done["id"].as_str().unwrap();
        let events = events_of(h, id).await;
        let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "status_update",
                "progress_update",
                "action_executed",
                "progress_update",
                "action_executed",
                "progress_update",
                "action_executed",
                "task_completed",
                "status_update"
            ]
        );
        assert_eq!(events[0].1["status"], "running");
        assert_eq!(
            events[1].1,
            json!({"type": "progress_update", "step": 1, "maxSteps": 25})
        );
        assert_eq!(events[2].1["action"]["type"], "input_text");
        assert_eq!(events[7].1["result"]["text"], "The page says Hello Ada");
        assert_eq!(events[8].1["status"], "success");

        // The caller's task list has it.
        let (_, list) = h.get("/agent/tasks").await;
        assert!(
            list["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["id"] == id)
        );
    });
}

#[test]
fn anthropic_and_google_speak_their_formats() {
    let (h, _g) = common::shared();
    common::block_on(async {
        for provider in ["anthropic", "google"] {
            let llm = start_llm(greeter).await;
            let tab = form_tab(h, &llm).await;
            let done = run_task(
                h,
                &tab,
                json!({"task": "Greet Ada", "max_steps": 6, "settings": settings(provider, &llm)}),
            )
            .await;
            assert_eq!(done["status"], "success", "{provider}: {done}");
            assert_eq!(
                h.eval(&tab, "document.getElementById('out').textContent")
                    .await,
                "Hello Ada"
            );
            let calls = llm.calls();
            let (path, headers, body) = &calls[0];
            match provider {
                "anthropic" => {
                    assert_eq!(path, "/v1/messages");
                    assert_eq!(headers["x-api-key"], "sk-test-secret-key");
                    assert_eq!(headers["anthropic-version"], "2023-06-01");
                    assert_eq!(body["model"], "test-model");
                    assert!(body["max_tokens"].as_u64().unwrap() > 0);
                    assert!(body["system"].as_str().unwrap().contains("- done:"));
                }
                _ => {
                    assert_eq!(path, "/v1beta/models/test-model:generateContent");
                    assert_eq!(headers["x-goog-api-key"], "sk-test-secret-key");
                    assert!(
                        body["systemInstruction"]["parts"][0]["text"]
                            .as_str()
                            .unwrap()
                            .contains("- done:")
                    );
                    assert!(headers.get("authorization").is_none());
                }
            }
            h.delete(&format!("/tabs/{tab}")).await;
        }
    });
}

#[test]
fn max_steps_three_failures_and_answers_that_are_not_actions() {
    let (h, _g) = common::shared();
    common::block_on(async {
        // Scrolling forever: the step limit ends it.
        let llm = start_llm(|_| action(json!({"type": "scroll", "down": true, "pages": 1}))).await;
        let tab = h.tab_on("/").await;
        let done = run_task(
            h,
            &tab,
            json!({"task": "scroll", "max_steps": 2, "settings": settings("openai", &llm)}),
        )
        .await;
        assert_eq!(done["status"], "error");
        assert_eq!(done["error"], "Reached max steps (2)");
        assert_eq!(done["history"].as_array().unwrap().len(), 2);

        // An element that isn't there, three times.
        let llm = start_llm(|_| action(json!({"type": "click", "index": 9999}))).await;
        let done = run_task(
            h,
            &tab,
            json!({"task": "click", "settings": settings("openai", &llm)}),
        )
        .await;
        assert_eq!(done["status"], "error");
        let history = done["history"].as_array().unwrap();
        assert_eq!(history.len(), 3, "{done}");
        for item in history {
            assert_eq!(item["error"], "Element with index 9999 not found");
        }
        let error = done["error"].as_str().unwrap();
        assert!(
            error.contains("3 consecutive errors") && error.contains("9999"),
            "{error}"
        );

        // Prose, an unknown action and a failing plugin action are failed
        // steps; a good step in between resets the count.
        let llm = start_llm(|turn| match turn.call {
            1 => Reply::Text("I think I should click the Greet button.".into()),
            2 => action(json!({"type": "fly", "to": "moon"})),
            3 => action(json!({"type": "scroll", "down": true})),
            4 => action(json!({"type": "fill", "selector": "#nothing-here", "text": "x"})),
            _ => Reply::Text(
                "```json\n{\"type\": \"done\", \"text\": \"gave up\", \"success\": false}\n```"
                    .into(),
            ),
        })
        .await;
        let done = run_task(
            h,
            &tab,
            json!({"task": "x", "settings": settings("openai", &llm)}),
        )
        .await;
        let history = done["history"].as_array().unwrap();
        assert_eq!(history.len(), 5, "{done}");
        assert!(
            history[0]["error"]
                .as_str()
                .unwrap()
                .starts_with("Failed to parse LLM response: no JSON object"),
            "{done}"
        );
        assert_eq!(history[0]["action"], "llm");
        assert!(
            history[1]["error"]
                .as_str()
                .unwrap()
                .starts_with("Failed to fly:"),
            "{done}"
        );
        assert!(history[2].get("error").is_none(), "{done}");
        assert!(
            history[3]["error"]
                .as_str()
                .unwrap()
                .starts_with("Failed to fill: "),
            "{done}"
        );
        // done with success false: the task ends, as an error, with the text.
        assert_eq!(done["status"], "error");
        assert_eq!(done["result"], json!({"text": "gave up", "success": false}));
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

/// A task that ended while nobody waited on it (only its event stream was
/// read) has ended: its tab takes the next task at once.
#[test]
fn a_task_nobody_waited_on_frees_its_tab() {
    let (h, _g) = common::shared();
    common::block_on(async {
        let llm = start_llm(|_| {
            action(json!({"type": "done", "text": "nothing to do", "success": true}))
        })
        .await;
        let tab = form_tab(h, &llm).await;
        for _ in 0..2 {
            let (status, started) = h
                .post(
                    "/agent/tasks",
                    json!({"task": "idle", "tab_id": tab, "settings": settings("openai", &llm)}),
                )
                .await;
            assert_eq!(status, 201, "{started}");
            let id = started["id"].as_str().unwrap().to_string();
            let events = events_of(h, &id).await;
            assert_eq!(events.last().unwrap().1["status"], "success", "{events:?}");
        }
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn a_plugin_action_is_a_tool_and_stop_ends_a_task_mid_step() {
    let (h, _g) = common::shared();
    common::block_on(async {
        // The model picks core-actions' `fill` (a plugin action) by selector.
        let llm = start_llm(|turn| {
            if turn.user.contains("value=\"Grace\"") {
                action(json!({"type": "done", "text": "filled"}))
            } else {
                action(json!({"type": "fill", "selector": "#name", "text": "Grace"}))
            }
        })
        .await;
        let tab = form_tab(h, &llm).await;
        let done = run_task(
            h,
            &tab,
            json!({"task": "fill", "settings": settings("openai", &llm)}),
        )
        .await;
        assert_eq!(done["status"], "success", "{done}");
        assert_eq!(done["history"][0]["action"], "fill");
        assert!(done["history"][0]["action_id"].is_string(), "{done}");
        assert_eq!(
            h.eval(&tab, "document.getElementById('name').value").await,
            "Grace"
        );

        // A model that takes 30 s: stop answers at once, and the event stream
        // ends with `stopped`.
        let slow = start_llm(|_| {
            Reply::Later(
                Duration::from_secs(30),
                Box::new(action(json!({"type": "done", "text": "late"}))),
            )
        })
        .await;
        let (status, started) = h
            .post(
                "/agent/tasks",
                json!({"task": "wait", "tab_id": tab, "settings": settings("openai", &slow)}),
            )
            .await;
        assert_eq!(status, 201);
        let id = started["id"].as_str().unwrap().to_string();
        // A second task on the same tab while this one runs: 409.
        let (status, busy) = h
            .post(
                "/agent/tasks",
                json!({"task": "again", "tab_id": tab, "settings": settings("openai", &slow)}),
            )
            .await;
        assert_eq!(status, 409, "{busy}");
        assert!(busy["error"].as_str().unwrap().contains(&id), "{busy}");
        let stream = {
            let url = format!("{}/agent/tasks/{id}/events", h.server.api);
            let http = h.http.clone();
            common::runtime()
                .spawn(async move { http.get(url).send().await.unwrap().text().await.unwrap() })
        };
        common::eventually(Duration::from_secs(10), || async {
            (!slow.calls().is_empty()).then_some(())
        })
        .await
        .expect("the model is asked");
        let began = Instant::now();
        let (status, stopped) = h.post(&format!("/agent/tasks/{id}/stop"), json!({})).await;
        assert_eq!(status, 200, "{stopped}");
        assert_eq!(stopped["status"], "stopped", "{stopped}");
        assert!(began.elapsed() < Duration::from_secs(10));
        let events = parse_events(
            &tokio::time::timeout(Duration::from_secs(10), stream)
                .await
                .unwrap()
                .unwrap(),
        );
        let last = events.last().unwrap();
        assert_eq!(last.0, "status_update");
        assert_eq!(last.1["status"], "stopped");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn provider_errors_retries_and_refused_keys() {
    let (h, _g) = common::shared();
    common::block_on(async {
        let tab = h.tab_on("/").await;
        // 401: the task ends at once, without the key in the message, and
        // the call is not tried again.
        let llm = start_llm(|_| {
            Reply::Status(401, json!({"error": {"message": "Incorrect API key provided: sk-test-secret-key", "type": "invalid_request_error"}}))
        })
        .await;
        let done = run_task(
            h,
            &tab,
            json!({"task": "x", "settings": settings("openai", &llm)}),
        )
        .await;
        assert_eq!(done["status"], "error");
        let error = done["error"].as_str().unwrap();
        assert!(error.starts_with("LLM API Error: 401"), "{error}");
        assert!(
            error.contains("Incorrect API key provided: [redacted]"),
            "{error}"
        );
        assert_eq!(llm.calls().len(), 1);

        // 429, then an answer: retried within the step.
        let llm = start_llm(|turn| match turn.call {
            1 => Reply::Status(429, json!({"error": {"message": "Rate limit reached"}})),
            _ => action(json!({"type": "done", "text": "ok"})),
        })
        .await;
        let done = run_task(
            h,
            &tab,
            json!({"task": "x", "settings": settings("anthropic", &llm)}),
        )
        .await;
        assert_eq!(done["status"], "success", "{done}");
        assert_eq!(done["history"].as_array().unwrap().len(), 1);
        assert_eq!(llm.calls().len(), 2);

        // 500 on every call: each step tries four times, three failed steps end it.
        let llm =
            start_llm(|_| Reply::Status(500, json!({"error": {"message": "internal"}}))).await;
        let done = run_task(
            h,
            &tab,
            json!({"task": "x", "settings": settings("google", &llm)}),
        )
        .await;
        assert_eq!(done["status"], "error");
        let history = done["history"].as_array().unwrap();
        assert_eq!(history.len(), 3, "{done}");
        assert!(
            history[0]["error"]
                .as_str()
                .unwrap()
                .starts_with("LLM API Error: 500"),
            "{done}"
        );
        assert_eq!(llm.calls().len(), 12);
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn bad_inputs_and_other_users() {
    let (h, _g) = common::shared();
    common::block_on(async {
        let llm = start_llm(|_| action(json!({"type": "done", "text": "ok"}))).await;
        let tab = h.tab_on("/").await;
        for (body, needle) in [
            (json!({"task": "x"}), "settings"),
            (
                json!({"task": "x", "settings": {"llmProvider": "browser-use"}}),
                "browser-use",
            ),
            (
                json!({"task": "", "settings": settings("openai", &llm)}),
                "task",
            ),
            (
                json!({"task": "x", "max_steps": 0, "settings": settings("openai", &llm)}),
                "max_steps",
            ),
            (
                json!({"task": "x", "max_steps": 501, "settings": settings("openai", &llm)}),
                "max_steps",
            ),
            (
                json!({"task": "x", "tab_id": "nope", "settings": settings("openai", &llm)}),
                "nope",
            ),
            (
                json!({"task": "x", "settings": {"llmProvider": "openai", "baseUrl": "ftp://x"}}),
                "baseUrl",
            ),
        ] {
            let mut body = body;
            if body.get("tab_id").is_none() {
                body["tab_id"] = json!(tab);
            }
            let (status, answer) = h.post("/agent/tasks", body.clone()).await;
            assert!(status == 400 || status == 404, "{body}: {status} {answer}");
            assert!(
                answer["error"].as_str().unwrap().contains(needle),
                "{body}: {answer}"
            );
        }
        let (status, missing) = h.get("/agent/tasks/task_nope").await;
        assert_eq!(status, 404, "{missing}");
        let (status, _) = h.post("/agent/tasks/task_nope/stop", json!({})).await;
        assert_eq!(status, 404);
        let (status, _) = h.get("/agent/tasks/task_nope/events").await;
        assert_eq!(status, 404);

        // Another user neither sees nor stops the task.
        let done = run_task(
            h,
            &tab,
            json!({"task": "x", "settings": settings("openai", &llm)}),
        )
        .await;
        let id = done["id"].as_str().unwrap();
        let (status, _) = h.get(&format!("/agent/tasks/{id}?userId=mallory")).await;
        assert_eq!(status, 404);
        let (_, list) = h.get("/agent/tasks?userId=mallory").await;
        assert_eq!(list["tasks"], json!([]));
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn wabp_run_prints_progress_and_the_result() {
    let (_h, _g) = common::shared();
    let llm = common::block_on(start_llm(greeter));
    let session = common::temp_dir("agent-run");
    let plugins = common::temp_dir("agent-run-plugins");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_wabp"));
    command
        .args([
            "run",
            "Greet Ada",
            "--provider",
            "openai",
            "--max-steps",
            "5",
        ])
        .arg("--base-url")
        .arg(format!("{}/v1", llm.base))
        .arg("--url")
        .arg(format!("{}/form", llm.base))
        .arg("--session-dir")
        .arg(&session)
        .arg("--plugins")
        .arg(&plugins)
        .env("OPENAI_API_KEY", "sk-test-secret-key");
    let (stdout, stderr) = common::run_to_success(&mut command);
    assert_eq!(stdout.trim(), "The page says Hello Ada");
    assert!(stderr.contains("[step 1/5]"), "{stderr}");
    assert!(stderr.contains("input_text \"Ada\" into"), "{stderr}");
    assert!(!stderr.contains("sk-test-secret-key"), "{stderr}");
    assert_eq!(
        llm.calls()[0].1["authorization"],
        "Bearer sk-test-secret-key"
    );
}
