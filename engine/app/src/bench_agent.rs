//! `wabp-bench agent`: what the agent loop itself costs per step, with a
//! model on 127.0.0.1 that answers at once (OpenAI's wire format): the
//! step's wall time split into the model's round trip and the rest (page
//! state, prompt, action with its full envelope, history), next to the same
//! action and state read run directly.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use axum::Json;
use axum::response::Html;
use serde_json::{Value, json};

use crate::median;

const STEPS: u32 = 30;

pub async fn run() -> anyhow::Result<()> {
    let calls = Arc::new(AtomicU32::new(0));
    let page = crate::busy_page();
    let model = {
        let calls = calls.clone();
        move |Json(_body): Json<Value>| {
            let calls = calls.clone();
            async move {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                // Down and up by half a page, step after step.
                let action = json!({"type": "scroll", "down": n % 2 == 0, "pages": 0.5});
                Json(
                    json!({"choices": [{"message": {"role": "assistant", "content": action.to_string()}}]}),
                )
            }
        }
    };
    let base = crate::serve_site(
        axum::Router::new()
            .route("/", axum::routing::get(move || async move { Html(page) }))
            .route("/v1/chat/completions", axum::routing::post(model)),
    )
    .await?;
    let session = std::env::temp_dir().join(format!("wabp-bench-agent-{}", std::process::id()));
    let app = wabp::App::start(crate::bench_options(session.clone())).await?;
    let ctx = app.services.ctx(wabp_core::Caller::default());
    let run = |name: &str, input: Value| {
        let op = app.catalogue.operation(name);
        let ctx = ctx.clone();
        async move { op?.run(ctx, input).await }
    };
    let created = match run("create_tab", json!({ "url": format!("{base}/") })).await? {
        wabp_api::Output::Json(v) => v,
        _ => anyhow::bail!("no tab"),
    };
    let tab = created["id"].as_str().unwrap_or_default().to_string();

    // The same action and state read, run directly.
    let mut direct_action = Vec::new();
    let mut direct_state = Vec::new();
    for i in 0..STEPS {
        let started = Instant::now();
        run("state", json!({ "tab_id": tab })).await?;
        direct_state.push(started.elapsed().as_secs_f64() * 1000.0);
        let started = Instant::now();
        run(
            "state_action",
            json!({ "tab_id": tab, "action": {"type": "scroll", "down": i % 2 == 0, "pages": 0.5} }),
        )
        .await?;
        direct_action.push(started.elapsed().as_secs_f64() * 1000.0);
    }

    let started = Instant::now();
    let task = match run(
        "agent_start",
        json!({ "task": "scroll", "tab_id": tab, "max_steps": STEPS,
                "settings": {"llmProvider": "openai", "baseUrl": format!("{base}/v1"), "apiKey": "bench"} }),
    )
    .await?
    {
        wabp_api::Output::Json(v) => v,
        _ => anyhow::bail!("no task"),
    };
    let id = task["id"].as_str().unwrap_or_default();
    let done = app
        .services
        .agents
        .get("", id)
        .ok_or_else(|| anyhow::anyhow!("task gone"))?
        .wait(Duration::from_secs(600))
        .await;
    let total = started.elapsed().as_secs_f64() * 1000.0;
    let history = serde_json::to_value(&done.history)?;
    let steps: Vec<f64> = history
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h["duration_ms"].as_f64())
        .collect();
    let models: Vec<f64> = history
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h["model_ms"].as_f64())
        .collect();
    let failed = history
        .as_array()
        .into_iter()
        .flatten()
        .filter(|h| h.get("error").is_some())
        .count();
    let step = median(steps.clone());
    let model = median(models);
    println!(
        "agent loop, {} steps ({} failed), instant model on 127.0.0.1:",
        steps.len(),
        failed
    );
    println!("  step (state + model + action), median   {step:8.1} ms");
    println!("  of which the model's round trip          {model:8.1} ms");
    println!(
        "  the same state read, direct, median      {:8.1} ms",
        median(direct_state)
    );
    println!(
        "  the same action, direct, median          {:8.1} ms",
        median(direct_action)
    );
    println!("  whole task                               {total:8.1} ms");
    app.engine.shutdown(Duration::from_secs(5)).await;
    let _ = std::fs::remove_dir_all(session);
    Ok(())
}
