//! `wabp-mcp`: the engine as an MCP server (rmcp). Streamable HTTP at `/mcp`
//! on the REST port and stdio (`wabp mcp`). Thin like REST: the tools are
//! the catalogue's operations that have a tool name (`wabp-api`), plugin
//! actions included, plus BrowserLoop's `screenshot` (`screenshot.rs`). When
//! hot reload changes the actions, connected clients get
//! `notifications/tools/list_changed`.

mod content;

use parking_lot::Mutex;
use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use wabp_api::errors::{Voice, said};
use wabp_api::{Catalogue, Services};
use wabp_core::{Caller, Error};

pub use wabp_api::action_tool_name;

/// What every tool call needs, shared by all sessions.
pub struct Context {
    pub services: Services,
    pub catalogue: Arc<Catalogue>,
    /// Sessions on an initialize-based protocol, told about tool changes.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Bumped when the tool list changes (for `subscriptions/listen`).
    tools_version: tokio::sync::watch::Sender<u64>,
}

/// The MCP server: cheap to clone, one per session.
#[derive(Clone)]
pub struct WabpMcp {
    ctx: Arc<Context>,
    /// The caller when a request names none (stdio: `wabp mcp --user-id`).
    default_caller: Caller,
    /// The caller this session acts for, fixed by its first tool call: a
    /// session never switches users.
    session_caller: Arc<std::sync::OnceLock<Caller>>,
}

impl WabpMcp {
    /// A server over `engine`; starts following the plugin registry for tool
    /// list changes (call inside a Tokio runtime).
    pub fn new(services: Services, catalogue: Arc<Catalogue>) -> WabpMcp {
        let ctx = Arc::new(Context {
            services,
            catalogue,
            peers: Mutex::new(Vec::new()),
            tools_version: tokio::sync::watch::channel(0).0,
        });
        tokio::spawn(follow_registry(Arc::downgrade(&ctx)));
        WabpMcp {
            ctx,
            default_caller: Caller::anonymous(),
            session_caller: Default::default(),
        }
    }

    /// The same server acting for `caller` when a request names no user
    /// (`wabp mcp --user-id`).
    pub fn for_caller(mut self, caller: Caller) -> WabpMcp {
        self.default_caller = caller;
        self
    }

    /// A server for a new session: same tools, its own caller.
    pub fn new_session(&self) -> WabpMcp {
        WabpMcp {
            ctx: self.ctx.clone(),
            default_caller: self.default_caller.clone(),
            session_caller: Default::default(),
        }
    }

    /// The caller of one request: the one the HTTP layer resolved (from
    /// `/mcp?userId=`), else the server's default; refused when it is not
    /// the caller the session started with.
    fn caller_for(&self, resolved: Option<&Caller>) -> Result<Caller, Error> {
        let caller = resolved.unwrap_or(&self.default_caller);
        let pinned = self.session_caller.get_or_init(|| caller.clone());
        if pinned != caller {
            return Err(Error::invalid(
                "this MCP session belongs to another userId (or token); start a new session for this one",
            ));
        }
        Ok(caller.clone())
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Every tool: the catalogue's fixed tools, then one per plugin action.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        let catalogue = &self.ctx.catalogue;
        let as_tool = |op: &wabp_api::Operation| {
            let name = op.tool.clone()?;
            let schema = op.input_schema.as_object().cloned().unwrap_or_default();
            Some(rmcp::model::Tool::new(
                name,
                op.description.clone(),
                Arc::new(schema),
            ))
        };
        let mut tools: Vec<_> = catalogue.fixed().iter().filter_map(as_tool).collect();
        tools.extend(catalogue.action_operations().iter().filter_map(as_tool));
        tools
    }

    /// Runs one tool for the session's caller. Failures of any kind (bad
    /// arguments, engine errors, unknown tools, a panic) come back as an
    /// `isError` result.
    pub async fn call(&self, name: &str, arguments: Option<Map<String, Value>>) -> CallToolResult {
        self.call_as(None, name, arguments).await
    }

