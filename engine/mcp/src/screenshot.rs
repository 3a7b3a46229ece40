//! BrowserLoop's `screenshot` tool, schema and behaviour as its API reference
//! gives them: a URL loaded in a temporary page of its own (never one of the
//! agent's tabs), captured at a size and format, with optional cookies that
//! are validated and never logged. Defaults come from `WABP_SCREENSHOT_*`.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{ContentBlock, Tool};
use serde_json::{Map, Value, json};
use wabp_core::oneshot::{ImageFormat, OneshotCookie, OneshotRequest};
use wabp_core::{Engine, Error, ErrorCode, Result};

pub const TOOL_NAME: &str = "screenshot";

pub const MAX_COOKIES: usize = 50;
pub const MAX_COOKIE_VALUE: usize = 4096;

/// Defaults for the tool's optional arguments, from the environment.
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

pub fn tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "url": {"type": "string", "format": "uri", "description": "Target URL to capture (required)"},
            "width": {"type": "number", "minimum": 200, "maximum": 4000, "description": "Viewport width in pixels (optional, default: 1280)"},
            "height": {"type": "number", "minimum": 200, "maximum": 4000, "description": "Viewport height in pixels (optional, default: 720)"},
            "format": {"type": "string", "enum": ["webp", "png", "jpeg"], "description": "Image format (optional, default: 'webp')"},
            "quality": {"type": "number", "minimum": 1, "maximum": 100, "description": "Image quality for WebP/JPEG (optional, default: 80)"},
            "waitForNetworkIdle": {"type": "boolean", "description": "Wait for network idle before capture (optional, default: true)"},
            "timeout": {"type": "number", "minimum": 1000, "maximum": 120000, "description": "Timeout in milliseconds (optional, default: 30000)"},
            "fullPage": {"type": "boolean", "description": "Capture full page instead of viewport (optional, default: false)"},
            "userAgent": {"type": "string", "description": "Custom user agent string (optional)"},
            "selector": {"type": "string", "description": "CSS selector for element-specific screenshot (optional)"},
            "cookies": {
                "description": "Cookies for authentication (optional)",
                "oneOf": [
                    {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "value": {"type": "string"},
                                "domain": {"type": "string"},
                                "path": {"type": "string"},
                                "httpOnly": {"type": "boolean"},
                                "secure": {"type": "boolean"},
                                "expires": {"type": "number"},
                                "sameSite": {"type": "string", "enum": ["Strict", "Lax", "None"]}
                            },
                            "required": ["name", "value"]
                        }
                    },
                    {"type": "string", "description": "JSON string containing cookie array"}
                ]
            }
        },
        "required": ["url"]
    });
    let Value::Object(schema) = schema else {
        unreachable!("a JSON object literal")
    };
    Tool::new(
        TOOL_NAME,
        "Capture a screenshot of a web page in a temporary tab of its own (the agent's tabs are not touched)",
        Arc::new(schema),
    )
}

/// A validated request plus what the metadata reports.
#[derive(Debug)]
pub struct Parsed {
    pub request: OneshotRequest,
    pub retry_count: u32,
    pub retry_delay: Duration,
    pub user_agent_is_custom: bool,
}

fn number(
    args: &Map<String, Value>,
    key: &str,
    label: &str,
    min: f64,
    max: f64,
) -> Result<Option<f64>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            let v = n.as_f64().unwrap_or(f64::NAN);
            if !v.is_finite() {
                Err(Error::invalid(format!("{label} must be a number")))
            } else if v < min {
                Err(Error::invalid(format!("{label} must be at least {min}")))
            } else if v > max {
                Err(Error::invalid(format!("{label} must be at most {max}")))
            } else {
                Ok(Some(v))
            }
        }
        Some(_) => Err(Error::invalid(format!("{label} must be a number"))),
    }
}

