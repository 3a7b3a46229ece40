//! `wabp-api`: the catalogue of operations. Each operation is declared once,
//! in `ops/`: its name, input type (serde + JSON Schema), output schema, the
//! scope it needs, how it answers, its REST method and path, its MCP tool
//! name and description. The REST router, the MCP tool list and the OpenAPI
//! document are all generated from [`Catalogue::operations`]; plugin actions
//! join at run time with the schema their manifest declares.
//!
//! Frontends only translate: REST gathers path, query and body into one JSON
//! object, MCP hands over the tool arguments; both call [`Catalogue::run`]
//! with the request's [`Caller`], which every operation receives.

pub mod approvals;
pub mod auth;
pub mod backend;
pub mod errors;
mod input;
pub mod metrics;
pub mod openapi;
mod ops;
pub mod testing;

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
pub use wabp_core::Scope;
use wabp_core::plugin::ActionSpec;
pub use wabp_core::plugin::Category;
use wabp_core::plugin::PluginRegistry;
use wabp_core::{Caller, Envelope, Error, Result};
use wabp_history::HistoryStore;

pub use approvals::Door;
pub use auth::{Grant, Tokens};
pub use backend::{ActivityGuard, Backend};
pub use input::{coerce_query, decode};
pub use ops::actions::{ACTION_ROUTE, BUILTIN_PATHS, Unlisted, action_tool_name};
pub use ops::capture::{ScreenshotDefaults, TOOL_NAME as CAPTURE_TOOL};
pub use wabp_core::rules::url::canonical_url;

/// What operations use, shared by every request.
#[derive(Clone)]
pub struct Services {
    pub engine: Arc<dyn Backend>,
    /// The flight recorder, when the engine keeps one.
    pub history: Option<HistoryStore>,
    /// Told when `POST /browser/shutdown` has shut the browser down.
    pub shutdown: Arc<tokio::sync::Notify>,
    /// The operator's policy file as JSON (`{}` without one), handed to
    /// every policy plugin.
    pub policy_settings: Arc<str>,
    /// Approvals policies asked for.
    pub approvals: Arc<approvals::Approvals>,
    /// The agent loop's tasks.
    pub agents: Arc<wabp_agent::Tasks>,
    /// The one-shot screenshot's defaults (`WABP_SCREENSHOT_*`).
    pub screenshot_defaults: Arc<ScreenshotDefaults>,
    /// What `GET /metrics` reports.
    pub metrics: Arc<metrics::Metrics>,
}

impl Services {
    /// Services without a history, a policy file or approvals yet.
    pub fn new(engine: Arc<dyn Backend>, history: Option<HistoryStore>) -> Services {
        Services {
            engine,
            history,
            shutdown: Arc::new(tokio::sync::Notify::new()),
            policy_settings: "{}".into(),
            approvals: Default::default(),
            agents: Default::default(),
            screenshot_defaults: Arc::new(ScreenshotDefaults::from_env()),
            metrics: Default::default(),
        }
    }

    /// The context of one call for `caller`.
    pub fn ctx(&self, caller: Caller) -> Ctx {
        Ctx {
            engine: self.engine.clone(),
            history: self.history.clone(),
            caller,
            shutdown: self.shutdown.clone(),
            policy_settings: self.policy_settings.clone(),
            approvals: self.approvals.clone(),
            agents: self.agents.clone(),
            screenshot_defaults: self.screenshot_defaults.clone(),
            metrics: self.metrics.clone(),
            hang_up: Default::default(),
        }
    }
}

/// What every operation may use, with the caller it acts for.
#[derive(Clone)]
pub struct Ctx {
    pub engine: Arc<dyn Backend>,
    /// The flight recorder, when the engine keeps one.
    pub history: Option<HistoryStore>,
    pub caller: Caller,
    /// Told when `POST /browser/shutdown` has shut the browser down, so the
    /// server can exit.
    pub shutdown: Arc<tokio::sync::Notify>,
    pub policy_settings: Arc<str>,
    pub approvals: Arc<approvals::Approvals>,
    pub agents: Arc<wabp_agent::Tasks>,
    pub screenshot_defaults: Arc<ScreenshotDefaults>,
    pub metrics: Arc<metrics::Metrics>,
    /// Cancelled when the call's answer is no longer awaited (the client
    /// hung up); waits end on it (see [`Operation::run`]).
    pub hang_up: tokio_util::sync::CancellationToken,
}

