//! The options every action takes (`wait_until`, `screenshot`, `network`):
//! typed inputs that every frontend decodes and documents from the same
//! types ([`OptionsInput`]), checked once by `TryFrom` into the
//! [`ActionOptions`] the action loop runs with; and an action's params.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::capture::{Clip, DEFAULT_MARKUP, MAX_IMAGE_SIDE};
use crate::error::{Error, Result};
use crate::plugin::{PluginRegistry, Target};

pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
pub const MAX_TIMEOUT_MS: u64 = 300_000;

/// The longest wait type name (`GET /plugins` lists them).
pub const MAX_WAIT_TYPE_LEN: usize = 100;

/// The wait type of an action whose request names none.
pub const DEFAULT_ACTION_WAIT: &str = "action_complete";

/// `wait_until`: when the action counts as done.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct WaitUntilInput {
    /// action_complete (default for actions), immediate, time, or another
    /// wait plugin's type (GET /plugins lists them under wait_types).
    #[serde(default, rename = "type")]
    #[schemars(length(max = 100))]
    pub wait_type: Option<String>,
    /// Longest wait, ms (default 30000).
    #[serde(default)]
    #[schemars(range(max = 300_000))]
    pub timeout_ms: Option<u64>,
    /// For type "time": how long, ms.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub duration_ms: Option<serde_json::Number>,
    /// What the milliseconds count: "page" (the page's clock; quiet
    /// stretches are fast-forwarded) or "wall" (real time; the default for
    /// "time" waits).
    #[serde(default)]
    pub clock: Option<WaitClock>,
    /// Other params of a plugin's wait type, passed to it as they are.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// What a wait's milliseconds count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WaitClock {
    /// The page's own time: quiet stretches (nothing in flight) are
    /// fast-forwarded, so a settle window costs the page its time, not the
    /// caller's.
    Page,
    /// Real time: the page runs at its normal pace for the whole wait (what
    /// a server the page talks to over a WebSocket needs).
    Wall,
}

/// `screenshot`: the before/after screenshots (WebP with element markup).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotInput {
    /// viewport (default); none: no screenshots; full_page: the whole
    /// scroll height (screenshot endpoint only, no markup); region: the box
    /// in `region`.
    #[serde(default)]
    pub area: Option<AreaName>,
    /// For area "region": a box of the viewport in CSS pixels; on the
    /// screenshot endpoint also an element, {"ref": "e7"} or {"selector":
    /// "..."} (scrolled into view).
    #[serde(default)]
    pub region: Option<RegionInput>,
    /// Markup tags to draw (default: all).
    #[serde(default)]
    pub markup: Option<Vec<String>>,
    /// Markup tags to leave out, e.g. ["grid"].
    #[serde(default)]
    pub disable_markup: Option<Vec<String>>,
    /// Draw the virtual cursor (default true).
    #[serde(default)]
    pub cursor: Option<bool>,
    /// Always webp.
    #[serde(default)]
    pub format: Option<ImageFormat>,
}

/// `screenshot.area`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AreaName {
    Viewport,
    FullPage,
    Region,
    None,
}

/// `screenshot.format`: screenshots are always WebP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    Webp,
}

/// `screenshot.region`: a box, or (screenshot endpoint) an element.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegionInput {
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub x: Option<f64>,
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub y: Option<f64>,
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub width: Option<f64>,
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub height: Option<f64>,
    /// An element's ref from a snapshot (screenshot endpoint only).
    #[serde(default, rename = "ref")]
    pub element_ref: Option<String>,
    /// An element's CSS selector (screenshot endpoint only).
    #[serde(default)]
    pub selector: Option<String>,
}

impl RegionInput {
    /// The element this region names, if it names one.
    pub fn element(&self) -> Option<Target> {
        match (&self.element_ref, &self.selector) {
            (Some(r), _) => Some(Target::Ref(r.clone())),
            (None, Some(s)) => Some(Target::Selector(s.clone())),
            (None, None) => None,
        }
    }