fn boolean(args: &Map<String, Value>, key: &str) -> Result<Option<bool>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(Error::invalid(format!("{key} must be a boolean"))),
    }
}

fn string<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Error::invalid(format!("{key} must be a string"))),
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

/// The target URL: http or https with a host.
pub fn parse_url(text: &str) -> Result<url::Url> {
    let url = url::Url::parse(text.trim()).map_err(|_| Error::invalid("Invalid URL format"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::invalid(
            "Invalid URL format: the URL must start with http:// or https://",
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(Error::invalid("Invalid URL format: the URL has no host"));
    }
    Ok(url)
}

pub fn parse(args: &Map<String, Value>, defaults: &ScreenshotDefaults) -> Result<Parsed> {
    let url_text = match args.get("url") {
        Some(Value::String(s)) => s.as_str(),
        None | Some(Value::Null) => return Err(Error::invalid("url is required")),
        Some(_) => return Err(Error::invalid("url must be a string")),
    };
    let url = parse_url(url_text)?;
    let width = number(args, "width", "Width", 200.0, 4000.0)?
        .map(|v| v.round() as u32)
        .unwrap_or(defaults.width);
    let height = number(args, "height", "Height", 200.0, 4000.0)?
        .map(|v| v.round() as u32)
        .unwrap_or(defaults.height);
    let format = match string(args, "format")? {
        None => defaults.format,
        Some(text) => ImageFormat::parse(text)
            .filter(|_| text != "jpg")
            .ok_or_else(|| {
                Error::invalid(format!("format must be webp, png or jpeg, not {text:?}"))
            })?,
    };
    let quality = number(args, "quality", "Quality", 1.0, 100.0)?
        .map(|v| v.round() as u8)
        .unwrap_or(defaults.quality);
    let timeout_ms = number(args, "timeout", "Timeout", 1000.0, 120_000.0)?
        .map(|v| v.round() as u64)
        .unwrap_or(defaults.timeout_ms);
    let wait_for_network_idle =
        boolean(args, "waitForNetworkIdle")?.unwrap_or(defaults.wait_for_network_idle);
    let full_page = boolean(args, "fullPage")?.unwrap_or(false);
    let selector = match string(args, "selector")? {
        Some(s) if s.trim().is_empty() => {
            return Err(Error::invalid("selector must not be empty"));
        }
        Some(s) if s.len() > 4096 => {
            return Err(Error::invalid("selector must be at most 4096 characters"));
        }
        other => other.map(str::to_string),
    };
    let (user_agent, user_agent_is_custom) = match string(args, "userAgent")? {
        Some(ua) => {
            check_user_agent(ua)?;
            (Some(ua.to_string()), true)
        }
        None => (defaults.user_agent.clone(), defaults.user_agent.is_some()),
    };
    let cookies = match args.get("cookies") {
        None | Some(Value::Null) => Vec::new(),
        Some(value) => parse_cookies(value, &url)?,
    };
    Ok(Parsed {
        request: OneshotRequest {
            url: url.to_string(),
            width,
            height,
            format,
            quality,
            wait_for_network_idle,
            timeout: Duration::from_millis(timeout_ms),
            full_page,
            selector,
            user_agent,
            cookies,
        },
        retry_count: defaults.retry_count,
        retry_delay: Duration::from_millis(defaults.retry_delay_ms),
        user_agent_is_custom,
    })
}

/// Patterns no legitimate cookie carries (markup or script injection).
const SUSPICIOUS: &[&str] = &[
    "<script",
    "</script",
    "javascript:",
    "vbscript:",
    "data:text/html",
    "<iframe",
    "<img",
    "<svg",
    "onerror=",
    "onload=",
    "eval(",
    "document.cookie",
    "expression(",
];

fn suspicious(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    SUSPICIOUS.iter().any(|p| lower.contains(p))
}

/// Cookie names are RFC 6265 tokens.
fn valid_cookie_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 256
        && name
            .chars()
            .all(|c| c.is_ascii_graphic() && !"()<>@,;:\\\"/[]?={}".contains(c))
}

fn valid_domain(domain: &str) -> bool {
    let bare = domain.strip_prefix('.').unwrap_or(domain);
    !bare.is_empty()
        && domain.len() <= 253
        && bare
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        && !bare.starts_with('.')
        && !bare.ends_with('.')
}

/// The cookie's domain covers the target host: equal, or a parent domain
/// (`.example.com` or `example.com` for `app.example.com`). IP addresses and
/// localhost match only themselves.
pub fn domain_matches(domain: &str, host: &str) -> bool {
    let domain = domain
        .strip_prefix('.')
        .unwrap_or(domain)
        .to_ascii_lowercase();
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    if domain == host {
        return true;
    }
    let is_ip = host.parse::<std::net::IpAddr>().is_ok();
    !is_ip && host != "localhost" && host.ends_with(&format!(".{domain}")) && domain.contains('.')
}

/// Cookies as an array or as a JSON string of one, checked one by one.
/// Errors name the cookie by index and name, never by value.
pub fn parse_cookies(value: &Value, url: &url::Url) -> Result<Vec<OneshotCookie>> {
    let parsed;
    let list = match value {
        Value::Array(items) => items,
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).map_err(|e| {
                Error::invalid(format!(
                    "cookies: the string is not valid JSON (line {}, column {})",
                    e.line(),
                    e.column()
                ))
            })?;
            parsed.as_array().ok_or_else(|| {
                Error::invalid("cookies: the JSON string must hold an array of cookie objects")
            })?
        }
        _ => {
            return Err(Error::invalid(
                "cookies must be an array of cookie objects or a JSON string of one",
            ));
        }
    };
    if list.len() > MAX_COOKIES {
        return Err(Error::invalid(format!(
            "too many cookies: {} (at most {MAX_COOKIES})",
            list.len()
        )));
    }
    let host = url.host_str().unwrap_or_default();
    list.iter()
        .enumerate()
        .map(|(i, item)| parse_cookie(i, item, host))
        .collect()
}