/// The HTTP method of a REST route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Post => "post",
            Method::Delete => "delete",
        }
    }
}

/// An operation's REST route under `/api/v1`. Path parameters (`{tab_id}`)
/// are fields of the operation's input.
#[derive(Debug, Clone)]
pub struct RestRoute {
    pub method: Method,
    pub path: String,
    /// The status of a success (201 for creations, else 200).
    pub status: u16,
}

/// What a run produces; frontends shape it (REST: JSON or bytes; MCP:
/// content blocks).
pub enum Output {
    /// An action envelope: before/after screenshots, events, scroll, timing.
    Envelope(Envelope),
    Json(Value),
    /// Bytes with their media type (`image/webp`).
    Bytes {
        mime: &'static str,
        bytes: Vec<u8>,
    },
    /// Server-sent events (REST only): named events with JSON data, until
    /// the stream ends.
    Events(futures::stream::BoxStream<'static, ServerEvent>),
}

/// One server-sent event.
pub struct ServerEvent {
    pub event: String,
    pub data: Value,
}

/// How an MCP client is best shown a JSON answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presentation {
    /// The JSON as text; a `screenshot.data` becomes an image and a
    /// `snapshot` string its own text block.
    Json,
    /// Only this string field, as plain text (`browser_get_text`).
    TextField(&'static str),
    /// `screenshot.data` as an image first, then the rest as compact JSON
    /// (BrowserLoop's `screenshot` tool).
    ImageFirst,
}

type RunFn = Arc<dyn Fn(Ctx, Value) -> BoxFuture<'static, Result<Output>> + Send + Sync>;

/// One operation of the catalogue.
#[derive(Clone)]
pub struct Operation {
    /// Unique, e.g. `navigate`, `action:click`.
    pub name: String,
    pub description: String,
    pub rest: Option<RestRoute>,
    pub tool: Option<String>,
    pub scope: Scope,
    /// What approval policies are told it does.
    pub category: Category,
    /// Answers an action envelope.
    pub envelope: bool,
    /// Its policies are asked by the operations it runs, each with its own
    /// category (the browser tool), not once for it.
    doors_inside: bool,
    pub presentation: Presentation,
    /// JSON Schema of the input object (path parameters included).
    pub input_schema: Value,
    /// Fields the input schema does not name are refused (typed inputs;
    /// a plugin action's params are its plugin's to check).
    strict_fields: bool,
    /// JSON Schema of a successful answer.
    pub output_schema: Value,
    run: RunFn,
}

impl Operation {
    /// An operation whose input is `I`, run by `run`.
    pub fn new<I, F, Fut>(name: &str, description: &str, run: F) -> Operation
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(Ctx, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Output>> + Send + 'static,
    {
        let run = Arc::new(run);
        Operation {
            name: name.to_string(),
            description: description.to_string(),
            rest: None,
            tool: None,
            scope: Scope::Read,
            category: Category::Read,
            envelope: false,
            doors_inside: false,
            presentation: Presentation::Json,
            input_schema: {
                let mut schema = input::schema_of::<I>();
                input::bound_strings(&mut schema);
                schema
            },
            strict_fields: true,
            output_schema: json!({}),
            run: Arc::new(move |ctx, value| {
                let run = run.clone();
                Box::pin(async move {
                    let input: I = decode(value)?;
                    run(ctx, input).await
                })
            }),
        }
    }

    /// An operation with a ready-made input schema, run on the raw JSON
    /// object (plugin actions: their schema comes from their manifest).
    pub fn untyped<F, Fut>(name: &str, description: &str, schema: Value, run: F) -> Operation
    where
        F: Fn(Ctx, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Output>> + Send + 'static,
    {
        let mut op = Operation::new(name, description, run);
        op.input_schema = schema;
        input::bound_strings(&mut op.input_schema);
        op.strict_fields = false;
        op.scope = Scope::Act;
        op.category = Category::Mutation;
        op
    }

    fn route(mut self, method: Method, path: &str) -> Self {
        self.rest = Some(RestRoute {
            method,
            path: path.to_string(),
            status: 200,
        });
        self
    }

    pub fn get(self, path: &str) -> Self {
        self.route(Method::Get, path)
    }

    pub fn post(self, path: &str) -> Self {
        self.route(Method::Post, path)
    }

    pub fn delete(self, path: &str) -> Self {
        self.route(Method::Delete, path)
    }

    /// A success answers `status` (201 for a creation).
    pub fn created(mut self) -> Self {
        if let Some(rest) = &mut self.rest {
            rest.status = 201;
        }
        self
    }

    pub fn tool(mut self, name: &str) -> Self {
        self.tool = Some(name.to_string());
        self
    }

    /// The scope it needs; its policy category follows unless set after.
    pub fn scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self.category = match scope {
            Scope::Read => Category::Read,
            Scope::Act => Category::Mutation,
            Scope::Script => Category::Script,
            Scope::Admin => Category::Lifecycle,
        };
        self
    }

    /// What approval policies are told it does.
    pub fn category(mut self, category: Category) -> Self {
        self.category = category;
        self
    }

    /// Policies are asked by the operations it runs, not for it.
    pub fn doors_inside(mut self) -> Self {
        self.doors_inside = true;
        self
    }

    /// Answers with `O` (its JSON Schema documents the answer).
    pub fn answers<O: JsonSchema>(mut self) -> Self {
        self.output_schema = input::schema_of::<O>();
        self
    }

    /// Answers an action envelope.
    pub fn answers_envelope(mut self) -> Self {
        self.envelope = true;
        self.output_schema = input::schema_of::<Envelope>();
        self
    }

    /// Answers JSON this schema describes (a document with a shape of
    /// its own).
    pub fn answers_schema(mut self, schema: Value) -> Self {
        self.output_schema = schema;
        self
    }

    /// Answers bytes of this media type.
    pub fn answers_bytes(mut self, mime: &str) -> Self {
        self.output_schema =
            json!({ "type": "string", "format": "binary", "contentMediaType": mime });
        self
    }

    /// Answers a stream of server-sent events.
    pub fn answers_events(mut self) -> Self {
        self.output_schema = json!({ "type": "string", "contentMediaType": "text/event-stream" });
        self
    }

    /// Whether fields the input schema does not name are refused.
    pub fn strict_fields(mut self, strict: bool) -> Self {
        self.strict_fields = strict;
        self
    }

    pub fn presented(mut self, presentation: Presentation) -> Self {
        self.presentation = presentation;
        self
    }

    /// Runs the operation on `input` (a JSON object) for `ctx.caller`. In
    /// its own task: a panic or a client that hangs up ends only this call.
    ///
    /// Dropping the returned future (a client that hangs up drops its
    /// request's) cancels `ctx.hang_up`: an action still completes and is
    /// recorded, a wait ends at once and frees its tab.
    pub async fn run(&self, ctx: Ctx, input: Value) -> Result<Output> {
        // Counted until it answers: a draining engine waits for it.
        let _in_flight = ctx.engine.drain().begin();
        let metrics = ctx.metrics.clone();
        let started = std::time::Instant::now();
        let outcome = self.run_counted(ctx, input).await;
        metrics.operation_done(&self.name, started.elapsed(), &outcome);
        outcome
    }

    async fn run_counted(&self, mut ctx: Ctx, mut input: Value) -> Result<Output> {
        let hang_up = tokio_util::sync::CancellationToken::new();
        ctx.hang_up = hang_up.clone();
        let _cancel_on_drop = hang_up.drop_guard();
        ctx.caller.may(self.scope, &self.name)?;
        if self.strict_fields {
            input::check_fields(&self.input_schema, &input)?;
        }
        input::check_strings(&self.input_schema, &input)?;
        if !self.doors_inside {
            ctx.pass_policies(approvals::Door {
                operation: &self.name,
                category: self.category,
                input: &input,
                caller: &ctx.caller,
            })
            .await?;
            if let Some(fields) = input.as_object_mut() {
                fields.remove("approval_id");
            }
        }
        let run = self.run.clone();
        tokio::spawn(async move { run(ctx, input).await })
            .await
            .unwrap_or_else(|e| {
                Err(Error::internal(format!(
                    "the operation failed unexpectedly: {e}"
                )))
            })
    }
}

/// The operations an engine serves: the fixed ones, then one per plugin
/// action in the registry now.
pub struct Catalogue {
    fixed: Vec<Operation>,
    registry: Arc<dyn PluginRegistry>,
}

impl Catalogue {
    pub fn new(registry: Arc<dyn PluginRegistry>) -> Catalogue {
        Catalogue {
            fixed: ops::fixed(),
            registry,
        }
    }

