//! Reading and running things in a page: wait, screenshots, script, text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wabp_core::engine::answers;
use wabp_core::{ActionOptions, Error};

use super::{Options, ResolveOptions, TabRef, json};
use crate::{Category, Ctx, Operation, Output, Presentation, Scope};
use wabp_core::action::ScreenshotInput;

#[derive(Deserialize, JsonSchema)]
struct Wait {
    #[serde(flatten)]
    tab: TabRef,
    /// Milliseconds of the page's (virtual) time to let run, 0 to 60000.
    #[serde(deserialize_with = "crate::input::whole")]
    #[schemars(with = "u64", range(max = 60000))]
    ms: Option<u64>,
    #[serde(flatten)]
    options: Options,
}

#[derive(Deserialize, JsonSchema)]
struct WaitNavigation {
    #[serde(flatten)]
    tab: TabRef,
    /// How long to wait for the page to navigate and load, ms (default
    /// 30000, at most 300000).
    #[serde(default, deserialize_with = "crate::input::whole")]
    #[schemars(with = "Option<u64>")]
    timeout_ms: Option<u64>,
    #[serde(flatten)]
    options: Options,
}

#[derive(Deserialize, JsonSchema)]
struct WaitNetworkIdle {
    #[serde(flatten)]
    tab: TabRef,
    /// How long to wait for the network to go idle, ms (default 30000, at
    /// most 300000).
    #[serde(default, deserialize_with = "crate::input::whole")]
    #[schemars(with = "Option<u64>")]
    timeout_ms: Option<u64>,
    /// Quiet time with no request in flight, ms (default 500, at most 60000).
    #[serde(default, deserialize_with = "crate::input::whole")]
    #[schemars(with = "Option<u64>")]
    idle_ms: Option<u64>,
    #[serde(flatten)]
    options: Options,
}

/// A wait's own `timeout_ms` into its options.
/// A wait's options: its timeout, and it ends when its client hangs up.
fn with_timeout(
    ctx: &Ctx,
    options: Options,
    timeout_ms: Option<u64>,
) -> wabp_core::Result<ActionOptions> {
    let mut options = options.resolve("immediate")?;
    options.hang_up = Some(ctx.hang_up.clone());
    if let Some(timeout) = timeout_ms {
        if timeout > wabp_core::action::MAX_TIMEOUT_MS {
            return Err(Error::invalid(format!(
                "\"timeout_ms\" must be at most {}",
                wabp_core::action::MAX_TIMEOUT_MS
            )));
        }
        options.wait_until.timeout_ms = timeout;
    }
    Ok(options)
}

#[derive(Deserialize, JsonSchema)]
struct ScreenshotAction {
    #[serde(flatten)]
    tab: TabRef,
    #[serde(flatten)]
    options: Options,
}

#[derive(Deserialize, JsonSchema)]
struct ScreenshotImage {
    #[serde(flatten)]
    tab: TabRef,
    /// Markup tags to leave out, comma-separated (e.g. `grid`).
    #[serde(default)]
    disable_markup: Option<String>,
    /// Markup tags to draw, comma-separated (default: all).
    #[serde(default)]
    markup: Option<String>,
    /// Draw the virtual cursor (default true).
    #[serde(default)]
    cursor: Option<bool>,
    /// `viewport` (default) or `full_page` (the whole scroll height, no
    /// markup).
    #[serde(default)]
    area: Option<String>,
}

/// A `screenshot.region` that names an element (`{"ref"}` or
/// `{"selector"}`) becomes that element's visible box.
async fn region_of_element(
    ctx: &crate::Ctx,
    tab: &str,
    options: &mut Options,
) -> wabp_core::Result<()> {
    if let Some(target) = options.region_element() {
        let clip = ctx.engine.element_region(&ctx.caller, tab, &target).await?;
        options.set_region(clip);
    }
    Ok(())
}

#[derive(Deserialize, JsonSchema)]
struct Execute {
    #[serde(flatten)]
    tab: TabRef,
    /// JavaScript to evaluate, e.g. `document.title`; a promise is awaited.
    #[serde(default)]
    #[schemars(length(max = 1_048_576))]
    script: Option<String>,
    /// The same as `script` (MCP's name for it).
    #[serde(default)]
    #[schemars(length(max = 1_048_576))]
    expression: Option<String>,
    /// Await a promise the script evaluates to and answer its value
    /// (default true); false answers the promise itself.
    #[serde(default)]
    await_promise: Option<bool>,
}

/// What `execute` answers.
#[derive(Serialize, JsonSchema)]
struct Executed {
    result: answers::Evaluation,
    /// What the script set off, as in an action's envelope: a picker or
    /// dialog it opened, a popup, a navigation.
    events: Vec<wabp_core::events::StampedEvent>,
}

