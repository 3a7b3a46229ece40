//! The options every action takes (`wait_until`, `screenshot`, `network`),
//! read the same way for every frontend, and an action's params.

use serde_json::{Map, Value, json};

use crate::capture::DEFAULT_MARKUP;
use crate::error::{Error, Result};
use crate::plugin::PluginRegistry;

pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
pub const MAX_TIMEOUT_MS: u64 = 300_000;

#[derive(Debug, Clone)]
pub struct WaitUntil {
    pub wait_type: String,
    pub timeout_ms: u64,
    /// The whole `wait_until` object, passed to the heuristic.
    pub params: Value,
    /// `wait_until.clock`, when the request names one.
    pub clock: Option<WaitClock>,
}

/// What a wait's milliseconds count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitClock {
    /// The page's own time: quiet stretches (nothing in flight) are
    /// fast-forwarded, so a settle window costs the page its time, not the
    /// caller's.
    Page,
    /// Real time: the page runs at its normal pace for the whole wait (what
    /// a server the page talks to over a WebSocket needs).
    Wall,
}

impl WaitUntil {
    /// The page's clock, except for `time` waits, which let real time pass
    /// unless the request says otherwise.
    pub fn clock(&self) -> WaitClock {
        self.clock.unwrap_or(if self.wait_type == "time" {
            WaitClock::Wall
        } else {
            WaitClock::Page
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ScreenshotArea {
    None,
    Viewport,
    /// The whole scroll height and width (the screenshot endpoint only).
    FullPage,
    /// A box of the viewport, in CSS pixels.
    Region(crate::capture::Clip),
}

#[derive(Debug, Clone)]
pub struct ScreenshotOptions {
    pub area: ScreenshotArea,
    /// Tags to draw; `None` means every registered tag.
    pub markup: Option<Vec<String>>,
    pub disable_markup: Vec<String>,
    pub cursor: bool,
}

#[derive(Debug, Clone)]
pub struct NetworkOptions {
    pub tag: String,
    pub types: Vec<String>,
}

/// The longest wait type name (`GET /plugins` lists them).
pub const MAX_WAIT_TYPE_LEN: usize = 100;

/// The standard request envelope's options.
#[derive(Debug, Clone)]
pub struct ActionOptions {
    pub wait_until: WaitUntil,
    pub screenshot: ScreenshotOptions,
    pub network: Option<NetworkOptions>,
    /// Cancelled when nobody waits for the answer any more (the client
    /// hung up): the wait ends at once ("client_gone"), the action is
    /// captured, frozen and recorded as usual, and the tab is free.
    pub hang_up: Option<tokio_util::sync::CancellationToken>,
}

/// Request keys that are options, not action params.
pub const OPTION_KEYS: &[&str] = &[
    "wait_until",
    "screenshot",
    "network",
    "action_params",
    "userId",
];

/// `screenshot.region`: `{x, y, width, height}` in CSS pixels of the
/// viewport.
fn region(value: Option<&Value>) -> Result<crate::capture::Clip> {
    let Some(Value::Object(r)) = value else {
        return Err(Error::invalid(
            "screenshot.area \"region\" needs screenshot.region: {x, y, width, height} in CSS pixels",
        ));
    };
    let field = |name: &str, min: f64| -> Result<f64> {
        match r.get(name).and_then(Value::as_f64) {
            Some(v)
                if v.is_finite() && v >= min && v <= f64::from(crate::capture::MAX_IMAGE_SIDE) =>
            {
                Ok(v)
            }
            _ => Err(Error::invalid(format!(
                "screenshot.region.{name} must be a number from {min} to {}",
                crate::capture::MAX_IMAGE_SIDE
            ))),
        }
    };
    Ok(crate::capture::Clip {
        x: field("x", 0.0)?,
        y: field("y", 0.0)?,
        width: field("width", 1.0)?,
        height: field("height", 1.0)?,
    })
}

fn string_list(value: &Value, field: &str) -> Result<Vec<String>> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| Error::invalid(format!("{field} must be a list of strings")))
            })
            .collect(),
        _ => Err(Error::invalid(format!("{field} must be a list of strings"))),
    }
}

impl ActionOptions {
    pub fn with_wait(wait_type: &str) -> Self {
        let mut options = ActionOptions::from_request(&Value::Null, "action_complete")
            .expect("defaults are valid");
        options.wait_until.wait_type = wait_type.to_string();
        options
    }