    async fn call_as(
        &self,
        resolved: Option<&Caller>,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> CallToolResult {
        let caller = match self.caller_for(resolved) {
            Ok(caller) => caller,
            Err(e) => {
                return CallToolResult::error(vec![ContentBlock::text(format!(
                    "{} ({})",
                    e.message,
                    e.code.as_str()
                ))]);
            }
        };
        let ctx = self.ctx.clone();
        let name = name.to_string();
        let args = arguments.unwrap_or_default();
        let started = std::time::Instant::now();
        // The user's session is busy for the whole call (the HTTP layer's
        // count ends when the event stream starts), so it is never evicted
        // mid-call.
        let _activity = caller
            .user_id()
            .map(|user| ctx.services.engine.user_activity(user));
        // Own task: a panic ends this call only.
        let task = tokio::spawn({
            let name = name.clone();
            async move { dispatch(&ctx, &caller, &name, &args).await }
        });
        let outcome = match task.await {
            Ok(result) => result,
            Err(e) => Err(Error::internal(format!(
                "the tool failed unexpectedly: {e}"
            ))),
        };
        tracing::debug!(
            tool = %name,
            ok = outcome.is_ok(),
            ms = started.elapsed().as_millis() as u64,
            "mcp tool call"
        );
        match outcome {
            Ok(content) => CallToolResult::success(content),
            Err(e) => {
                let text = said(&e, Voice::Tools);
                let text = if name == wabp_api::CAPTURE_TOOL {
                    format!("Screenshot capture failed: {text}")
                } else {
                    format!("{text} ({})", e.code.as_str())
                };
                // What to retry with (an approval's id) comes along as JSON.
                let text = match &e.details {
                    Some(details) => format!("{text} {}", Value::Object((**details).clone())),
                    None => text,
                };
                CallToolResult::error(vec![ContentBlock::text(text)])
            }
        }
    }
}

async fn dispatch(
    ctx: &Context,
    caller: &Caller,
    name: &str,
    args: &Map<String, Value>,
) -> wabp_core::Result<Vec<ContentBlock>> {
    let op = ctx.catalogue.by_tool(name).ok_or_else(|| {
        Error::new(
            wabp_core::ErrorCode::NotFound,
            format!("unknown tool {name:?}; list the tools again (plugins may have changed)"),
        )
    })?;
    let output = op
        .run(
            ctx.services.ctx(caller.clone()),
            Value::Object(args.clone()),
        )
        .await?;
    content::content(output, op.presentation)
}

/// Says which actions got no tool or a fallback name: a plugin author would
/// otherwise look for a tool that isn't there.
fn report_unlisted(catalogue: &Catalogue) {
    for (tool, spec) in catalogue.renamed_actions() {
        tracing::warn!(action = %spec.name, %tool, "action's usual tool name is taken; listed under a fallback name");
    }
    for u in catalogue.unlisted_actions() {
        tracing::warn!(action = %u.action, reason = %u.reason, "action not listed as an MCP tool");
    }
}

/// What the tool list depends on, to tell a real change from a reload that
/// changed nothing a client sees.
fn fingerprint(registry: &dyn wabp_core::plugin::PluginRegistry) -> String {
    let mut specs = registry.actions();
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    serde_json::to_string(&specs).unwrap_or_default()
}

/// Follows the registry: when the actions (and so the tools) change, bumps
/// the version and tells every initialize-based session.
async fn follow_registry(ctx: Weak<Context>) {
    let (mut changes, mut last) = {
        let Some(ctx) = ctx.upgrade() else { return };
        let registry = ctx.services.engine.registry();
        report_unlisted(&ctx.catalogue);
        (registry.subscribe_changes(), fingerprint(registry.as_ref()))
    };
    while changes.changed().await.is_ok() {
        let Some(ctx) = ctx.upgrade() else { return };
        let now = fingerprint(ctx.services.engine.registry().as_ref());
        if now == last {
            continue;
        }
        last = now;
        report_unlisted(&ctx.catalogue);
        ctx.tools_version.send_modify(|v| *v += 1);
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = ctx.peers.lock();
            peers.retain(|p| !p.is_transport_closed());
            peers.clone()
        };
        tracing::info!(
            sessions = peers.len(),
            "plugin actions changed; notifying MCP clients"
        );
        for peer in peers {
            // Bounded: a stuck client must not hold up the others.
            let sent =
                tokio::time::timeout(Duration::from_secs(2), peer.notify_tool_list_changed()).await;
            if !matches!(sent, Ok(Ok(()))) {
                tracing::debug!("an MCP session did not take the tools/list_changed notification");
            }
        }
    }
}

