//! LLM providers over their own wire formats: OpenAI-compatible chat
//! completions, Anthropic messages, Google generateContent. One call per
//! step: a system prompt and one user message in, the model's text out (a
//! tool call, where a provider answers with one, comes out as the same JSON
//! text an action would be).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Which API a task talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenAI chat completions, or any server speaking them (vLLM,
    /// llama.cpp's server, Ollama): `baseUrl` ends in `/v1`.
    Openai,
    /// Anthropic messages: `baseUrl` is the host root.
    Anthropic,
    /// Google generateContent (Gemini): `baseUrl` is the host root.
    Google,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Openai => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Google => "google",
        }
    }

    fn default_base_url(self) -> &'static str {
        match self {
            Provider::Openai => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com",
            Provider::Google => "https://generativelanguage.googleapis.com",
        }
    }

    fn default_model(self) -> &'static str {
        match self {
            Provider::Openai => "gpt-4o",
            Provider::Anthropic => "claude-sonnet-4-5",
            Provider::Google => "gemini-2.5-flash",
        }
    }

    /// The environment variables a key is read from, in order (the ones
    /// each provider's own SDK reads).
    fn key_variables(self) -> &'static [&'static str] {
        match self {
            Provider::Openai => &["OPENAI_API_KEY"],
            Provider::Anthropic => &["ANTHROPIC_API_KEY"],
            Provider::Google => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        }
    }

    fn base_url_variable(self) -> &'static str {
        match self {
            Provider::Openai => "OPENAI_BASE_URL",
            Provider::Anthropic => "ANTHROPIC_BASE_URL",
            Provider::Google => "GOOGLE_GEMINI_BASE_URL",
        }
    }
}

/// A task's `settings`, as the browser-use extension sends them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// `openai` (any OpenAI-compatible server), `anthropic` or `google`.
    pub llm_provider: Provider,
    /// The provider's key; default: `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`,
    /// `GEMINI_API_KEY`/`GOOGLE_API_KEY` in the engine's environment. Never
    /// logged, recorded or returned.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Model name; default `gpt-4o`, `claude-sonnet-4-5`, `gemini-2.5-flash`.
    #[serde(default)]
    pub model: Option<String>,
    /// As the provider's SDK takes it: OpenAI's ends in `/v1`
    /// (`http://127.0.0.1:11434/v1` for Ollama); Anthropic's and Google's
    /// are the host root. Default: the provider's, or `OPENAI_BASE_URL`,
    /// `ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`.
    #[serde(default)]
    pub base_url: Option<String>,
}

/// What a task shows of its settings (never the key).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PublicSettings {
    pub llm_provider: Provider,
    pub model: String,
    pub base_url: String,
}

/// How many times a 429, a 5xx or a dropped connection is tried again, and
/// the first wait (doubled each time; a `Retry-After` up to
/// [`MAX_RETRY_AFTER`] is honoured instead).
pub const RETRIES: u32 = 3;
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_RETRY_AFTER: Duration = Duration::from_secs(20);
/// One model call may take this long (local models are slow).
const CALL_TIMEOUT: Duration = Duration::from_secs(180);
const MAX_TOKENS: u32 = 1024;

/// A client of one provider, model and key.
pub struct Llm {
    provider: Provider,
    model: String,
    base_url: String,
    key: Option<String>,
    http: reqwest::Client,
}

/// Why a model call failed: `fatal` ones (a refused key, a model that
/// doesn't exist) end the task at once; the others count as a failed step.
#[derive(Debug, Clone)]
pub struct LlmError {
    pub message: String,
    pub fatal: bool,
}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LLM API Error: {}", self.message)
    }
}