    /// Reads the options from a request body; `default_wait` applies when the
    /// body has no `wait_until.type`.
    pub fn from_request(body: &Value, default_wait: &str) -> Result<Self> {
        let wait = body.get("wait_until").cloned().unwrap_or(Value::Null);
        if !(wait.is_null() || wait.is_object()) {
            return Err(Error::invalid("wait_until must be an object"));
        }
        let wait_type = match wait.get("type") {
            None | Some(Value::Null) => default_wait.to_string(),
            Some(Value::String(s)) if s.len() <= MAX_WAIT_TYPE_LEN => s.clone(),
            Some(Value::String(_)) => {
                return Err(Error::invalid(format!(
                    "wait_until.type is longer than {MAX_WAIT_TYPE_LEN} characters; no wait type has such a name"
                )));
            }
            Some(_) => return Err(Error::invalid("wait_until.type must be a string")),
        };
        let timeout_ms = match wait.get("timeout_ms") {
            None | Some(Value::Null) => DEFAULT_TIMEOUT_MS,
            Some(v) => v.as_u64().filter(|t| *t <= MAX_TIMEOUT_MS).ok_or_else(|| {
                Error::invalid(format!(
                    "wait_until.timeout_ms must be an integer from 0 to {MAX_TIMEOUT_MS}"
                ))
            })?,
        };
        let clock = match wait.get("clock") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) if c == "page" => Some(WaitClock::Page),
            Some(Value::String(c)) if c == "wall" => Some(WaitClock::Wall),
            Some(_) => {
                return Err(Error::invalid(
                    "wait_until.clock must be \"page\" or \"wall\"",
                ));
            }
        };
        let mut params = if wait.is_object() {
            wait.clone()
        } else {
            json!({})
        };
        params["type"] = Value::String(wait_type.clone());

        let shot = body.get("screenshot").cloned().unwrap_or(Value::Null);
        if !(shot.is_null() || shot.is_object()) {
            return Err(Error::invalid("screenshot must be an object"));
        }
        let area = match shot.get("area").and_then(Value::as_str) {
            None | Some("viewport") => ScreenshotArea::Viewport,
            Some("none") => ScreenshotArea::None,
            Some("full_page") => ScreenshotArea::FullPage,
            Some("region") => ScreenshotArea::Region(region(shot.get("region"))?),
            Some(other) => {
                return Err(Error::invalid(format!(
                    "screenshot.area must be \"viewport\", \"full_page\", \"region\" or \"none\", not {other:?}"
                )));
            }
        };
        if shot.get("region").is_some_and(|r| !r.is_null())
            && !matches!(area, ScreenshotArea::Region(_))
        {
            return Err(Error::invalid(
                "screenshot.region is for screenshot.area \"region\"",
            ));
        }
        let cursor = match shot.get("cursor") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(Error::invalid("screenshot.cursor must be a boolean")),
        };
        if let Some(format) = shot.get("format").and_then(Value::as_str) {
            if format != "webp" {
                return Err(Error::invalid(
                    "screenshot.format: screenshots are always webp",
                ));
            }
        }
        let markup = match shot.get("markup") {
            None | Some(Value::Null) => None,
            Some(v) => Some(string_list(v, "screenshot.markup")?),
        };
        let disable_markup = string_list(
            shot.get("disable_markup").unwrap_or(&Value::Null),
            "screenshot.disable_markup",
        )?;

        let network = match body.get("network") {
            None | Some(Value::Null) => None,
            Some(Value::Object(n)) => Some(NetworkOptions {
                tag: match n.get("tag") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(_) => return Err(Error::invalid("network.tag must be a string")),
                },
                types: string_list(n.get("types").unwrap_or(&Value::Null), "network.types")?,
            }),
            Some(_) => return Err(Error::invalid("network must be an object")),
        };
        Ok(ActionOptions {
            wait_until: WaitUntil {
                wait_type,
                timeout_ms,
                params,
                clock,
            },
            screenshot: ScreenshotOptions {
                area,
                markup,
                disable_markup,
                cursor,
            },
            network,
            hang_up: None,
        })
    }

    /// The markup tags to draw, checked against what the plugins provide.
    pub fn markup_tags(&self, registry: &dyn PluginRegistry) -> Result<Vec<String>> {
        let known = registry.markup_tags();
        for tag in self
            .screenshot
            .disable_markup
            .iter()
            .chain(self.screenshot.markup.iter().flatten())
        {
            if !known.contains(tag) {
                return Err(Error::invalid(format!(
                    "unknown markup tag {tag:?}; known tags: {}",
                    known.join(", ")
                )));
            }
        }
        let base: Vec<String> = match &self.screenshot.markup {
            Some(tags) => tags.clone(),
            None => {
                // ABP's five first, in their order, then plugin tags.
                let mut tags: Vec<String> = DEFAULT_MARKUP
                    .iter()
                    .map(|t| t.to_string())
                    .filter(|t| known.contains(t))
                    .collect();
                tags.extend(
                    known
                        .iter()
                        .filter(|t| !DEFAULT_MARKUP.contains(&t.as_str()))
                        .cloned(),
                );
                tags
            }
        };
        Ok(base
            .into_iter()
            .filter(|t| !self.screenshot.disable_markup.contains(t))
            .collect())
    }
}

/// Action params: `action_params` when given, else the body minus options.
pub fn action_params(body: &Value) -> Value {
    if let Some(params) = body.get("action_params").filter(|p| p.is_object()) {
        return params.clone();
    }
    let mut params = Map::new();
    if let Value::Object(fields) = body {
        for (k, v) in fields {
            if !OPTION_KEYS.contains(&k.as_str()) {
                params.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_default_and_validate() {
        let o = ActionOptions::from_request(&json!({}), "action_complete").unwrap();
        assert_eq!(o.wait_until.wait_type, "action_complete");
        assert_eq!(o.wait_until.timeout_ms, DEFAULT_TIMEOUT_MS);
        assert!(o.screenshot.cursor);
        let err =
            ActionOptions::from_request(&json!({"screenshot": {"area": "page"}}), "immediate")
                .unwrap_err();
        assert!(err.message.contains("screenshot.area"));
        let err =
            ActionOptions::from_request(&json!({"wait_until": {"timeout_ms": -1}}), "immediate")
                .unwrap_err();
        assert!(err.message.contains("timeout_ms"));
    }

    #[test]
    fn params_strip_options() {
        let p = action_params(&json!({"x": 1, "wait_until": {}, "screenshot": {}}));
        assert_eq!(p, json!({"x": 1}));
        let p = action_params(&json!({"action_params": {"y": 2}, "x": 1}));
        assert_eq!(p, json!({"y": 2}));
    }
}