    /// Every operation now (plugin actions follow hot reloads).
    pub fn operations(&self) -> Vec<Operation> {
        let mut all = self.fixed.clone();
        all.extend(self.action_operations());
        all
    }

    /// The fixed operations only (their routes never change).
    pub fn fixed(&self) -> &[Operation] {
        &self.fixed
    }

    /// One operation per plugin action, with its MCP tool name.
    pub fn action_operations(&self) -> Vec<Operation> {
        let taken: Vec<&str> = self
            .fixed
            .iter()
            .filter_map(|o| o.tool.as_deref())
            .collect();
        let (named, _) = ops::actions::named_actions(self.registry.as_ref(), &taken);
        named
            .into_iter()
            .map(|(tool, spec)| ops::actions::operation(&spec).tool(&tool))
            .collect()
    }

    /// Actions that got no MCP tool (their names are taken or invalid).
    pub fn unlisted_actions(&self) -> Vec<Unlisted> {
        let taken: Vec<&str> = self
            .fixed
            .iter()
            .filter_map(|o| o.tool.as_deref())
            .collect();
        ops::actions::named_actions(self.registry.as_ref(), &taken).1
    }

    /// Actions listed under a fallback tool name (their usual one is taken).
    pub fn renamed_actions(&self) -> Vec<(String, ActionSpec)> {
        let taken: Vec<&str> = self
            .fixed
            .iter()
            .filter_map(|o| o.tool.as_deref())
            .collect();
        ops::actions::named_actions(self.registry.as_ref(), &taken)
            .0
            .into_iter()
            .filter(|(tool, spec)| *tool != action_tool_name(&spec.name))
            .collect()
    }

