//! A task and its loop: state -> model -> action until `done`, the step
//! limit, three failed steps in a row, a fatal provider error or `stop`;
//! every change told as the browser-use extension's messages.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, watch};

pub use crate::history::HistoryItem;
use crate::prompt::{self, ToolSpec};
use crate::provider::{Llm, PublicSettings};
use crate::reply::{ChosenAction, parse_action};

/// Steps a task takes at most unless told otherwise.
pub const DEFAULT_MAX_STEPS: u32 = 25;
/// The most a task may be given.
pub const MAX_STEPS_LIMIT: u32 = 500;
/// Failed steps in a row that end a task.
pub const MAX_CONSECUTIVE_FAILURES: u32 = 3;
/// Finished tasks kept for `GET` (the oldest go first).
const KEEP_FINISHED: usize = 200;

/// The browser a task acts on: one tab, as one caller.
#[async_trait]
pub trait AgentBrowser: Send + Sync + 'static {
    /// The page's state: `url`, `title`, `elements` (with `index`),
    /// `textContent`, `scrollY`, `scrollHeight`, `viewportHeight`.
    async fn state(&self) -> Result<Value, String>;
    /// The plugin actions now loaded (asked each step: plugins come and go).
    fn plugin_actions(&self) -> Vec<ToolSpec>;
    /// Runs `action`: `click`, `input_text`, `scroll`, `navigate` or a
    /// plugin action. Answers the history record's id.
    async fn act(&self, action: &ChosenAction) -> Result<Option<String>, String>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Running,
    Success,
    Error,
    Stopped,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Success => "success",
            Status::Error => "error",
            Status::Stopped => "stopped",
        }
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaskResult {
    pub text: String,
    pub success: bool,
}

/// What `GET /agent/tasks/{id}` answers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaskView {
    pub id: String,
    pub status: Status,
    pub task: String,
    pub tab_id: String,
    pub step: u32,
    #[serde(rename = "maxSteps")]
    pub max_steps: u32,
    pub history: Vec<HistoryItem>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<TaskResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub settings: PublicSettings,
}

/// The action of an `action_executed` message.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExecutedAction {
    #[serde(rename = "type")]
    pub kind: String,
    pub details: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The browser-use extension's background → popup messages.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TaskEvent {
    StatusUpdate {
        status: Status,
        text: String,
    },
    ActionExecuted {
        action: ExecutedAction,
        step: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        action_id: Option<String>,
    },
    ProgressUpdate {
        step: u32,
        #[serde(rename = "maxSteps")]
        max_steps: u32,
    },
    TaskCompleted {
        result: TaskResult,
    },
    TaskError {
        error: String,
    },
}

impl TaskEvent {
    pub fn name(&self) -> &'static str {
        match self {
            TaskEvent::StatusUpdate { .. } => "status_update",
            TaskEvent::ActionExecuted { .. } => "action_executed",
            TaskEvent::ProgressUpdate { .. } => "progress_update",
            TaskEvent::TaskCompleted { .. } => "task_completed",
            TaskEvent::TaskError { .. } => "task_error",
        }
    }

    /// Whether nothing follows it.
    pub fn is_last(&self) -> bool {
        match self {
            TaskEvent::StatusUpdate { status, .. } => *status != Status::Running,
            _ => false,
        }
    }
}

/// What starts a task.
pub struct TaskRequest {
    pub task: String,
    pub tab_id: String,
    pub max_steps: u32,
    /// The user it acts for; only they see it.
    pub owner: String,
}

/// One task: its view, its messages so far and the live ones.
pub struct Task {
    pub id: String,
    pub owner: String,
    inner: Mutex<Inner>,
    live: broadcast::Sender<TaskEvent>,
    stop: watch::Sender<bool>,
    /// Set once the task has ended. Set with `send_replace`: `send` changes
    /// nothing while no one is waiting, and the task then stayed "running"
    /// (its tab refused new tasks; a stop waited out its 10 s).
    finished: watch::Sender<bool>,
}