fn parse_cookie(index: usize, item: &Value, host: &str) -> Result<OneshotCookie> {
    let object = item
        .as_object()
        .ok_or_else(|| Error::invalid(format!("cookie {index} must be an object")))?;
    let name = match object.get("name") {
        Some(Value::String(n)) => n.clone(),
        _ => {
            return Err(Error::invalid(format!(
                "cookie {index}: name is required (a string)"
            )));
        }
    };
    if !valid_cookie_name(&name) {
        return Err(Error::invalid(format!(
            "cookie {index}: the name has characters a cookie name cannot have"
        )));
    }
    let label = format!("cookie {index} ({name})");
    let value = match object.get("value") {
        Some(Value::String(v)) => v.clone(),
        _ => {
            return Err(Error::invalid(format!(
                "{label}: value is required (a string)"
            )));
        }
    };
    if value.len() > MAX_COOKIE_VALUE {
        return Err(Error::invalid(format!(
            "{label}: the value is longer than {MAX_COOKIE_VALUE} bytes"
        )));
    }
    if value.chars().any(|c| c.is_control() || c == ';') {
        return Err(Error::invalid(format!(
            "{label}: the value has control characters or ';'"
        )));
    }
    if suspicious(&name) || suspicious(&value) {
        return Err(Error::invalid(format!(
            "{label}: refused, it carries a suspicious pattern (script or markup)"
        )));
    }
    let text = |key: &str| -> Result<Option<String>> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Error::invalid(format!("{label}: {key} must be a string"))),
        }
    };
    let flag = |key: &str| -> Result<Option<bool>> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(Error::invalid(format!("{label}: {key} must be a boolean"))),
        }
    };
    let domain = text("domain")?;
    if let Some(domain) = &domain {
        if !valid_domain(domain) || suspicious(domain) {
            return Err(Error::invalid(format!(
                "{label}: the domain has characters a domain cannot have"
            )));
        }
        if !domain_matches(domain, host) {
            return Err(Error::invalid(format!(
                "{label}: domain {domain} does not match the target host {host}"
            )));
        }
    }
    let path = text("path")?;
    if let Some(path) = &path {
        if !path.starts_with('/')
            || path.len() > 1024
            || path.chars().any(|c| c.is_control() || c == ';')
            || suspicious(path)
        {
            return Err(Error::invalid(format!(
                "{label}: path must start with / and have no control characters or ';'"
            )));
        }
    }
    let expires = match object.get("expires") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(
            n.as_f64()
                .filter(|v| v.is_finite())
                .ok_or_else(|| Error::invalid(format!("{label}: expires must be a number")))?,
        ),
        Some(_) => {
            return Err(Error::invalid(format!(
                "{label}: expires must be a number (seconds since the epoch)"
            )));
        }
    };
    let same_site = text("sameSite")?;
    if let Some(s) = &same_site {
        if !matches!(s.as_str(), "Strict" | "Lax" | "None") {
            return Err(Error::invalid(format!(
                "{label}: sameSite must be Strict, Lax or None"
            )));
        }
    }
    Ok(OneshotCookie {
        name,
        value,
        domain,
        path,
        http_only: flag("httpOnly")?,
        secure: flag("secure")?,
        expires,
        same_site,
    })
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