    /// The operation named `name` (`navigate`, `snapshot`, ...), or plugin
    /// action `x` as `action:x`.
    pub fn operation(&self, name: &str) -> Result<Operation> {
        ops::find_operation(&self.fixed, self.registry.as_ref(), name)
    }

    /// The operation behind an MCP tool name.
    pub fn by_tool(&self, tool: &str) -> Option<Operation> {
        if let Some(op) = self.fixed.iter().find(|o| o.tool.as_deref() == Some(tool)) {
            return Some(op.clone());
        }
        self.action_operations()
            .into_iter()
            .find(|o| o.tool.as_deref() == Some(tool))
    }

    /// The operation of a plugin action by name (`POST /tabs/{id}/actions/{name}`).
    pub fn action(&self, name: &str) -> Result<Operation> {
        self.registry
            .actions()
            .into_iter()
            .find(|spec| spec.name == name)
            .map(|spec| ops::actions::operation(&spec))
            .ok_or_else(|| {
                Error::new(
                    wabp_core::ErrorCode::NotFound,
                    format!(
                        "no action named {name:?}; GET /api/v1/plugins lists the available actions"
                    ),
                )
            })
    }
}

/// A history error as the engine's error (codes and statuses as ABP's).
pub(crate) fn history_error(err: wabp_history::Error) -> Error {
    use wabp_core::ErrorCode;
    let code = match &err {
        wabp_history::Error::InvalidFilter { .. } => ErrorCode::InvalidRequest,
        wabp_history::Error::NotFound { .. } => ErrorCode::NotFound,
        _ => ErrorCode::Internal,
    };
    Error::new(code, format!("history: {err}"))
}