struct Inner {
    view: TaskView,
    events: Vec<TaskEvent>,
}

impl Task {
    pub fn view(&self) -> TaskView {
        self.inner.lock().view.clone()
    }

    pub fn is_running(&self) -> bool {
        !*self.finished.borrow()
    }

    /// Asks the loop to stop; it ends within the step in flight (a model
    /// call or an action is abandoned, not waited out).
    pub fn stop(&self) {
        let _ = self.stop.send(true);
    }

    /// The view once the task has ended, or after `timeout`.
    pub async fn wait(&self, timeout: Duration) -> TaskView {
        let mut finished = self.finished.subscribe();
        let _ = tokio::time::timeout(timeout, finished.wait_for(|done| *done)).await;
        self.view()
    }

    /// The messages so far and a receiver of those that follow (taken
    /// together, so none is missed or told twice).
    pub fn subscribe(&self) -> (Vec<TaskEvent>, broadcast::Receiver<TaskEvent>) {
        let inner = self.inner.lock();
        (inner.events.clone(), self.live.subscribe())
    }

    fn tell(&self, event: TaskEvent) {
        let mut inner = self.inner.lock();
        inner.events.push(event.clone());
        let _ = self.live.send(event);
    }

    fn update(&self, change: impl FnOnce(&mut TaskView)) {
        change(&mut self.inner.lock().view);
    }
}

/// Why a task could not start.
#[derive(Debug)]
pub enum StartError {
    /// The tab already runs a task (its id).
    TabBusy(String),
}

/// Every task of the engine.
#[derive(Default)]
pub struct Tasks {
    tasks: Mutex<VecDeque<Arc<Task>>>,
}

impl Tasks {
    /// Starts `request` with `llm` on `browser`; the loop runs on its own.
    pub fn start(
        &self,
        request: TaskRequest,
        llm: Llm,
        browser: Arc<dyn AgentBrowser>,
    ) -> Result<Arc<Task>, StartError> {
        let mut tasks = self.tasks.lock();
        if let Some(busy) = tasks
            .iter()
            .find(|t| t.is_running() && t.view().tab_id == request.tab_id)
        {
            return Err(StartError::TabBusy(busy.id.clone()));
        }
        let id = format!("task_{}", random_id());
        let view = TaskView {
            id: id.clone(),
            status: Status::Running,
            task: request.task.clone(),
            tab_id: request.tab_id.clone(),
            step: 0,
            max_steps: request.max_steps,
            history: Vec::new(),
            result: None,
            error: None,
            settings: llm.public_settings(),
        };
        let task = Arc::new(Task {
            id,
            owner: request.owner,
            inner: Mutex::new(Inner {
                view,
                events: Vec::new(),
            }),
            live: broadcast::channel(256).0,
            stop: watch::channel(false).0,
            finished: watch::channel(false).0,
        });
        tasks.push_back(task.clone());
        // Forget the oldest finished tasks past the limit.
        while tasks.len() > KEEP_FINISHED {
            match tasks.iter().position(|t| !t.is_running()) {
                Some(i) => {
                    tasks.remove(i);
                }
                None => break,
            }
        }
        drop(tasks);
        let running = task.clone();
        tokio::spawn(async move {
            let task = running.clone();
            // A panic in the loop still ends the task, as an error.
            let outcome = tokio::spawn(run(running, llm, browser)).await;
            if let Err(e) = outcome {
                finish_error(&task, format!("the agent loop failed unexpectedly: {e}"));
            }
        });
        Ok(task)
    }

    /// `owner`'s task `id`.
    pub fn get(&self, owner: &str, id: &str) -> Option<Arc<Task>> {
        self.tasks
            .lock()
            .iter()
            .find(|t| t.id == id && t.owner == owner)
            .cloned()
    }