/// Runs the tool: validation, capture with retries, image + metadata.
pub async fn run(
    engine: &Arc<Engine>,
    args: &Map<String, Value>,
    defaults: &ScreenshotDefaults,
) -> Result<Vec<ContentBlock>> {
    let parsed = parse(args, defaults)?;
    let request = &parsed.request;
    let host = url::Url::parse(&request.url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default();
    // Metadata only: the host, never the query (it may carry tokens) nor
    // cookie values.
    tracing::info!(
        host = %host,
        width = request.width,
        height = request.height,
        format = request.format.name(),
        cookies = request.cookies.len(),
        "one-shot screenshot"
    );
    let mut attempt = 0;
    let capture = loop {
        attempt += 1;
        match engine.oneshot_screenshot(request.clone()).await {
            Ok(capture) => break capture,
            Err(e) if retryable(&e) && attempt <= parsed.retry_count => {
                tracing::debug!(
                    attempt,
                    code = e.code.as_str(),
                    "screenshot failed; retrying"
                );
                tokio::time::sleep(parsed.retry_delay).await;
            }
            Err(e) => return Err(e),
        }
    };
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let metadata = json!({
        "metadata": {
            "width": capture.width,
            "height": capture.height,
            "timestamp": timestamp,
            "url": request.url,
            "finalUrl": capture.final_url,
            "format": capture.format.name(),
            "viewport": { "width": request.width, "height": request.height },
            "fullPage": request.full_page && request.selector.is_none(),
            "selector": request.selector,
            "truncated": capture.truncated,
            "cookies": request.cookies.len(),
            "attempts": attempt,
            "configuration": {
                "retryCount": parsed.retry_count,
                "userAgent": if parsed.user_agent_is_custom { "custom" } else { "default" },
            }
        }
    });
    Ok(vec![
        ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(&capture.data),
            capture.format.mime(),
        ),
        ContentBlock::text(metadata.to_string()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn defaults_and_ranges() {
        let d = ScreenshotDefaults::default();
        let p = parse(&args(json!({"url": "https://example.com/a"})), &d).unwrap();
        assert_eq!((p.request.width, p.request.height), (1280, 720));
        assert_eq!(p.request.format, ImageFormat::Webp);
        assert_eq!(p.request.quality, 80);
        assert!(p.request.wait_for_network_idle);
        assert_eq!(p.request.timeout, Duration::from_secs(30));
        assert_eq!(p.retry_count, 3);
        let e = parse(&args(json!({"url": "https://e.com", "width": 199})), &d).unwrap_err();
        assert_eq!(e.message, "Width must be at least 200");
        let e = parse(&args(json!({"url": "https://e.com", "height": 4001})), &d).unwrap_err();
        assert_eq!(e.message, "Height must be at most 4000");
        let e = parse(&args(json!({"url": "https://e.com", "format": "gif"})), &d).unwrap_err();
        assert!(e.message.contains("webp, png or jpeg"), "{}", e.message);
        let e = parse(&args(json!({"url": "https://e.com", "timeout": 500})), &d).unwrap_err();
        assert_eq!(e.message, "Timeout must be at least 1000");
        let e = parse(&args(json!({"url": "ftp://e.com"})), &d).unwrap_err();
        assert!(e.message.starts_with("Invalid URL format"), "{}", e.message);
        let e = parse(&args(json!({"url": "not a url"})), &d).unwrap_err();
        assert_eq!(e.message, "Invalid URL format");
        assert!(parse(&args(json!({})), &d).is_err());
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
        let p = parse(&args(json!({"url": "http://localhost:3000"})), &d).unwrap();
        assert_eq!(p.request.width, 1920);
        assert!(p.user_agent_is_custom);
    }

    #[test]
    fn cookies_are_validated_without_echoing_values() {
        let url = url::Url::parse("https://app.example.com/dashboard").unwrap();
        let ok = parse_cookies(
            &json!([
                {"name": "session_id", "value": "abc123", "domain": "app.example.com", "path": "/", "httpOnly": true, "secure": true},
                {"name": "auth", "value": "eyJ", "domain": ".example.com"},
                {"name": "plain", "value": "x"}
            ]),
            &url,
        )
        .unwrap();
        assert_eq!(ok.len(), 3);
        let as_string = parse_cookies(
            &json!("[{\"name\":\"session_id\",\"value\":\"abc123xyz789\",\"domain\":\"app.example.com\"}]"),
            &url,
        )
        .unwrap();
        assert_eq!(as_string[0].name, "session_id");
        assert!(
            !format!("{:?}", as_string[0]).contains("abc123xyz789"),
            "Debug hides values"
        );

        let secret = "s3cr3t-value";
        let cases = [
            json!([{"name": "a", "value": secret, "domain": "evil.com"}]),
            json!([{"name": "a", "value": format!("<script>{secret}")}]),
            json!([{"name": "a", "value": "x".repeat(MAX_COOKIE_VALUE + 1)}]),
            json!([{"name": "a b", "value": secret}]),
            json!([{"value": secret}]),
            json!([{"name": "a", "value": secret, "sameSite": "Loose"}]),
            json!([{"name": "a", "value": secret, "domain": "example.com.evil.org"}]),
            json!("not json"),
            json!(42),
        ];
        for case in cases {
            let e = parse_cookies(&case, &url).unwrap_err();
            assert!(!e.message.contains(secret), "{}", e.message);
        }
        let many: Vec<Value> = (0..51)
            .map(|i| json!({"name": format!("c{i}"), "value": "v"}))
            .collect();
        let e = parse_cookies(&Value::Array(many), &url).unwrap_err();
        assert!(e.message.contains("at most 50"), "{}", e.message);
    }

    #[test]
    fn domain_matching() {
        assert!(domain_matches("example.com", "app.example.com"));
        assert!(domain_matches(".example.com", "example.com"));
        assert!(domain_matches("localhost", "localhost"));
        assert!(domain_matches("127.0.0.1", "127.0.0.1"));
        assert!(!domain_matches("0.0.1", "127.0.0.1"));
        assert!(!domain_matches("com", "example.com"));
        assert!(!domain_matches("other.com", "example.com"));
        assert!(!domain_matches("ample.com", "example.com"));
    }
}