impl Llm {
    /// A client for `settings`, the key and base URL filled in from the
    /// environment where the settings leave them out.
    pub fn new(settings: &Settings) -> Result<Llm, String> {
        let provider = settings.llm_provider;
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let base_url = settings
            .base_url
            .clone()
            .filter(|u| !u.trim().is_empty())
            .or_else(|| env(provider.base_url_variable()));
        let custom_server = base_url.is_some();
        let base_url = base_url
            .unwrap_or_else(|| provider.default_base_url().to_string())
            .trim()
            .trim_end_matches('/')
            .to_string();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(format!(
                "settings.baseUrl must be an http:// or https:// URL, not {base_url:?}"
            ));
        }
        let key = settings
            .api_key
            .clone()
            .filter(|k| !k.trim().is_empty())
            .or_else(|| provider.key_variables().iter().find_map(|v| env(v)));
        // A local server (Ollama, llama.cpp) may need no key; the
        // provider's own API always does.
        if key.is_none() && !custom_server {
            return Err(format!(
                "no API key for {}: give settings.apiKey or set {}",
                provider.as_str(),
                provider.key_variables().join(" or ")
            ));
        }
        let model = settings
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| provider.default_model().to_string());
        let http = reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .connect_timeout(Duration::from_secs(15))
            .build()
            .map_err(|e| format!("could not make an HTTP client: {e}"))?;
        Ok(Llm {
            provider,
            model,
            base_url,
            key,
            http,
        })
    }

    pub fn public_settings(&self) -> PublicSettings {
        PublicSettings {
            llm_provider: self.provider,
            model: self.model.clone(),
            base_url: self.base_url.clone(),
        }
    }

    /// The model's answer to `system` and `user`, tried again on a 429, a
    /// 5xx or a dropped connection, at most [`RETRIES`] times.
    pub async fn complete(&self, system: &str, user: &str) -> Result<String, LlmError> {
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 0;
        loop {
            match self.call_once(system, user).await {
                Ok(text) => return Ok(text),
                Err(Attempt::Retry { error, after }) if attempt < RETRIES => {
                    attempt += 1;
                    let wait = after.unwrap_or(backoff).min(MAX_RETRY_AFTER);
                    tracing::info!(
                        provider = self.provider.as_str(),
                        attempt,
                        "model call failed ({}), trying again in {} ms",
                        error.message,
                        wait.as_millis()
                    );
                    tokio::time::sleep(wait).await;
                    backoff *= 2;
                }
                Err(Attempt::Retry { error, .. }) | Err(Attempt::Fail(error)) => {
                    return Err(error);
                }
            }
        }
    }

    fn request(&self, system: &str, user: &str) -> reqwest::RequestBuilder {
        match self.provider {
            Provider::Openai => {
                let mut request = self
                    .http
                    .post(format!("{}/chat/completions", self.base_url))
                    .json(&json!({
                        "model": self.model,
                        "messages": [
                            {"role": "system", "content": system},
                            {"role": "user", "content": user},
                        ],
                        "temperature": 0,
                        "max_tokens": MAX_TOKENS,
                    }));
                if let Some(key) = &self.key {
                    request = request.bearer_auth(key);
                }
                request
            }
            Provider::Anthropic => {
                let mut request = self
                    .http
                    .post(format!("{}/v1/messages", self.base_url))
                    .header("anthropic-version", "2023-06-01")
                    .json(&json!({
                        "model": self.model,
                        "system": system,
                        "messages": [{"role": "user", "content": user}],
                        "max_tokens": MAX_TOKENS,
                        "temperature": 0,
                    }));
                if let Some(key) = &self.key {
                    request = request.header("x-api-key", key);
                }
                request
            }
            Provider::Google => {
                let mut request = self
                    .http
                    .post(format!(
                        "{}/v1beta/models/{}:generateContent",
                        self.base_url, self.model
                    ))
                    .json(&json!({
                        "systemInstruction": {"parts": [{"text": system}]},
                        "contents": [{"role": "user", "parts": [{"text": user}]}],
                        "generationConfig": {"temperature": 0, "maxOutputTokens": MAX_TOKENS},
                    }));
                if let Some(key) = &self.key {
                    request = request.header("x-goog-api-key", key);
                }
                request
            }
        }
    }

    async fn call_once(&self, system: &str, user: &str) -> Result<String, Attempt> {
        let response = match self.request(system, user).send().await {
            Ok(response) => response,
            Err(e) => {
                let timeout = e.is_timeout();
                let error = self.error(
                    format!("could not reach {}: {}", self.base_url, e.without_url()),
                    false,
                );
                return Err(if timeout {
                    Attempt::Fail(error)
                } else {
                    Attempt::Retry { error, after: None }
                });
            }
        };
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = response.text().await.unwrap_or_default();
        if !status.is_success() {
            let detail = error_detail(&body);
            let message = match detail {
                Some(detail) => format!("{status}: {detail}"),
                None => status.to_string(),
            };
            let retryable =
                status.as_u16() == 429 || status.as_u16() == 529 || status.is_server_error();
            let error = self.error(message, matches!(status.as_u16(), 401 | 403 | 404));
            return Err(if retryable {
                Attempt::Retry {
                    error,
                    after: retry_after,
                }
            } else {
                Attempt::Fail(error)
            });
        }
        let value: Value = serde_json::from_str(&body).map_err(|e| {
            Attempt::Fail(self.error(format!("the answer is not JSON: {e}"), false))
        })?;
        self.answer_text(&value).ok_or_else(|| {
            Attempt::Fail(self.error("the answer has no text and no tool call".into(), false))
        })
    }

    /// An error whose message never carries the key (some providers echo it).
    fn error(&self, message: String, fatal: bool) -> LlmError {
        let message = match &self.key {
            Some(key) if key.len() >= 4 => message.replace(key.as_str(), "[redacted]"),
            _ => message,
        };
        LlmError { message, fatal }
    }

    /// The text of an answer; a tool call becomes `{"type": name, ...args}`.
    fn answer_text(&self, value: &Value) -> Option<String> {
        match self.provider {
            Provider::Openai => {
                let message = value.pointer("/choices/0/message")?;
                if let Some(call) = message.pointer("/tool_calls/0/function") {
                    let args = call
                        .get("arguments")
                        .and_then(Value::as_str)
                        .and_then(|a| serde_json::from_str(a).ok())
                        .unwrap_or(json!({}));
                    return tool_call_text(call.get("name")?.as_str()?, args);
                }
                message.get("content")?.as_str().map(str::to_string)
            }
            Provider::Anthropic => {
                let blocks = value.get("content")?.as_array()?;
                if let Some(call) = blocks.iter().find(|b| b["type"] == "tool_use") {
                    return tool_call_text(call.get("name")?.as_str()?, call["input"].clone());
                }
                let text: Vec<&str> = blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                (!text.is_empty()).then(|| text.join(""))
            }
            Provider::Google => {
                let parts = value.pointer("/candidates/0/content/parts")?.as_array()?;
                if let Some(call) = parts.iter().find_map(|p| p.get("functionCall")) {
                    return tool_call_text(call.get("name")?.as_str()?, call["args"].clone());
                }
                let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
                (!text.is_empty()).then(|| text.join(""))
            }
        }
    }
}

enum Attempt {
    Retry {
        error: LlmError,
        after: Option<Duration>,
    },
    Fail(LlmError),
}

fn tool_call_text(name: &str, args: Value) -> Option<String> {
    let mut action = match args {
        Value::Object(map) => map,
        _ => Default::default(),
    };
    action.insert("type".into(), Value::String(name.to_string()));
    Some(Value::Object(action).to_string())
}

/// The message of a provider's error body (`{"error": {"message"}}` for
/// all three), else its start.
fn error_detail(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        let message = value
            .pointer("/error/message")
            .or_else(|| value.get("message"))
            .or_else(|| value.get("error").filter(|e| e.is_string()));
        if let Some(Value::String(m)) = message {
            return Some(m.clone());
        }
    }
    Some(body.chars().take(300).collect())
}
