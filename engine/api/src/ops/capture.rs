//! `screenshot` (MCP) and `POST /screenshot` (REST): BrowserLoop's
//! one-shot capture of any URL, in a temporary page of its own (never one of
//! the agent's tabs), at a size and format, with optional cookies (checked
//! by the engine's cookie rules, never logged). Defaults come from
//! `WABP_SCREENSHOT_*`.

use std::time::Duration;

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use wabp_core::oneshot::{ImageFormat, NewCookie, OneshotRequest};
use wabp_core::{Error, ErrorCode, Result, Scope};

use super::json;
use crate::{Category, Ctx, Operation, Presentation};

/// The MCP tool's name (BrowserLoop's).
pub const TOOL_NAME: &str = "screenshot";

/// Defaults for the optional arguments, from the environment.
#[derive(Debug, Clone, PartialEq)]
pub struct ScreenshotDefaults {
    pub width: u32,
    pub height: u32,
    pub format: ImageFormat,
    pub quality: u8,
    pub timeout_ms: u64,
    pub wait_for_network_idle: bool,
    pub user_agent: Option<String>,
    pub retry_count: u32,
    pub retry_delay_ms: u64,
}

impl Default for ScreenshotDefaults {
    fn default() -> Self {
        ScreenshotDefaults {
            width: 1280,
            height: 720,
            format: ImageFormat::Webp,
            quality: 80,
            timeout_ms: 30_000,
            wait_for_network_idle: true,
            user_agent: None,
            retry_count: 3,
            retry_delay_ms: 1000,
        }
    }
}

impl ScreenshotDefaults {
    pub fn from_env() -> ScreenshotDefaults {
        let (defaults, problems) = Self::from_lookup(|k| std::env::var(k).ok());
        for problem in problems {
            tracing::warn!("{problem}; using the built-in default");
        }
        defaults
    }

    /// Reads `WABP_SCREENSHOT_*` through `lookup`; a value out of range is
    /// reported and its default kept.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> (Self, Vec<String>) {
        let mut d = ScreenshotDefaults::default();
        let mut problems = Vec::new();
        let mut number = |key: &str, min: u64, max: u64| -> Option<u64> {
            let text = lookup(key)?;
            match text.trim().parse::<u64>() {
                Ok(v) if (min..=max).contains(&v) => Some(v),
                _ => {
                    problems.push(format!(
                        "{key}={text:?} is not a number from {min} to {max}"
                    ));
                    None
                }
            }
        };
        if let Some(v) = number("WABP_SCREENSHOT_DEFAULT_WIDTH", 200, 4000) {
            d.width = v as u32;
        }
        if let Some(v) = number("WABP_SCREENSHOT_DEFAULT_HEIGHT", 200, 4000) {
            d.height = v as u32;
        }
        if let Some(v) = number("WABP_SCREENSHOT_DEFAULT_QUALITY", 1, 100) {
            d.quality = v as u8;
        }
        if let Some(v) = number("WABP_SCREENSHOT_DEFAULT_TIMEOUT", 1000, 120_000) {
            d.timeout_ms = v;
        }
        if let Some(v) = number("WABP_SCREENSHOT_RETRY_COUNT", 0, 10) {
            d.retry_count = v as u32;
        }
        if let Some(v) = number("WABP_SCREENSHOT_RETRY_DELAY", 100, 10_000) {
            d.retry_delay_ms = v;
        }
        if let Some(text) = lookup("WABP_SCREENSHOT_DEFAULT_FORMAT") {
            match ImageFormat::parse(text.trim()) {
                Some(f) => d.format = f,
                None => problems.push(format!(
                    "WABP_SCREENSHOT_DEFAULT_FORMAT={text:?} is not webp, png or jpeg"
                )),
            }
        }
        if let Some(text) = lookup("WABP_SCREENSHOT_DEFAULT_WAIT_NETWORK_IDLE") {
            match text.trim() {
                "true" | "1" => d.wait_for_network_idle = true,
                "false" | "0" => d.wait_for_network_idle = false,
                _ => problems.push(format!(
                    "WABP_SCREENSHOT_DEFAULT_WAIT_NETWORK_IDLE={text:?} is not true or false"
                )),
            }
        }
        if let Some(text) = lookup("WABP_SCREENSHOT_USER_AGENT") {
            match check_user_agent(&text) {
                Ok(()) if !text.trim().is_empty() => d.user_agent = Some(text),
                Ok(()) => {}
                Err(e) => problems.push(format!("WABP_SCREENSHOT_USER_AGENT: {}", e.message)),
            }
        }
        (d, problems)
    }
}