    /// `owner`'s tasks, oldest first.
    pub fn list(&self, owner: &str) -> Vec<TaskView> {
        self.tasks
            .lock()
            .iter()
            .filter(|t| t.owner == owner)
            .map(|t| t.view())
            .collect()
    }

    /// Stops every running task (the engine is going away).
    pub fn stop_all(&self) {
        for task in self.tasks.lock().iter() {
            task.stop();
        }
    }
}

fn random_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    format!("{:016x}", hasher.finish())
}

/// What one step came to.
enum StepEnd {
    Continue,
    Finished,
}

/// The loop.
async fn run(task: Arc<Task>, llm: Llm, browser: Arc<dyn AgentBrowser>) {
    let mut stop = task.stop.subscribe();
    let view = task.view();
    task.tell(TaskEvent::StatusUpdate {
        status: Status::Running,
        text: format!("Starting: {}", view.task),
    });
    let mut failures = 0u32;
    for step in 1..=view.max_steps {
        if *stop.borrow() {
            break;
        }
        task.update(|v| v.step = step);
        task.tell(TaskEvent::ProgressUpdate {
            step,
            max_steps: view.max_steps,
        });
        let outcome = tokio::select! {
            outcome = one_step(&task, &llm, browser.as_ref(), step) => outcome,
            _ = stop.wait_for(|s| *s) => break,
        };
        match outcome {
            Ok(StepEnd::Finished) => return,
            Ok(StepEnd::Continue) => failures = 0,
            Err(StepFailure::Fatal(error)) => return finish_error(&task, error),
            Err(StepFailure::Step(error)) => {
                failures += 1;
                if failures >= MAX_CONSECUTIVE_FAILURES {
                    return finish_error(
                        &task,
                        format!("Stopped after {failures} consecutive errors; the last: {error}"),
                    );
                }
            }
        }
    }
    if *stop.borrow() {
        task.update(|v| v.status = Status::Stopped);
        task.tell(TaskEvent::StatusUpdate {
            status: Status::Stopped,
            text: "Stopped".into(),
        });
        task.finished.send_replace(true);
        return;
    }
    finish_error(&task, format!("Reached max steps ({})", view.max_steps));
}

enum StepFailure {
    /// Counts toward the consecutive failures.
    Step(String),
    /// Ends the task (a key the provider refuses).
    Fatal(String),
}