    /// The region as this box (an element's, once it is found).
    pub fn boxed(clip: Clip) -> Self {
        RegionInput {
            x: Some(clip.x),
            y: Some(clip.y),
            width: Some(clip.width.max(1.0)),
            height: Some(clip.height.max(1.0)),
            element_ref: None,
            selector: None,
        }
    }

    fn clip(&self) -> Result<Clip> {
        if self.element().is_some() {
            return Err(Error::invalid(
                "screenshot.region names an element (ref or selector) only on the screenshot endpoint; an action takes a box {x, y, width, height}",
            ));
        }
        let side = |value: Option<f64>, name: &str, min: f64| -> Result<f64> {
            match value {
                Some(v) if v.is_finite() && v >= min && v <= f64::from(MAX_IMAGE_SIDE) => Ok(v),
                _ => Err(Error::invalid(format!(
                    "screenshot.region.{name} must be a number from {min} to {MAX_IMAGE_SIDE}"
                ))),
            }
        };
        Ok(Clip {
            x: side(self.x, "x", 0.0)?,
            y: side(self.y, "y", 0.0)?,
            width: side(self.width, "width", 1.0)?,
            height: side(self.height, "height", 1.0)?,
        })
    }
}

/// `network`: save the HTTP calls the action causes under a tag.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkInput {
    /// Tag to save the calls under in history (default: counted, not
    /// saved).
    #[serde(default)]
    pub tag: Option<String>,
    /// Resource types to capture, e.g. ["XHR", "Fetch"] (default: all).
    #[serde(default)]
    pub types: Option<Vec<String>>,
}

/// The options of the standard request envelope, as a request carries
/// them. Each one decodes on its own, so that a mistake is named by its
/// full path (`wait_until.clock`) even where these fields are flattened
/// into an operation's input.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct OptionsInput {
    #[serde(default, deserialize_with = "named::wait_until")]
    pub wait_until: Option<WaitUntilInput>,
    #[serde(default, deserialize_with = "named::screenshot")]
    pub screenshot: Option<ScreenshotInput>,
    #[serde(default, deserialize_with = "named::network")]
    pub network: Option<NetworkInput>,
    /// The wait type when `wait_until.type` is not given (not an input:
    /// the operation's default).
    #[serde(skip)]
    #[schemars(skip)]
    pub default_wait: Option<&'static str>,
}

mod named {
    //! Decoders that report a nested field's full path: flattening loses
    //! it otherwise.
    use super::*;

    fn decode<'de, D: Deserializer<'de>, T: serde::de::DeserializeOwned>(
        name: &str,
        d: D,
    ) -> std::result::Result<Option<T>, D::Error> {
        match Option::<Value>::deserialize(d)? {
            None | Some(Value::Null) => Ok(None),
            Some(value) => serde_path_to_error::deserialize(value)
                .map(Some)
                .map_err(|e| {
                    let path = e.path().to_string();
                    let field = if path == "." || path.is_empty() {
                        name.to_string()
                    } else {
                        format!("{name}.{path}")
                    };
                    serde::de::Error::custom(format!("field `{field}`: {}", e.inner()))
                }),
        }
    }
    pub fn wait_until<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<Option<WaitUntilInput>, D::Error> {
        decode("wait_until", d)
    }
    pub fn screenshot<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<Option<ScreenshotInput>, D::Error> {
        decode("screenshot", d)
    }
    pub fn network<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<Option<NetworkInput>, D::Error> {
        decode("network", d)
    }
}

impl OptionsInput {
    /// The same options, waiting by `wait_type` when the request names no
    /// wait type.
    pub fn waiting(mut self, wait_type: &'static str) -> Self {
        self.default_wait = Some(wait_type);
        self
    }

    /// The element `screenshot.region` names, if it names one.
    pub fn region_element(&self) -> Option<Target> {
        self.screenshot
            .as_ref()
            .and_then(|s| s.region.as_ref())
            .and_then(RegionInput::element)
    }

    /// Sets `screenshot.region` to a box (an element's).
    pub fn set_region(&mut self, clip: Clip) {
        self.screenshot.get_or_insert_with(Default::default).region =
            Some(RegionInput::boxed(clip));
    }
}