/// The tool's arguments, named as BrowserLoop names them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaptureUrl {
    /// Target URL to capture (http or https; required).
    pub url: String,
    /// Viewport width in pixels (default 1280).
    #[serde(default)]
    #[schemars(range(min = 200, max = 4000))]
    pub width: Option<f64>,
    /// Viewport height in pixels (default 720).
    #[serde(default)]
    #[schemars(range(min = 200, max = 4000))]
    pub height: Option<f64>,
    /// Image format (default webp).
    #[serde(default)]
    pub format: Option<ImageFormat>,
    /// Image quality for WebP/JPEG (default 80).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub quality: Option<f64>,
    /// Wait for the network to go idle before the capture (default true).
    #[serde(default)]
    pub wait_for_network_idle: Option<bool>,
    /// Timeout in milliseconds (default 30000).
    #[serde(default)]
    #[schemars(range(min = 1000, max = 120_000))]
    pub timeout: Option<f64>,
    /// Capture the full page instead of the viewport (default false).
    #[serde(default)]
    pub full_page: Option<bool>,
    /// A user agent of its own for this capture.
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub user_agent: Option<String>,
    /// CSS selector of an element to capture alone.
    #[serde(default)]
    #[schemars(length(min = 1, max = 4096))]
    pub selector: Option<String>,
    /// Cookies for authentication: a list, or a JSON string of one; each
    /// for the target's host.
    #[serde(default)]
    #[schemars(with = "Option<CookieListSchema>")]
    pub cookies: Option<CookieList>,
}

/// `cookies` as the schema states it: BrowserLoop takes both forms.
#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(untagged)]
enum CookieListSchema {
    List(#[schemars(length(max = 50))] Vec<NewCookie>),
    /// A JSON string holding the list.
    Json(String),
}

/// The cookies of a capture, from either form; a mistake is named by its
/// path (`cookies[1].sameSite`), never by a value.
#[derive(Debug, Default)]
pub struct CookieList(pub Vec<NewCookie>);

impl<'de> Deserialize<'de> for CookieList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = match Value::deserialize(d)? {
            Value::String(text) => serde_json::from_str::<Value>(&text).map_err(|e| {
                D::Error::custom(format!(
                    "the string is not valid JSON (line {}, column {})",
                    e.line(),
                    e.column()
                ))
            })?,
            other => other,
        };
        if !value.is_array() {
            return Err(D::Error::custom(
                "must be an array of cookie objects or a JSON string of one",
            ));
        }
        serde_path_to_error::deserialize(value)
            .map(CookieList)
            .map_err(|e| D::Error::custom(format!("{}: {}", e.path(), e.inner())))
    }
}

fn check_user_agent(text: &str) -> Result<()> {
    if text.len() > 1024 {
        return Err(Error::invalid("userAgent must be at most 1024 characters"));
    }
    if text.chars().any(|c| c.is_control()) {
        return Err(Error::invalid(
            "userAgent must not contain control characters",
        ));
    }
    Ok(())
}