async fn one_step(
    task: &Task,
    llm: &Llm,
    browser: &dyn AgentBrowser,
    step: u32,
) -> Result<StepEnd, StepFailure> {
    let view = task.view();
    let mut clock = StepClock {
        started: Instant::now(),
        model_ms: None,
    };
    let state = match browser.state().await {
        Ok(state) => state,
        Err(e) => {
            let error = format!("Failed to get_state: {e}");
            return failed(task, step, "get_state", String::new(), error, &clock);
        }
    };
    let plugin_actions: Vec<ToolSpec> = browser
        .plugin_actions()
        .into_iter()
        .filter(|spec| {
            !prompt::built_in_actions()
                .iter()
                .any(|b| b.name == spec.name)
        })
        .collect();
    let system = prompt::system_prompt(&plugin_actions);
    let user = prompt::step_prompt(&view.task, step, view.max_steps, &state, &view.history);
    let asked = Instant::now();
    let answer = llm.complete(&system, &user).await;
    clock.model_ms = Some(asked.elapsed().as_secs_f64() * 1000.0);
    let answer = match answer {
        Ok(answer) => answer,
        Err(e) => {
            let error = e.to_string();
            record(
                task,
                step,
                "llm",
                String::new(),
                Some(error.clone()),
                None,
                &clock,
            );
            return Err(if e.fatal {
                StepFailure::Fatal(error)
            } else {
                StepFailure::Step(error)
            });
        }
    };
    let action = match parse_action(&answer) {
        Ok(action) => action,
        Err(reason) => {
            let error = format!("Failed to parse LLM response: {reason}");
            return failed(task, step, "llm", String::new(), error, &clock);
        }
    };
    let details = details_of(&action, &state);
    if action.kind == "done" {
        let text = match action.params.get("text") {
            Some(Value::String(text)) => text.clone(),
            Some(other) if !other.is_null() => other.to_string(),
            _ => String::new(),
        };
        let success = action
            .params
            .get("success")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        record(task, step, "done", details, None, None, &clock);
        let result = TaskResult { text, success };
        task.update(|v| {
            v.result = Some(result.clone());
            v.status = if success {
                Status::Success
            } else {
                Status::Error
            };
            if !success {
                v.error = Some(format!(
                    "The agent could not complete the task: {}",
                    result.text
                ));
            }
        });
        task.tell(TaskEvent::TaskCompleted {
            result: result.clone(),
        });
        task.tell(TaskEvent::StatusUpdate {
            status: if success {
                Status::Success
            } else {
                Status::Error
            },
            text: result.text.clone(),
        });
        task.finished.send_replace(true);
        return Ok(StepEnd::Finished);
    }
    let known = action.kind == "search"
        || prompt::built_in_actions()
            .iter()
            .any(|b| b.name == action.kind)
        || plugin_actions.iter().any(|p| p.name == action.kind);
    if !known {
        let error = format!(
            "Failed to {}: no such action; choose one of the actions listed",
            action.kind
        );
        return failed(task, step, &action.kind, details, error, &clock);
    }
    let action = match checked(action, &state) {
        Ok(action) => action,
        Err((action, error)) => {
            return failed(task, step, &action.kind, details, error, &clock);
        }
    };
    match browser.act(&action).await {
        Ok(action_id) => {
            record(task, step, &action.kind, details, None, action_id, &clock);
            Ok(StepEnd::Continue)
        }
        Err(reason) => {
            let error = format!("Failed to {}: {reason}", action.kind);
            failed(task, step, &action.kind, details, error, &clock)
        }
    }
}

/// The action with its element checked against the state the model saw
/// ("Element with index N not found") and `search` made a navigation.
fn checked(
    mut action: ChosenAction,
    state: &Value,
) -> Result<ChosenAction, (ChosenAction, String)> {
    let needs_index = matches!(action.kind.as_str(), "click" | "input_text");
    let index = action.params.get("index").cloned();
    if needs_index || index.is_some() {
        let n = match &index {
            Some(v) => v
                .as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok())),
            None => None,
        };
        let Some(n) = n else {
            let error = format!(
                "Failed to {}: \"index\" must be an element index from the page state",
                action.kind
            );
            return Err((action, error));
        };
        if element(state, n).is_none() {
            return Err((action, format!("Element with index {n} not found")));
        }
        action.params.insert("index".into(), json!(n));
    }
    if action.kind == "input_text" && !action.params.get("text").is_some_and(Value::is_string) {
        return Err((
            action,
            "Failed to input_text: \"text\" must be a string".into(),
        ));
    }
    if action.kind == "navigate" && !action.params.get("url").is_some_and(Value::is_string) {
        return Err((
            action,
            "Failed to navigate: \"url\" must be a string".into(),
        ));
    }
    if action.kind == "search" {
        let Some(query) = action.params.get("query").and_then(Value::as_str) else {
            return Err((
                action,
                "Failed to search: \"query\" must be a string".into(),
            ));
        };
        let engine = action
            .params
            .get("engine")
            .and_then(Value::as_str)
            .unwrap_or("duckduckgo");
        let base = match engine {
            "google" => "https://www.google.com/search?q=",
            "bing" => "https://www.bing.com/search?q=",
            "duckduckgo" => "https://duckduckgo.com/html/?q=",
            other => {
                let error = format!(
                    "Failed to search: unknown engine {other:?} (duckduckgo, google or bing)"
                );
                return Err((action, error));
            }
        };
        let url = format!("{base}{}", encode_query(query));
        let mut params = Map::new();
        params.insert("url".into(), Value::String(url));
        return Ok(ChosenAction {
            kind: "navigate".into(),
            params,
        });
    }
    Ok(action)
}