impl TryFrom<OptionsInput> for ActionOptions {
    type Error = Error;

    fn try_from(input: OptionsInput) -> Result<Self> {
        let wait = input.wait_until.unwrap_or_default();
        let wait_type = wait.wait_type.unwrap_or_else(|| {
            input
                .default_wait
                .unwrap_or(DEFAULT_ACTION_WAIT)
                .to_string()
        });
        if wait_type.len() > MAX_WAIT_TYPE_LEN {
            return Err(Error::invalid(format!(
                "wait_until.type is longer than {MAX_WAIT_TYPE_LEN} characters; no wait type has such a name"
            )));
        }
        let timeout_ms = wait.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout_ms > MAX_TIMEOUT_MS {
            return Err(Error::invalid(format!(
                "wait_until.timeout_ms must be an integer from 0 to {MAX_TIMEOUT_MS}"
            )));
        }
        // The heuristic sees the whole `wait_until` object.
        let mut params = wait.other;
        params.insert("type".into(), Value::String(wait_type.clone()));
        if let Some(timeout) = wait.timeout_ms {
            params.insert("timeout_ms".into(), Value::from(timeout));
        }
        if let Some(duration) = wait.duration_ms {
            params.insert("duration_ms".into(), Value::Number(duration));
        }
        if let Some(clock) = wait.clock {
            params.insert("clock".into(), Value::from(clock.name()));
        }

        let shot = input.screenshot.unwrap_or_default();
        let area = match shot.area {
            None | Some(AreaName::Viewport) => ScreenshotArea::Viewport,
            Some(AreaName::None) => ScreenshotArea::None,
            Some(AreaName::FullPage) => ScreenshotArea::FullPage,
            Some(AreaName::Region) => match &shot.region {
                Some(region) => ScreenshotArea::Region(region.clip()?),
                None => {
                    return Err(Error::invalid(
                        "screenshot.area \"region\" needs screenshot.region: {x, y, width, height} in CSS pixels",
                    ));
                }
            },
        };
        if shot.region.is_some() && !matches!(area, ScreenshotArea::Region(_)) {
            return Err(Error::invalid(
                "screenshot.region is for screenshot.area \"region\"",
            ));
        }
        Ok(ActionOptions {
            wait_until: WaitUntil {
                wait_type,
                timeout_ms,
                params: Value::Object(params),
                clock: wait.clock,
            },
            screenshot: ScreenshotOptions {
                area,
                markup: shot.markup,
                disable_markup: shot.disable_markup.unwrap_or_default(),
                cursor: shot.cursor.unwrap_or(true),
            },
            network: input.network.map(|n| NetworkOptions {
                tag: n.tag.unwrap_or_default(),
                types: n.types.unwrap_or_default(),
            }),
            hang_up: None,
        })
    }
}

impl WaitClock {
    fn name(self) -> &'static str {
        match self {
            WaitClock::Page => "page",
            WaitClock::Wall => "wall",
        }
    }
}