impl ServerHandler for WabpMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("wabp", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "wabp drives a real Chromium. Open a tab with browser_new_tab (or use the active \
             one), act with browser_navigate, browser_click, browser_type, ... Each action \
             returns the before and after screenshots (WebP, element markup and a 100 px \
             coordinate grid) and a JSON envelope (events, scroll, timing). Pages are frozen \
             between actions. `screenshot` captures any URL in a temporary tab of its own.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Over HTTP the request's parts carry the caller the HTTP layer
        // resolved (`/mcp?userId=`).
        let resolved = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>());
        Ok(self
            .call_as(resolved, &request.name, request.arguments)
            .await
            .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        Ok(rmcp::model::ListResourcesResult::with_all_items(vec![
            rmcp::model::Resource::new(TABS_RESOURCE, "tabs")
                .with_description("The caller's open tabs: id, url, title, active, pinned, muted")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        if request.uri != TABS_RESOURCE {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}; there is {TABS_RESOURCE}", request.uri),
                None,
            ));
        }
        let resolved = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>());
        let listed = self.call_as(resolved, "browser_list_tabs", None).await;
        let text = listed
            .content
            .iter()
            .find_map(|block| block.as_text().map(|t| t.text.clone()))
            .unwrap_or_default();
        if listed.is_error == Some(true) {
            return Err(ErrorData::internal_error(text, None));
        }
        Ok(rmcp::model::ReadResourceResult::new(vec![
            rmcp::model::ResourceContents::TextResourceContents {
                uri: TABS_RESOURCE.into(),
                mime_type: Some("application/json".into()),
                text,
                meta: None,
            },
        ])
        .into())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut peers = self.ctx.peers.lock();
        peers.retain(|p| !p.is_transport_closed());
        peers.push(context.peer);
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut version = self.ctx.tools_version.subscribe();
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                changed = version.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    if context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// The tab list as an MCP resource, as ABP names it.
const TABS_RESOURCE: &str = "browser://tabs";

/// Ends MCP streams on shutdown (cancel it and every service made with it
/// closes its sessions).
pub use tokio_util::sync::CancellationToken as ShutdownToken;

/// The streamable HTTP service to mount at `/mcp`. `allowed_hosts`: Host
/// header values accepted (a DNS rebinding guard); `None` accepts any (a
/// non-loopback listener, behind a bearer token).
pub fn http_service(
    server: WabpMcp,
    allowed_hosts: Option<Vec<String>>,
    shutdown: &ShutdownToken,
) -> StreamableHttpService<WabpMcp, LocalSessionManager> {
    streamable_service(
        server,
        allowed_hosts,
        StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token()),
    )
}

