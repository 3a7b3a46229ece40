//! `wabp run "<task>"`: one agent task in an engine of its own, with a live
//! progress line on stderr and the result on stdout.

use std::io::{IsTerminal, Write};

use serde_json::{Map, Value, json};
use wabp_agent::{Status, TaskEvent};
use wabp_api::Output;

use crate::{App, Options};

/// What `wabp run` was asked.
pub struct RunTask {
    /// What to do, in natural language.
    pub task: String,
    /// `openai`, `anthropic` or `google`.
    pub provider: String,
    /// Model name (default: the provider's usual one).
    pub model: Option<String>,
    /// The provider's base URL as its SDK takes it.
    pub base_url: Option<String>,
    /// The key (default: the provider's environment variable).
    pub api_key: Option<String>,
    /// Steps at most.
    pub max_steps: u32,
    /// A page to open first.
    pub url: Option<String>,
}

/// Runs the task to its end; whether it succeeded.
pub async fn run(options: Options, request: RunTask) -> anyhow::Result<bool> {
    let app = App::start(options).await?;
    let outcome = run_in(&app, request).await;
    app.engine.shutdown(std::time::Duration::from_secs(5)).await;
    outcome
}

async fn run_in(app: &App, request: RunTask) -> anyhow::Result<bool> {
    let ctx = app.services.ctx(wabp_core::Caller::default());
    let op = |name: &str| {
        app.catalogue
            .fixed()
            .iter()
            .find(|o| o.name == name)
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no operation {name}"))
    };
    let mut input = Map::new();
    if let Some(url) = &request.url {
        let created = op("create_tab")?
            .run(ctx.clone(), json!({ "url": url }))
            .await
            .map_err(|e| anyhow::anyhow!("could not open {url}: {}", e.message))?;
        if let Output::Json(tab) = created {
            input.insert("tab_id".into(), tab["id"].clone());
        }
    }
    let mut settings = Map::new();
    settings.insert("llmProvider".into(), json!(request.provider));
    for (key, value) in [
        ("model", request.model),
        ("baseUrl", request.base_url),
        ("apiKey", request.api_key),
    ] {
        if let Some(value) = value {
            settings.insert(key.into(), json!(value));
        }
    }
    input.insert("task".into(), json!(request.task));
    input.insert("max_steps".into(), json!(request.max_steps));
    input.insert("settings".into(), Value::Object(settings));
    let started = op("agent_start")?
        .run(ctx.clone(), Value::Object(input))
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let Output::Json(started) = started else {
        anyhow::bail!("the task did not start");
    };
    let id = started["id"].as_str().unwrap_or_default().to_string();
    let task = app
        .services
        .agents
        .get(ctx.caller.user_id().unwrap_or(""), &id)
        .ok_or_else(|| anyhow::anyhow!("task {id} is gone"))?;
    let (past, mut live) = task.subscribe();
    let mut progress = Progress::default();
    let mut ended = false;
    for event in past {
        ended |= event.is_last();
        progress.show(&event);
    }
    while !ended {
        tokio::select! {
            event = live.recv() => match event {
                Ok(event) => {
                    ended = event.is_last();
                    progress.show(&event);
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => break,
            },
            _ = tokio::signal::ctrl_c() => {
                eprintln!("\nstopping…");
                task.stop();
            }
        }
    }
    progress.clear();
    let view = task.wait(std::time::Duration::from_secs(10)).await;
    for item in &view.history {
        match &item.error {
            Some(error) => eprintln!(
                "{:>3}. {} {}: {error}",
                item.step, item.action, item.details
            ),
            None => eprintln!("{:>3}. {} {}", item.step, item.action, item.details),
        }
    }
    match (&view.result, &view.error) {
        (Some(result), _) if view.status == Status::Success => println!("{}", result.text),
        (_, Some(error)) => eprintln!("task {}: {error}", view.status.as_str()),
        _ => eprintln!("task {}", view.status.as_str()),
    }
    Ok(view.status == Status::Success)
}

/// The one line that shows where the task is.
#[derive(Default)]
struct Progress {
    step: u32,
    max_steps: u32,
    last: String,
    shown: bool,
}

impl Progress {
    fn show(&mut self, event: &TaskEvent) {
        match event {
            TaskEvent::ProgressUpdate { step, max_steps } => {
                self.step = *step;
                self.max_steps = *max_steps;
                self.last = "thinking…".into();
            }
            TaskEvent::ActionExecuted { action, .. } => {
                self.last = match &action.error {
                    Some(error) => format!("{} failed: {error}", action.kind),
                    None => format!("{} {}", action.kind, action.details),
                };
            }
            _ => return,
        }
        let mut line = format!("[step {}/{}] {}", self.step, self.max_steps, self.last);
        line = line.replace('\n', " ");
        if line.chars().count() > 110 {
            line = line.chars().take(109).collect::<String>() + "…";
        }
        let mut err = std::io::stderr();
        // A terminal gets one line redrawn; a log gets a line per change.
        if err.is_terminal() {
            let _ = write!(err, "\r\x1b[2K{line}");
            let _ = err.flush();
            self.shown = true;
        } else {
            let _ = writeln!(err, "{line}");
        }
    }

    fn clear(&self) {
        if self.shown {
            let mut err = std::io::stderr();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}