#[derive(Debug, Clone)]
pub struct WaitUntil {
    pub wait_type: String,
    pub timeout_ms: u64,
    /// The whole `wait_until` object, passed to the heuristic.
    pub params: Value,
    /// `wait_until.clock`, when the request names one.
    pub clock: Option<WaitClock>,
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
    Region(Clip),
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

impl ActionOptions {
    /// The default options, waiting by `wait_type`.
    pub fn with_wait(wait_type: &str) -> Self {
        let mut options =
            ActionOptions::try_from(OptionsInput::default()).expect("the defaults are valid");
        options.wait_until.wait_type = wait_type.to_string();
        options.wait_until.params = serde_json::json!({ "type": wait_type });
        options
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

    fn options(body: Value) -> Result<ActionOptions> {
        let input: OptionsInput =
            serde_json::from_value(body).map_err(|e| Error::invalid(e.to_string()))?;
        ActionOptions::try_from(input.waiting("immediate"))
    }

    #[test]
    fn options_default_and_validate() {
        let o = ActionOptions::try_from(OptionsInput::default()).unwrap();
        assert_eq!(o.wait_until.wait_type, "action_complete");
        assert_eq!(o.wait_until.timeout_ms, DEFAULT_TIMEOUT_MS);
        assert!(o.screenshot.cursor);
        assert_eq!(
            options(json!({})).unwrap().wait_until.wait_type,
            "immediate"
        );
        let err = options(json!({"screenshot": {"area": "page"}})).unwrap_err();
        assert!(err.message.contains("screenshot.area"), "{}", err.message);
        let err = options(json!({"wait_until": {"timeout_ms": -1}})).unwrap_err();
        assert!(
            err.message.contains("wait_until.timeout_ms"),
            "{}",
            err.message
        );
        let err = options(json!({"wait_until": {"timeout_ms": 300_001}})).unwrap_err();
        assert!(err.message.contains("timeout_ms"), "{}", err.message);
        let err = options(json!({"wait_until": {"clock": "moon"}})).unwrap_err();
        assert!(err.message.contains("wait_until.clock"), "{}", err.message);
        let err = options(json!({"screenshot": {"quality": 3}})).unwrap_err();
        assert!(err.message.contains("quality"), "{}", err.message);
        let err = options(json!({"network": {"types": "XHR"}})).unwrap_err();
        assert!(err.message.contains("network.types"), "{}", err.message);
    }

    #[test]
    fn the_heuristic_sees_the_whole_wait_object() {
        let o = options(json!({"wait_until": {"type": "time", "duration_ms": 20, "idle_ms": 5}}))
            .unwrap();
        assert_eq!(
            o.wait_until.params,
            json!({"type": "time", "duration_ms": 20, "idle_ms": 5})
        );
        assert_eq!(o.wait_until.clock(), WaitClock::Wall);
    }

    #[test]
    fn regions_are_boxes_within_bounds() {
        let o = options(json!({"screenshot": {"area": "region", "region": {"x": 1, "y": 2, "width": 3, "height": 4}}})).unwrap();
        assert_eq!(
            o.screenshot.area,
            ScreenshotArea::Region(Clip {
                x: 1.0,
                y: 2.0,
                width: 3.0,
                height: 4.0
            })
        );
        for (region, field) in [
            (json!({"x": 0, "y": 0, "width": 0, "height": 1}), "width"),
            (json!({"y": 0, "width": 5, "height": 1}), "region.x"),
            (json!({"ref": "e4"}), "element"),
        ] {
            let err =
                options(json!({"screenshot": {"area": "region", "region": region}})).unwrap_err();
            assert!(err.message.contains(field), "{field}: {}", err.message);
        }
        let err = options(json!({"screenshot": {"area": "region"}})).unwrap_err();
        assert!(err.message.contains("screenshot.region"), "{}", err.message);
        let err =
            options(json!({"screenshot": {"region": {"x": 0, "y": 0, "width": 1, "height": 1}}}))
                .unwrap_err();
        assert!(
            err.message.contains("is for screenshot.area"),
            "{}",
            err.message
        );
        let mut input: OptionsInput = serde_json::from_value(
            json!({"screenshot": {"area": "region", "region": {"selector": "#a"}}}),
        )
        .unwrap();
        assert_eq!(input.region_element(), Some(Target::Selector("#a".into())));
        input.set_region(Clip {
            x: 5.0,
            y: 5.0,
            width: 0.5,
            height: 9.0,
        });
        let o = ActionOptions::try_from(input).unwrap();
        assert_eq!(
            o.screenshot.area,
            ScreenshotArea::Region(Clip {
                x: 5.0,
                y: 5.0,
                width: 1.0,
                height: 9.0
            })
        );
    }

    #[test]
    fn params_strip_options() {
        let p = action_params(&json!({"x": 1, "wait_until": {}, "screenshot": {}}));
        assert_eq!(p, json!({"x": 1}));
        let p = action_params(&json!({"action_params": {"y": 2}, "x": 1}));
        assert_eq!(p, json!({"y": 2}));
    }
}