/// A number argument within its bounds (BrowserLoop's messages).
fn within(value: Option<f64>, label: &str, min: f64, max: f64) -> Result<Option<f64>> {
    match value {
        None => Ok(None),
        Some(v) if !v.is_finite() => Err(Error::invalid(format!("{label} must be a number"))),
        Some(v) if v < min => Err(Error::invalid(format!("{label} must be at least {min}"))),
        Some(v) if v > max => Err(Error::invalid(format!("{label} must be at most {max}"))),
        Some(v) => Ok(Some(v)),
    }
}

/// A checked capture plus what the metadata reports.
#[derive(Debug)]
pub struct Capture {
    pub request: OneshotRequest,
    pub retry_count: u32,
    pub retry_delay: Duration,
    pub user_agent_is_custom: bool,
}

impl CaptureUrl {
    /// The capture to make: arguments checked, defaults filled in.
    pub fn check(self, defaults: &ScreenshotDefaults) -> Result<Capture> {
        // Not the URL itself in the error: its query may carry a token.
        let url = wabp_core::rules::url::http_url(&self.url, "url").map_err(|_| {
            Error::invalid("Invalid URL format: give an absolute http or https URL with a host")
        })?;
        let width = within(self.width, "Width", 200.0, 4000.0)?;
        let height = within(self.height, "Height", 200.0, 4000.0)?;
        let quality = within(self.quality, "Quality", 1.0, 100.0)?;
        let timeout = within(self.timeout, "Timeout", 1000.0, 120_000.0)?;
        if self
            .selector
            .as_deref()
            .is_some_and(|s| s.trim().is_empty())
        {
            return Err(Error::invalid("selector must not be empty"));
        }
        let (user_agent, user_agent_is_custom) = match self.user_agent {
            Some(ua) => {
                check_user_agent(&ua)?;
                (Some(ua), true)
            }
            None => (defaults.user_agent.clone(), defaults.user_agent.is_some()),
        };
        let request = OneshotRequest {
            url: url.to_string(),
            width: width.map_or(defaults.width, |v| v.round() as u32),
            height: height.map_or(defaults.height, |v| v.round() as u32),
            format: self.format.unwrap_or(defaults.format),
            quality: quality.map_or(defaults.quality, |v| v.round() as u8),
            wait_for_network_idle: self
                .wait_for_network_idle
                .unwrap_or(defaults.wait_for_network_idle),
            timeout: Duration::from_millis(
                timeout.map_or(defaults.timeout_ms, |v| v.round() as u64),
            ),
            full_page: self.full_page.unwrap_or(false),
            selector: self.selector,
            user_agent,
            cookies: self.cookies.unwrap_or_default().0,
        };
        // The cookies by the engine's rules now, so a bad one is an
        // argument error, not a failed (and retried) capture.
        wabp_core::rules::cookie::params(
            &request.cookies,
            wabp_core::oneshot::MAX_COOKIES,
            Some(&url),
        )?;
        Ok(Capture {
            request,
            retry_count: defaults.retry_count,
            retry_delay: Duration::from_millis(defaults.retry_delay_ms),
            user_agent_is_custom,
        })
    }
}

/// The image, with the mime type an MCP client shows it by.
#[derive(Serialize, JsonSchema)]
struct CapturedImage {
    /// Base64 of the image.
    data: String,
    mime: &'static str,
}