fn element(state: &Value, index: u64) -> Option<&Value> {
    state
        .get("elements")?
        .as_array()?
        .iter()
        .find(|e| e.get("index").and_then(Value::as_u64) == Some(index))
}

fn encode_query(query: &str) -> String {
    let mut out = String::new();
    for byte in query.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// A line for people: what the action was and on what.
fn details_of(action: &ChosenAction, state: &Value) -> String {
    let target = action
        .params
        .get("index")
        .and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .map(|n| match element(state, n) {
            Some(e) => prompt::describe_element(e),
            None => format!("[{n}]"),
        });
    let password = action
        .params
        .get("index")
        .and_then(Value::as_u64)
        .and_then(|n| element(state, n))
        .is_some_and(|e| e.get("type").and_then(Value::as_str) == Some("password"));
    match action.kind.as_str() {
        "click" => target.unwrap_or_default(),
        "input_text" => {
            // Typed passwords stay out of the task's history.
            let text = if password {
                "\"••••\"".to_string()
            } else {
                format!(
                    "{:?}",
                    action
                        .params
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                )
            };
            format!("{text} into {}", target.unwrap_or_default())
        }
        "navigate" => format!(
            "go to {}",
            action
                .params
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or("")
        ),
        "search" => format!(
            "search for {:?}",
            action
                .params
                .get("query")
                .and_then(Value::as_str)
                .unwrap_or("")
        ),
        "scroll" => {
            let down = action
                .params
                .get("down")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            let pages = action
                .params
                .get("pages")
                .and_then(Value::as_f64)
                .unwrap_or(1.0);
            format!(
                "scroll {} {pages} page(s)",
                if down { "down" } else { "up" }
            )
        }
        "done" => action
            .params
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        _ => {
            let mut params = action.params.clone();
            for key in ["text", "value", "password"] {
                if password && params.contains_key(key) {
                    params.insert(key.into(), json!("••••"));
                }
            }
            Value::Object(params).to_string()
        }
    }
}

/// When a step began and how long its model took.
struct StepClock {
    started: Instant,
    model_ms: Option<f64>,
}

fn record(
    task: &Task,
    step: u32,
    action: &str,
    details: String,
    error: Option<String>,
    action_id: Option<String>,
    clock: &StepClock,
) {
    let item = HistoryItem {
        step,
        action: action.to_string(),
        details: details.clone(),
        error: error.clone(),
        action_id: action_id.clone(),
        duration_ms: (clock.started.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
        model_ms: clock.model_ms.map(|ms| (ms * 10.0).round() / 10.0),
    };
    task.update(|v| v.history.push(item));
    task.tell(TaskEvent::ActionExecuted {
        action: ExecutedAction {
            kind: action.to_string(),
            details,
            error,
        },
        step,
        action_id,
    });
}

/// Records a failed step and answers it as one (it counts toward the
/// consecutive failures).
fn failed(
    task: &Task,
    step: u32,
    action: &str,
    details: String,
    error: String,
    clock: &StepClock,
) -> Result<StepEnd, StepFailure> {
    record(
        task,
        step,
        action,
        details,
        Some(error.clone()),
        None,
        clock,
    );
    Err(StepFailure::Step(error))
}

fn finish_error(task: &Task, error: String) {
    task.update(|v| {
        v.status = Status::Error;
        v.error = Some(error.clone());
    });
    task.tell(TaskEvent::TaskError {
        error: error.clone(),
    });
    task.tell(TaskEvent::StatusUpdate {
        status: Status::Error,
        text: error,
    });
    task.finished.send_replace(true);
}
