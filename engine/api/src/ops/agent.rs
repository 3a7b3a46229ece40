//! The agent loop's tasks (`wabp-agent`): start, read, follow, stop. The
//! loop acts through this catalogue, as the caller who started it, so every
//! step is an ordinary operation: scope, approval policy, envelope, history.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use wabp_agent::{
    AgentBrowser, ChosenAction, StartError, TaskEvent, TaskRequest, TaskView, ToolSpec,
};
use wabp_core::{Error, ErrorCode, Result};

use super::{json, to_json};
use crate::{Category, Ctx, Operation, Output, Scope, ServerEvent};

#[derive(Deserialize, JsonSchema)]
struct StartTask {
    /// What to do, in natural language.
    task: String,
    /// The tab to work in; default: the caller's active tab (a new one when
    /// there is none).
    #[serde(default, alias = "tabId", deserialize_with = "crate::input::tab_id")]
    #[schemars(extend("x-aliases" = ["tabId"]))]
    tab_id: Option<String>,
    /// Steps at most (default 25, at most 500).
    #[serde(default, alias = "maxSteps", deserialize_with = "crate::input::whole")]
    #[schemars(with = "Option<u64>", range(min = 1, max = 500))]
    #[schemars(extend("x-aliases" = ["maxSteps"]))]
    max_steps: Option<u64>,
    /// The LLM provider: `{"llmProvider": "openai" | "anthropic" | "google",
    /// "apiKey"?, "model"?, "baseUrl"?}`.
    settings: wabp_agent::Settings,
}

#[derive(Deserialize, JsonSchema)]
struct TaskId {
    /// The task's id (from `POST /agent/tasks`).
    id: String,
}

#[derive(Deserialize, JsonSchema)]
struct ReadTask {
    /// The task's id (from `POST /agent/tasks`).
    id: String,
    /// Wait up to this many ms for the task to end before answering (0 to
    /// 300000; default 0: answer at once).
    #[serde(default, deserialize_with = "crate::input::whole")]
    #[schemars(with = "Option<u64>", range(max = 300000))]
    wait_ms: Option<u64>,
}

/// The caller's task `id`, or 404 (another user's tasks are not theirs to see).
fn task_of(ctx: &Ctx, id: &str) -> Result<Arc<wabp_agent::Task>> {
    ctx.agents
        .get(owner(ctx), id)
        .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("no agent task {id:?}")))
}

fn owner(ctx: &Ctx) -> &str {
    ctx.caller.user_id().unwrap_or("")
}

pub fn operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "agent_start",
            "Start an agent task: an LLM (OpenAI-compatible, Anthropic or Google) reads the page and acts, step by step, until it is done. Returns its id; follow it with browser_agent_status.",
            |ctx, input: StartTask| async move { start(ctx, input).await },
        )
        .post("/agent/tasks")
        .created()
        .tool("browser_agent_start")
        .scope(Scope::Act)
        .answers::<TaskView>(),
        Operation::new(
            "agent_tasks",
            "The caller's agent tasks, oldest first.",
            |ctx, _: super::Nothing| async move {
                json(to_json(&TaskList {
                    tasks: ctx.agents.list(owner(&ctx)),
                })?)
            },
        )
        .get("/agent/tasks")
        .answers::<TaskList>(),
        Operation::new(
            "agent_task",
            "An agent task: status (running, success, error, stopped), step, history of actions, result or error. wait_ms waits for it to end.",
            |ctx, input: ReadTask| async move {
                let task = task_of(&ctx, &input.id)?;
                let wait = input.wait_ms.unwrap_or(0);
                if wait > 300_000 {
                    return Err(Error::invalid("\"wait_ms\" must be at most 300000"));
                }
                let view = task.wait(Duration::from_millis(wait)).await;
                json(to_json(&view)?)
            },
        )
        .get("/agent/tasks/{id}")
        .tool("browser_agent_status")
        .answers::<TaskView>(),
        Operation::new(
            "agent_stop",
            "Stop an agent task; the step in flight is abandoned.",
            |ctx, input: TaskId| async move {
                let task = task_of(&ctx, &input.id)?;
                task.stop();
                let view = task.wait(Duration::from_secs(10)).await;
                json(to_json(&view)?)
            },
        )
        .post("/agent/tasks/{id}/stop")
        .tool("browser_agent_stop")
        .scope(Scope::Act)
        .category(Category::Lifecycle)
        .answers::<TaskView>(),
        Operation::new(
            "agent_events",
            "An agent task's messages as server-sent events (status_update, action_executed, progress_update, task_completed, task_error): those so far, then the rest as they happen; the stream ends with the task.",
            |ctx, input: TaskId| async move {
                let task = task_of(&ctx, &input.id)?;
                let (past, live) = task.subscribe();
                let ended = past.iter().any(TaskEvent::is_last);
                let past = futures::stream::iter(past);
                let live = futures::stream::unfold((live, ended), |(mut live, ended)| async move {
                    if ended {
                        return None;
                    }
                    loop {
                        match live.recv().await {
                            Ok(event) => {
                                let last = event.is_last();
                                return Some((event, (live, last)));
                            }
                            // A slow reader misses some; it still gets the end.
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                        }
                    }
                });
                let events = past.chain(live).map(|event| ServerEvent {
                    event: event.name().to_string(),
                    data: serde_json::to_value(&event).unwrap_or(Value::Null),
                });
                Ok(Output::Events(events.boxed()))
            },
        )
        .get("/agent/tasks/{id}/events")
        .answers_events(),
    ]
}