#[derive(Serialize, JsonSchema)]
struct Captured {
    screenshot: CapturedImage,
    metadata: CaptureMetadata,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct CaptureMetadata {
    width: u32,
    height: u32,
    /// Milliseconds since the epoch.
    timestamp: u64,
    url: String,
    /// Where the page ended up, after redirects.
    final_url: String,
    format: &'static str,
    viewport: CaptureViewport,
    full_page: bool,
    selector: Option<String>,
    /// The full page was taller than the capture limit and was cut.
    truncated: bool,
    /// How many cookies were set (never their values).
    cookies: usize,
    attempts: u32,
    configuration: CaptureConfiguration,
}

#[derive(Serialize, JsonSchema)]
struct CaptureViewport {
    width: u32,
    height: u32,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct CaptureConfiguration {
    retry_count: u32,
    /// `custom` or `default`: never the string itself.
    user_agent: &'static str,
}

fn retryable(error: &Error) -> bool {
    matches!(
        error.code,
        ErrorCode::Timeout
            | ErrorCode::NavigationFailed
            | ErrorCode::NetworkError
            | ErrorCode::Internal
    )
}

async fn run(ctx: Ctx, input: CaptureUrl) -> Result<crate::Output> {
    let capture = input.check(&ctx.screenshot_defaults)?;
    let request = &capture.request;
    // Metadata only: the host, never the query (it may carry tokens) nor
    // cookie values.
    tracing::info!(
        host = %url::Url::parse(&request.url).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default(),
        width = request.width,
        height = request.height,
        format = request.format.name(),
        cookies = request.cookies.len(),
        "one-shot screenshot"
    );
    let mut attempts = 0;
    let shot = loop {
        attempts += 1;
        match ctx.engine.oneshot_screenshot(request.clone()).await {
            Ok(shot) => break shot,
            Err(e) if retryable(&e) && attempts <= capture.retry_count => {
                tracing::debug!(
                    attempts,
                    code = e.code.as_str(),
                    "screenshot failed; retrying"
                );
                tokio::time::sleep(capture.retry_delay).await;
            }
            Err(e) => return Err(e),
        }
    };
    let answer = Captured {
        screenshot: CapturedImage {
            data: base64::engine::general_purpose::STANDARD.encode(&shot.data),
            mime: shot.format.mime(),
        },
        metadata: CaptureMetadata {
            width: shot.width,
            height: shot.height,
            timestamp: wabp_core::clock::now_ms_i64().max(0) as u64,
            url: request.url.clone(),
            final_url: shot.final_url,
            format: shot.format.name(),
            viewport: CaptureViewport {
                width: request.width,
                height: request.height,
            },
            full_page: request.full_page && request.selector.is_none(),
            selector: request.selector.clone(),
            truncated: shot.truncated,
            cookies: request.cookies.len(),
            attempts,
            configuration: CaptureConfiguration {
                retry_count: capture.retry_count,
                user_agent: if capture.user_agent_is_custom {
                    "custom"
                } else {
                    "default"
                },
            },
        },
    };
    json(super::to_json(&answer)?)
}

pub fn operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "capture_url",
            "Capture a screenshot of a web page in a temporary tab of its own (the agent's tabs are not touched)",
            run,
        )
        .post("/screenshot")
        .tool(TOOL_NAME)
        // It opens a page of its own: acting, and going where the
        // policies say.
        .scope(Scope::Act)
        .category(Category::Navigation)
        .presented(Presentation::ImageFirst)
        .answers::<Captured>(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(args: Value, defaults: &ScreenshotDefaults) -> Result<Capture> {
        crate::input::decode::<CaptureUrl>(args)?.check(defaults)
    }

    #[test]
    fn defaults_and_ranges() {
        let d = ScreenshotDefaults::default();
        let p = check(json!({"url": "https://example.com/a"}), &d).unwrap();
        assert_eq!((p.request.width, p.request.height), (1280, 720));
        assert_eq!(p.request.format, ImageFormat::Webp);
        assert_eq!(p.request.quality, 80);
        assert!(p.request.wait_for_network_idle);
        assert_eq!(p.request.timeout, Duration::from_secs(30));
        assert_eq!(p.retry_count, 3);
        let e = check(json!({"url": "https://e.com", "width": 199}), &d).unwrap_err();
        assert_eq!(e.message, "Width must be at least 200");
        let e = check(json!({"url": "https://e.com", "height": 4001}), &d).unwrap_err();
        assert_eq!(e.message, "Height must be at most 4000");
        let e = check(json!({"url": "https://e.com", "format": "gif"}), &d).unwrap_err();
        assert!(
            e.message.contains("\"webp\", \"png\", \"jpeg\""),
            "{}",
            e.message
        );
        let e = check(json!({"url": "https://e.com", "timeout": 500}), &d).unwrap_err();
        assert_eq!(e.message, "Timeout must be at least 1000");
        let e = check(json!({"url": "ftp://e.com"}), &d).unwrap_err();
        assert!(e.message.starts_with("Invalid URL format"), "{}", e.message);
        let e = check(json!({"url": "not a url"}), &d).unwrap_err();
        assert!(e.message.starts_with("Invalid URL format"), "{}", e.message);
        assert!(check(json!({}), &d).is_err());
        let e = check(json!({"url": "https://e.com", "selector": " "}), &d).unwrap_err();
        assert!(e.message.contains("selector"), "{}", e.message);
    }

    #[test]
    fn environment_defaults() {
        let env = |k: &str| match k {
            "WABP_SCREENSHOT_DEFAULT_WIDTH" => Some("1920".to_string()),
            "WABP_SCREENSHOT_DEFAULT_FORMAT" => Some("png".to_string()),
            "WABP_SCREENSHOT_DEFAULT_QUALITY" => Some("900".to_string()),
            "WABP_SCREENSHOT_DEFAULT_WAIT_NETWORK_IDLE" => Some("false".to_string()),
            "WABP_SCREENSHOT_RETRY_COUNT" => Some("1".to_string()),
            "WABP_SCREENSHOT_USER_AGENT" => Some("Bot 1.0".to_string()),
            _ => None,
        };
        let (d, problems) = ScreenshotDefaults::from_lookup(env);
        assert_eq!(d.width, 1920);
        assert_eq!(d.format, ImageFormat::Png);
        assert_eq!(d.quality, 80, "out of range keeps the default");
        assert!(!d.wait_for_network_idle);
        assert_eq!(d.retry_count, 1);
        assert_eq!(d.user_agent.as_deref(), Some("Bot 1.0"));
        assert_eq!(problems.len(), 1, "{problems:?}");
        let p = check(json!({"url": "http://localhost:3000"}), &d).unwrap();
        assert_eq!(p.request.width, 1920);
        assert!(p.user_agent_is_custom);
    }

    #[test]
    fn cookies_come_as_a_list_or_a_json_string_and_never_echo_values() {
        let d = ScreenshotDefaults::default();
        let url = "https://app.example.com/dashboard";
        let p = check(
            json!({"url": url, "cookies": "[{\"name\":\"session_id\",\"value\":\"abc123xyz789\",\"domain\":\"app.example.com\"}]"}),
            &d,
        )
        .unwrap();
        assert_eq!(p.request.cookies[0].name, "session_id");
        assert!(
            !format!("{p:?}").contains("abc123xyz789"),
            "Debug hides values"
        );
        // A browser's export carries fields of its own: they are ignored.
        let exported = check(
            json!({"url": url, "cookies": [{"name": "s", "value": "v", "domain": "app.example.com", "hostOnly": true, "session": true, "storeId": "0"}]}),
            &d,
        );
        assert!(exported.is_ok(), "{exported:?}");
        let secret = "s3cr3t-value";
        for (cookies, says) in [
            (
                json!([{"name": "a", "value": secret, "domain": "evil.com"}]),
                "does not match",
            ),
            (
                json!([{"name": "a", "value": secret, "sameSite": "Loose"}]),
                "sameSite",
            ),
            (json!([{"value": secret}]), "name"),
            (json!([{"name": "a", "value": 12345}]), "must be a string"),
            (json!("not json"), "not valid JSON"),
            (json!(42), "array"),
        ] {
            let e = check(json!({"url": url, "cookies": cookies}), &d).unwrap_err();
            assert!(
                !e.message.contains(secret) && !e.message.contains("12345"),
                "{}",
                e.message
            );
            assert!(e.message.contains(says), "{says}: {}", e.message);
        }
    }
}
