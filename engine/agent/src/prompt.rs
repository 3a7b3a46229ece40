//! What the model is told each step: the actions it may take (the
//! browser-use extension's, then every plugin action with its schema), the
//! task, the page and the steps so far.

use serde_json::{Value, json};

use crate::history::HistoryItem;

/// An action the model may choose.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of its parameters.
    pub params: Value,
}

/// At most this many earlier steps go into a prompt (the newest).
pub const PROMPT_HISTORY: usize = 10;

/// The browser-use extension's own actions.
pub fn built_in_actions() -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, params: Value| ToolSpec {
        name: name.into(),
        description: description.into(),
        params,
    };
    vec![
        spec(
            "click",
            "Click the element with this index.",
            json!({"type": "object", "properties": {"index": {"type": "integer"}}, "required": ["index"]}),
        ),
        spec(
            "input_text",
            "Type text into the element with this index; clear (default true) replaces what it holds.",
            json!({"type": "object", "properties": {"index": {"type": "integer"}, "text": {"type": "string"}, "clear": {"type": "boolean"}}, "required": ["index", "text"]}),
        ),
        spec(
            "navigate",
            "Open a URL in the tab.",
            json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
        ),
        spec(
            "scroll",
            "Scroll the page by viewport heights.",
            json!({"type": "object", "properties": {"down": {"type": "boolean"}, "pages": {"type": "number"}}}),
        ),
        spec(
            "search",
            "Search the web (engine: duckduckgo (default), google or bing).",
            json!({"type": "object", "properties": {"query": {"type": "string"}, "engine": {"type": "string", "enum": ["duckduckgo", "google", "bing"]}}, "required": ["query"]}),
        ),
        spec(
            "done",
            "Finish: text is the summary (or the answer the task asks for); success says whether the task was accomplished.",
            json!({"type": "object", "properties": {"text": {"type": "string"}, "success": {"type": "boolean"}}, "required": ["text"]}),
        ),
    ]
}

/// The system prompt: how to answer and every action there is.
pub fn system_prompt(plugin_actions: &[ToolSpec]) -> String {
    let mut out = String::from(
        "You are a browser agent: you carry out the user's task in a real web browser, one action per turn.\n\
         Each turn you get the task, the current page (URL, title, scroll position, its numbered interactive \
         elements and its text) and the steps taken so far with their results.\n\
         Answer with exactly one JSON object and nothing else, for example {\"type\": \"click\", \"index\": 12}.\n\
         Refer to elements by their [index] in the latest page state; indices change when the page does.\n\
         When the task is complete, or cannot be completed, answer {\"type\": \"done\", \"text\": \"...\", \"success\": true or false}.\n\n\
         Actions:\n",
    );
    for spec in built_in_actions() {
        out.push_str(&format!(
            "- {}: {} Parameters: {}\n",
            spec.name,
            spec.description,
            compact_params(&spec.params)
        ));
    }
    if !plugin_actions.is_empty() {
        out.push_str(
            "\nMore actions (their parameters as JSON Schema; the tab is filled in for you; \
             elements may be named by \"index\" where the schema has it):\n",
        );
        for spec in plugin_actions {
            out.push_str(&format!(
                "- {}: {} Parameters: {}\n",
                spec.name,
                spec.description.trim(),
                spec.params
            ));
        }
    }
    out
}

/// `{"index": integer, "text": string}` from a schema's properties.
fn compact_params(schema: &Value) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return "{}".into();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<String> = properties
        .iter()
        .map(|(name, p)| {
            let kind = p.get("type").and_then(Value::as_str).unwrap_or("any");
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            format!("\"{name}\"{optional}: {kind}")
        })
        .collect();
    format!("{{{}}}", fields.join(", "))
}

/// The user message of one step.
pub fn step_prompt(
    task: &str,
    step: u32,
    max_steps: u32,
    state: &Value,
    history: &[HistoryItem],
) -> String {
    let mut out = format!("Task: {task}\n\nStep {step} of {max_steps}.\n\n");
    if history.is_empty() {
        out.push_str("No steps taken yet.\n\n");
    } else {
        out.push_str("Steps so far (oldest first):\n");
        let skip = history.len().saturating_sub(PROMPT_HISTORY);
        if skip > 0 {
            out.push_str(&format!("({skip} earlier steps left out)\n"));
        }
        for item in &history[skip..] {
            let outcome = match &item.error {
                Some(error) => format!("failed: {error}"),
                None => "ok".into(),
            };
            out.push_str(&format!(
                "{}. {} {} -> {}\n",
                item.step, item.action, item.details, outcome
            ));
        }
        out.push('\n');
    }
    out.push_str(&describe_state(state));
    out
}

/// The page as the model reads it.
pub fn describe_state(state: &Value) -> String {
    let text = |key: &str| state.get(key).and_then(Value::as_str).unwrap_or("");
    let number = |key: &str| state.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    let mut out = format!(
        "Current page:\nURL: {}\nTitle: {}\nScrolled to {} px of {} px (viewport {} px high)\n",
        text("url"),
        text("title"),
        number("scrollY").round(),
        number("scrollHeight").round(),
        number("viewportHeight").round()
    );
    let elements = state
        .get("elements")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if elements.is_empty() {
        out.push_str("Interactive elements: none visible\n");
    } else {
        out.push_str("Interactive elements:\n");
        for element in &elements {
            out.push_str(&describe_element(element));
            out.push('\n');
        }
    }
    out.push_str("Page text:\n");
    out.push_str(text("textContent"));
    out.push('\n');
    out
}

/// `[7] <input type=email id=mail placeholder="you@..."> value="..."`.
pub fn describe_element(element: &Value) -> String {
    let field = |key: &str| {
        element
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let mut tag = field("tag").unwrap_or("element").to_string();
    if let Some(kind) = field("type") {
        tag.push_str(&format!(" type={kind}"));
    }
    if let Some(id) = field("id") {
        tag.push_str(&format!(" id={id}"));
    }
    if let Some(label) = field("ariaLabel") {
        tag.push_str(&format!(" aria-label={label:?}"));
    }
    if let Some(placeholder) = field("placeholder") {
        tag.push_str(&format!(" placeholder={placeholder:?}"));
    }
    if let Some(href) = field("href") {
        tag.push_str(&format!(" href={href}"));
    }
    let index = element.get("index").and_then(Value::as_u64).unwrap_or(0);
    let mut out = format!("[{index}] <{tag}>");
    if let Some(text) = field("text") {
        out.push_str(&format!(" {text:?}"));
    }
    // A password's value stays out of prompts.
    if let Some(value) = field("value") {
        if field("type") == Some("password") {
            out.push_str(" (filled)");
        } else {
            out.push_str(&format!(" value={value:?}"));
        }
    }
    out
}