/// What `text` answers.
#[derive(Serialize, JsonSchema)]
struct TextAnswer {
    /// The text, or `null` when nothing matches the selector.
    text: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct Text {
    #[serde(flatten)]
    tab: TabRef,
    /// CSS selector (default: the whole page's text).
    #[serde(default)]
    selector: Option<String>,
    /// A ref from a snapshot (`e7`, `f1e3`): that element's text; stale refs
    /// answer 409.
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
}

fn tag_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

pub fn operations() -> Vec<Operation> {
    let mut all = Vec::new();
    all.extend(wait_operations());
    all.extend(page_operations());
    all
}

/// Waits.
fn wait_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "wait",
            "Let the page run for `ms` milliseconds (of its virtual time), then capture it.",
            |ctx, input: Wait| async move {
                let ms = input
                    .ms
                    .filter(|ms| *ms <= 60_000)
                    .ok_or_else(|| Error::invalid("field \"ms\" must be an integer from 0 to 60000"))?;
                let tab = input.tab.resolve(&ctx)?;
                let mut options = input.options.resolve("time")?;
                options.hang_up = Some(ctx.hang_up.clone());
                Ok(Output::Envelope(
                    ctx.engine.wait(&ctx.caller, &tab, ms, &options).await?,
                ))
            },
        )
        .post("/tabs/{tab_id}/wait")
        .tool("browser_wait")
        .scope(Scope::Act)
        .answers_envelope(),
        Operation::new(
            "wait_navigation",
            "Let the page run until a navigation it starts has loaded (a link a script follows, a form, a redirect); 408 WAIT_TIMEOUT at timeout_ms.",
            |ctx, input: WaitNavigation| async move {
                let tab = input.tab.resolve(&ctx)?;
                let options = with_timeout(&ctx, input.options, input.timeout_ms)?;
                Ok(Output::Envelope(
                    ctx.engine
                        .wait_for(&ctx.caller, &tab, "navigation", serde_json::json!({}), &options)
                        .await?,
                ))
            },
        )
        .post("/tabs/{tab_id}/wait/navigation")
        .tool("browser_wait_for_navigation")
        .scope(Scope::Act)
        .answers_envelope(),
        Operation::new(
            "wait_network_idle",
            "Let the page run until no request has been in flight for idle_ms (a single-page app done loading); 408 WAIT_TIMEOUT at timeout_ms.",
            |ctx, input: WaitNetworkIdle| async move {
                let tab = input.tab.resolve(&ctx)?;
                let idle = input.idle_ms.unwrap_or(500);
                if idle > 60_000 {
                    return Err(Error::invalid("\"idle_ms\" must be at most 60000"));
                }
                let options = with_timeout(&ctx, input.options, input.timeout_ms)?;
                Ok(Output::Envelope(
                    ctx.engine
                        .wait_for(
                            &ctx.caller,
                            &tab,
                            "network_idle",
                            serde_json::json!({ "idle_ms": idle }),
                            &options,
                        )
                        .await?,
                ))
            },
        )
        .post("/tabs/{tab_id}/wait/network-idle")
        .tool("browser_wait_for_network_idle")
        .scope(Scope::Act)
        .category(Category::Read)
        .answers_envelope(),
    ]
}

/// Screenshots, scripts and text.
fn page_operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "screenshot_action",
            "Screenshot of a tab's viewport with element markup (clickable, typeable, scrollable, grid, selected), as WebP, in an action envelope.",
            |ctx, input: ScreenshotAction| async move {
                let mut options = input.options;
                let tab = input.tab.resolve(&ctx)?;
                region_of_element(&ctx, &tab, &mut options).await?;
                let options = options.resolve("immediate")?;
                Ok(Output::Envelope(
                    ctx.engine.screenshot_action(&ctx.caller, &tab, &options).await?,
                ))
            },
        )
        .post("/tabs/{tab_id}/screenshot")
        .tool("browser_screenshot")
        .answers_envelope(),
        Operation::new(
            "screenshot_image",
            "The tab's viewport as a WebP image with markup (or, with area=full_page, the whole page), without an envelope.",
            |ctx, input: ScreenshotImage| async move {
                let tab = input.tab.resolve(&ctx)?;
                let full_page = match input.area.as_deref() {
                    None | Some("viewport") => false,
                    Some("full_page") => true,
                    Some(other) => {
                        return Err(Error::invalid(format!(
                            "area must be \"viewport\" or \"full_page\", not {other:?} (a region: POST with screenshot.area \"region\")"
                        )));
                    }
                };
                let options = Options {
                    screenshot: Some(ScreenshotInput {
                        cursor: input.cursor,
                        markup: input.markup.as_deref().map(tag_list),
                        disable_markup: input.disable_markup.as_deref().map(tag_list),
                        ..Default::default()
                    }),
                    ..Default::default()
                }
                .resolve("immediate")?;
                let tags = options.markup_tags(ctx.engine.registry().as_ref())?;
                let shot = ctx
                    .engine
                    .screenshot(
                        &ctx.caller,
                        &tab,
                        tags,
                        options.screenshot.cursor,
                        full_page,
                    )
                    .await?;
                Ok(Output::Bytes {
                    mime: "image/webp",
                    bytes: shot.data.as_ref().clone(),
                })
            },
        )
        .get("/tabs/{tab_id}/screenshot")
        .answers_bytes("image/webp"),
        Operation::new(
            "execute",
            "Evaluate JavaScript in the page; returns its value and type.",
            |ctx, input: Execute| async move {
                let script = input.script.or(input.expression).ok_or_else(|| {
                    Error::invalid("missing field \"script\" (or \"expression\"): the JavaScript to evaluate")
                })?;
                let tab = input.tab.resolve(&ctx)?;
                let (result, events) = ctx
                    .engine
                    .execute(&ctx.caller, &tab, &script, input.await_promise.unwrap_or(true))
                    .await?;
                json(super::to_json(&Executed { result, events })?)
            },
        )
        .post("/tabs/{tab_id}/execute")
        .answers::<Executed>()
        .tool("browser_execute_javascript")
        .scope(Scope::Script),
        Operation::new(
            "text",
            "The page's visible text, or that of the element a `ref` names or the first matching `selector`.",
            |ctx, input: Text| async move {
                let tab = input.tab.resolve(&ctx)?;
                let text = ctx
                    .engine
                    .text(
                        &ctx.caller,
                        &tab,
                        input.selector.as_deref(),
                        input.element_ref.as_deref(),
                    )
                    .await?;
                json(super::to_json(&TextAnswer { text })?)
            },
        )
        .post("/tabs/{tab_id}/text")
        .answers::<TextAnswer>()
        .tool("browser_get_text")
        .presented(Presentation::TextField("text")),
    ]
}