async fn start(ctx: Ctx, input: StartTask) -> Result<Output> {
    let task = input.task.trim().to_string();
    if task.is_empty() {
        return Err(Error::invalid("\"task\" must say what to do"));
    }
    let max_steps = input
        .max_steps
        .unwrap_or(wabp_agent::DEFAULT_MAX_STEPS as u64);
    if max_steps == 0 || max_steps > wabp_agent::MAX_STEPS_LIMIT as u64 {
        return Err(Error::invalid(format!(
            "\"max_steps\" must be from 1 to {}",
            wabp_agent::MAX_STEPS_LIMIT
        )));
    }
    let llm = wabp_agent::Llm::new(&input.settings)
        .map_err(|e| Error::invalid(format!("settings: {e}")))?;
    let tab_id = match input.tab_id.filter(|t| !t.is_empty()) {
        Some(tab) => {
            // It must be the caller's live tab.
            ctx.engine.tab_info(&ctx.caller, &tab).await?;
            tab
        }
        None => match ctx.engine.active_tab(&ctx.caller) {
            Some(tab) => tab,
            None => {
                ctx.engine
                    .create_tab(&ctx.caller, None, true, None)
                    .await?
                    .id
            }
        },
    };
    let browser = Arc::new(CatalogueBrowser {
        ctx: ctx.clone(),
        tab_id: tab_id.clone(),
    });
    let request = TaskRequest {
        task,
        tab_id,
        max_steps: max_steps as u32,
        owner: owner(&ctx).to_string(),
    };
    let task = ctx.agents.start(request, llm, browser).map_err(|e| match e {
        StartError::TabBusy(id) => Error::new(
            ErrorCode::Conflict,
            format!("the tab already runs agent task {id}; stop it first (POST /agent/tasks/{id}/stop)"),
        ),
    })?;
    json(to_json(&task.view())?)
}

/// The agent's browser: one tab, as the caller who started the task,
/// through the catalogue.
struct CatalogueBrowser {
    ctx: Ctx,
    tab_id: String,
}

impl CatalogueBrowser {
    async fn run(
        &self,
        name: &str,
        mut input: Map<String, Value>,
    ) -> std::result::Result<Output, String> {
        input.insert("tab_id".into(), Value::String(self.tab_id.clone()));
        super::run_operation(&self.ctx, name, Value::Object(input))
            .await
            .map_err(|e| crate::errors::said(&e, crate::errors::Voice::Tools))
    }
}

#[async_trait]
impl AgentBrowser for CatalogueBrowser {
    async fn state(&self) -> std::result::Result<Value, String> {
        match self.run("state", Map::new()).await? {
            Output::Json(value) => Ok(value),
            _ => Err("the state came back in an unexpected shape".into()),
        }
    }

    fn plugin_actions(&self) -> Vec<ToolSpec> {
        self.ctx
            .engine
            .registry()
            .actions()
            .into_iter()
            .map(|spec| ToolSpec {
                name: spec.name,
                description: spec.description,
                params: spec.params_schema,
            })
            .collect()
    }

    async fn act(&self, action: &ChosenAction) -> std::result::Result<Option<String>, String> {
        let mut input = Map::new();
        let name = match action.kind.as_str() {
            "click" | "input_text" | "scroll" => {
                input.insert("action".into(), action.to_json());
                "state_action"
            }
            "navigate" => {
                input.insert(
                    "url".into(),
                    action.params.get("url").cloned().unwrap_or(Value::Null),
                );
                "navigate"
            }
            plugin => {
                input.extend(action.params.clone());
                input.remove("tab_id");
                return match self.run(&format!("action:{plugin}"), input).await {
                    Ok(output) => Ok(action_id(output)),
                    Err(e) => Err(e),
                };
            }
        };
        Ok(action_id(self.run(name, input).await?))
    }
}

fn action_id(output: Output) -> Option<String> {
    match output {
        Output::Envelope(envelope) => envelope.action_id,
        Output::Json(value) => value
            .get("action_id")
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    }
}

/// The caller's agent tasks, oldest first.
#[derive(serde::Serialize, JsonSchema)]
struct TaskList {
    tasks: Vec<wabp_agent::TaskView>,
}