fn streamable_service(
    server: WabpMcp,
    allowed_hosts: Option<Vec<String>>,
    config: StreamableHttpServerConfig,
) -> StreamableHttpService<WabpMcp, LocalSessionManager> {
    let config = match allowed_hosts {
        Some(hosts) => config.with_allowed_hosts(hosts),
        None => config.disable_allowed_hosts(),
    };
    StreamableHttpService::new(
        move || Ok(server.new_session()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// The same tools over stateless streamable HTTP answering plain
/// `application/json`: for clients that can't read an event stream.
pub fn json_http_service(
    server: WabpMcp,
    allowed_hosts: Option<Vec<String>>,
    shutdown: &ShutdownToken,
) -> StreamableHttpService<WabpMcp, LocalSessionManager> {
    streamable_service(
        server,
        allowed_hosts,
        StreamableHttpServerConfig::default()
            .with_cancellation_token(shutdown.child_token())
            .with_legacy_session_mode(false)
            .with_json_response(true),
    )
}

/// Serves MCP over stdin/stdout until the client closes stdin.
pub async fn serve_stdio(server: WabpMcp) -> anyhow::Result<()> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("MCP stdio session failed to start: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| anyhow::anyhow!("MCP stdio session ended badly: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wabp_api::testing::{DIALOG_IN_THE_WAY, FAIL_INTERNALLY, FakeEngine, NoPlugins};

    /// Over a fake engine: no browser is needed here.
    fn server() -> WabpMcp {
        let registry: Arc<dyn wabp_core::plugin::PluginRegistry> = Arc::new(NoPlugins);
        let engine = Arc::new(FakeEngine::new(registry.clone()));
        WabpMcp::new(
            Services::new(engine, None),
            Arc::new(Catalogue::new(registry)),
        )
    }

    fn text(result: &CallToolResult) -> String {
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn args(value: Value) -> Option<Map<String, Value>> {
        value.as_object().cloned()
    }

    #[tokio::test]
    async fn tools_narrow_by_the_sessions_user_and_say_errors_as_tools() {
        let server = server();
        let alice = server
            .new_session()
            .for_caller(Caller::user("alice").unwrap());
        let bob = server
            .new_session()
            .for_caller(Caller::user("bob").unwrap());
        let opened = alice.call("browser_new_tab", args(json!({}))).await;
        assert_ne!(opened.is_error, Some(true), "{}", text(&opened));
        let tab = serde_json::from_str::<Value>(&text(&opened)).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
        let listed = bob.call("browser_list_tabs", None).await;
        assert!(!text(&listed).contains(&tab), "{}", text(&listed));
        let theirs = bob
            .call("browser_close_tab", args(json!({ "tab_id": tab })))
            .await;
        assert_eq!(theirs.is_error, Some(true));
        assert!(text(&theirs).contains("TAB_NOT_FOUND"), "{}", text(&theirs));

        let dialog = alice
            .call(
                "browser_execute_javascript",
                args(json!({ "tab_id": tab, "expression": DIALOG_IN_THE_WAY })),
            )
            .await;
        assert_eq!(dialog.is_error, Some(true));
        let said = text(&dialog);
        assert!(
            said.contains("browser_dialog") && !said.contains("POST /"),
            "{said}"
        );
        let internal = alice
            .call(
                "browser_execute_javascript",
                args(json!({ "tab_id": tab, "expression": FAIL_INTERNALLY })),
            )
            .await;
        let said = text(&internal);
        assert!(
            said.contains("internal error") && !said.contains("secret-path"),
            "{said}"
        );
        let unknown = alice.call("browser_nope", None).await;
        assert!(
            text(&unknown).contains("unknown tool"),
            "{}",
            text(&unknown)
        );
    }

    #[tokio::test]
    async fn a_session_keeps_the_user_it_started_with() {
        let alice = Caller::user("alice").unwrap();
        let bob = Caller::user("bob").unwrap();
        let session = server().new_session();
        assert_eq!(session.caller_for(Some(&alice)).unwrap(), alice);
        assert_eq!(session.caller_for(Some(&alice)).unwrap(), alice);
        let err = session.caller_for(Some(&bob)).unwrap_err();
        assert!(err.message.contains("another userId"), "{}", err.message);
        assert!(
            session.caller_for(None).is_err(),
            "no user is another user too"
        );
        // A new session may be bob's; stdio's default caller applies when a
        // request names none.
        let other = session.new_session();
        assert_eq!(other.caller_for(Some(&bob)).unwrap(), bob);
        let stdio = server().new_session().for_caller(alice.clone());
        assert_eq!(stdio.caller_for(None).unwrap(), alice);
        let result = stdio.call_as(Some(&bob), "browser_list_tabs", None).await;
        assert_eq!(result.is_error, Some(true));
    }
}
