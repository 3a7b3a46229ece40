//! Network capture: the saved calls (`/network*`), a tab's live buffer,
//! and requests made by the page itself (`curl`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use wabp_core::{Error, ErrorCode, Result};
use wabp_history::{HistoryStore, NetworkFilter, RowOwner};

use super::{TabRef, json};
use crate::{Ctx, Operation, Scope, history_error};

fn store(ctx: &Ctx) -> Result<&HistoryStore> {
    ctx.history.as_ref().ok_or_else(|| {
        Error::new(
            ErrorCode::NotFound,
            "network calls are not saved by this engine",
        )
    })
}

/// The caller's own saved calls only.
fn narrowed(ctx: &Ctx, filter: NetworkFilter) -> NetworkFilter {
    NetworkFilter {
        owner: RowOwner::Only(ctx.caller.user_id().map(str::to_string)),
        ..filter
    }
}

#[derive(Deserialize, JsonSchema)]
struct NewInterceptRule {
    /// A glob over the whole URL (`*` any run of characters, `?` one), e.g.
    /// `*/api/*` or `https://*.tracker.example/*`.
    #[serde(default)]
    url_pattern: Option<String>,
    /// Only this tab's requests (default: every tab of the caller's).
    #[serde(default)]
    tab_id: Option<String>,
    /// `fulfill` (answer it: status, headers, body), `abort` (fail it as
    /// blocked) or `continue` (let it go, with `headers` set on it).
    #[serde(default)]
    action: Option<wabp_core::intercept::InterceptAction>,
    /// `fulfill`: the response status (default 200).
    #[serde(default)]
    status: Option<u16>,
    /// `fulfill`: response headers; `continue`: request headers to set.
    #[serde(default)]
    headers: Option<std::collections::BTreeMap<String, String>>,
    /// `fulfill`: the response body, as text.
    #[serde(default)]
    #[schemars(length(max = 4_194_304))]
    body: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct DeleteInterceptRules {
    /// Only this rule.
    #[serde(default)]
    id: Option<String>,
    /// Only the rules of this tab.
    #[serde(default)]
    tab_id: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct InterceptRules {
    rules: Vec<wabp_core::intercept::InterceptRule>,
}

/// Saved calls.
#[derive(Serialize, JsonSchema)]
struct SavedCalls {
    total: usize,
    calls: Vec<wabp_history::NetworkCall>,
}

/// A tab's live buffer.
#[derive(Serialize, JsonSchema)]
struct LiveCalls {
    total: usize,
    /// Calls pushed out of the buffer (it keeps the last 1,000).
    dropped: u64,
    calls: Vec<wabp_core::network::NetworkCall>,
}

/// How many calls were saved, and under which tag.
#[derive(Serialize, JsonSchema)]
struct Saved {
    saved: usize,
    tag: String,
}

#[derive(Deserialize, JsonSchema)]
struct Save {
    /// Save under this tag.
    tag: String,
    /// Whose buffer (default: the caller's active tab).
    #[serde(default)]
    tab_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct Clear {
    /// Delete only the calls saved under this tag.
    #[serde(default)]
    tag: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct Curl {
    #[serde(flatten)]
    tab: TabRef,
    /// Absolute URL (http or https).
    url: String,
    /// HTTP method (default GET).
    #[serde(default)]
    method: Option<String>,
    /// Request headers.
    #[serde(default)]
    headers: Option<Map<String, Value>>,
    /// Request body.
    #[serde(default)]
    #[schemars(length(max = 4_194_304))]
    body: Option<String>,
    /// Save the call under this tag.
    #[serde(default)]
    tag: Option<String>,
}

#[derive(Deserialize, JsonSchema, Clone, Copy, Default)]
#[serde(rename_all = "lowercase")]
enum Source {
    #[default]
    Saved,
    Live,
}

#[derive(Deserialize, JsonSchema)]
struct NetworkTool {
    /// `saved` (default: the calls saved under tags) or `live` (a tab's buffer).
    #[serde(default)]
    source: Option<Source>,
    /// Save the tab's buffer under this tag first.
    #[serde(default)]
    save_tag: Option<String>,
    #[serde(flatten)]
    filter: NetworkFilter,
}

async fn save(ctx: &Ctx, tab: Option<&str>, tag: &str) -> Result<usize> {
    ctx.engine.save_network(&ctx.caller, tab, tag).await
}

async fn query(ctx: &Ctx, filter: NetworkFilter) -> Result<Value> {
    let calls = store(ctx)?
        .query_network(narrowed(ctx, filter))
        .await
        .map_err(history_error)?;
    let total = calls.len();
    super::to_json(&SavedCalls { total, calls })
}

fn live(ctx: &Ctx, tab: &str) -> Result<Value> {
    let (calls, dropped) = ctx.engine.tab_network(&ctx.caller, tab)?;
    let total = calls.len();
    super::to_json(&LiveCalls {
        total,
        dropped,
        calls,
    })
}

pub fn operations() -> Vec<Operation> {
    let mut all = Vec::new();
    all.extend(interception_operations());
    all.extend(capture_operations());
    all
}

/// Interception rules.
fn interception_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "network_intercept",
            "Add a rule for the caller's requests whose URL matches url_pattern: fulfill them with a response, abort them, or continue them with headers set. Rules are tried in order; calls they answered carry intercepted_by.",
            |ctx, input: NewInterceptRule| async move {
                let url_pattern = input.url_pattern.ok_or_else(|| {
                    Error::invalid("\"url_pattern\" is required (\"*\" matches every URL)")
                })?;
                let action = input.action.ok_or_else(|| {
                    Error::invalid("\"action\" is required: fulfill, abort or continue")
                })?;
                let rule = ctx
                    .engine
                    .add_intercept_rule(
                        &ctx.caller,
                        wabp_core::engine::intercept::NewRule {
                            url_pattern,
                            tab_id: input.tab_id,
                            action,
                            status: input.status,
                            headers: input.headers,
                            body: input.body,
                        },
                    )
                    .await?;
                json(super::to_json(&rule)?)
            },
        )
        .post("/network/intercept")
        .created()
        .answers::<wabp_core::intercept::InterceptRule>()
        .tool("browser_network_intercept")
        .scope(Scope::Act),
        Operation::new(
            "network_intercept_rules",
            "The caller's interception rules, in the order they are tried, with how many requests each answered.",
            |ctx, _: super::Nothing| async move {
                json(super::to_json(&InterceptRules {
                    rules: ctx.engine.intercept_rules(&ctx.caller),
                })?)
            },
        )
        .get("/network/intercept")
        .answers::<InterceptRules>(),
        Operation::new(
            "network_intercept_clear",
            "Remove the caller's interception rules: one by id, those of a tab, or all.",
            |ctx, input: DeleteInterceptRules| async move {
                let removed = ctx
                    .engine
                    .delete_intercept_rules(&ctx.caller, input.id.as_deref(), input.tab_id.as_deref())
                    .await?;
                super::typed(&Removed { removed })
            },
        )
        .delete("/network/intercept")
        .answers::<Removed>()
        .scope(Scope::Act),
    ]
}

/// Captured calls, their saves and HAR, and requests from a page.
fn capture_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "network",
            "The caller's saved network calls; each filter is a regex over that field.",
            |ctx, filter: NetworkFilter| async move { json(query(&ctx, filter).await?) },
        )
        .get("/network")
        .answers::<SavedCalls>(),
        Operation::new(
            "network_clear",
            "Delete the caller's saved network calls (those under `tag` only, if given).",
            |ctx, input: Clear| async move {
                let owner = RowOwner::Only(ctx.caller.user_id().map(str::to_string));
                let deleted = store(&ctx)?
                    .delete_network(input.tag.as_deref(), owner)
                    .await
                    .map_err(history_error)?;
                json(super::to_json(&super::history::Deleted { deleted })?)
            },
        )
        .delete("/network")
        .answers::<super::history::Deleted>()
        .scope(Scope::Act),
        Operation::new(
            "network_save",
            "Save a tab's captured calls (default: the caller's active tab) under a tag.",
            |ctx, input: Save| async move {
                let saved = save(&ctx, input.tab_id.as_deref(), &input.tag).await?;
                json(super::to_json(&Saved {
                    saved,
                    tag: input.tag,
                })?)
            },
        )
        .post("/network/save")
        .answers::<Saved>()
        .scope(Scope::Act),
        Operation::new(
            "network_har",
            "The caller's saved network calls as a HAR 1.2 document.",
            |ctx, filter: NetworkFilter| async move {
                let calls = store(&ctx)?
                    .query_network(narrowed(
                        &ctx,
                        NetworkFilter {
                            include_body: true,
                            ..filter
                        },
                    ))
                    .await
                    .map_err(history_error)?;
                json(wabp_history::har::to_har(&calls, env!("CARGO_PKG_VERSION")))
            },
        )
        .get("/network/har")
        .answers_schema(json!({
            "type": "object",
            "description": "A HAR 1.2 document: log.creator, log.pages, log.entries (one per saved call, bodies included)",
            "required": ["log"],
            "properties": {
                "log": {
                    "type": "object",
                    "required": ["version", "creator", "entries"],
                    "properties": {
                        "version": { "const": "1.2" },
                        "creator": { "type": "object" },
                        "entries": { "type": "array", "items": { "type": "object" } },
                    },
                },
            },
        })),
        Operation::new(
            "tab_network",
            "A tab's live capture buffer (not saved yet).",
            |ctx, input: TabRef| async move {
                let tab = input.resolve(&ctx)?;
                json(live(&ctx, &tab)?)
            },
        )
        .get("/tabs/{tab_id}/network")
        .answers::<LiveCalls>(),
        Operation::new(
            "curl",
            "An HTTP request from the page itself (its cookies and credentials), even while it is frozen.",
            |ctx, input: Curl| async move {
                let tab = input.tab.resolve(&ctx)?;
                let headers = input.headers.unwrap_or_default();
                if headers.values().any(|v| !v.is_string()) {
                    return Err(Error::invalid("\"headers\" values must be strings"));
                }
                let request = wabp_core::engine::CurlRequest {
                    url: input.url,
                    method: input.method.unwrap_or_else(|| "GET".into()),
                    headers,
                    body: input.body.filter(|b| !b.is_empty()),
                    tag: input.tag,
                };
                super::typed(&ctx.engine.curl(&ctx.caller, &tab, request).await?)
            },
        )
        .post("/tabs/{tab_id}/curl")
        .answers::<wabp_core::engine::answers::CurlAnswer>()
        .tool("browser_curl")
        .scope(Scope::Script),
        Operation::new(
            "network_tool",
            "Query saved network calls (regex filters over each field), or a tab's live buffer with source \"live\". Save a tab's buffer under a tag with save_tag.",
            |ctx, input: NetworkTool| async move {
                let mut out = Map::new();
                let tab = input.filter.tab_id.clone();
                if let Some(tag) = &input.save_tag {
                    out.insert("saved".into(), json!(save(&ctx, tab.as_deref(), tag).await?));
                }
                let found = match input.source.unwrap_or_default() {
                    Source::Live => live(&ctx, &super::resolve_tab(&ctx, tab)?)?,
                    Source::Saved => query(&ctx, input.filter).await?,
                };
                if let Value::Object(found) = found {
                    out.extend(found);
                }
                json(Value::Object(out))
            },
        )
        .tool("browser_network")
        .scope(Scope::Act),
    ]
}

/// How many interception rules were removed.
#[derive(Serialize, JsonSchema)]
struct Removed {
    removed: usize,
}
