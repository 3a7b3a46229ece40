//! `fill_form`: fills a form from one JSON object and optionally submits it.
//!
//! ```json
//! POST /api/v1/tabs/{id}/actions/fill_form
//! {"fields": {"#email": "ada@example.com", "#agree": true, "#country": "uk"}, "submit": "#send"}
//! ```
//!
//! Text fields are clicked and typed into as a person would (trusted events,
//! so the page's own handlers run); checkboxes and radios are clicked when
//! their state differs; selects are set by value or label from script
//! (clicking one would open the browser's popup). `fields` as an object is
//! filled in key order; pass `[{"selector": ..., "value": ...}, ...]` to
//! choose the order.

use wabp_plugin_sdk::host::{self, Modifiers, MouseButton, Target};
use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, ErrorCode, Params, PluginError, Value, json};

struct FillForm;

impl ActionPlugin for FillForm {
    fn actions() -> Vec<ActionSpec> {
        vec![ActionSpec::new(
            "fill_form",
            "Fills form fields from `fields` (CSS selector to value: text for inputs and textareas, true/false for checkboxes and radios, an option's value or label for selects), then clicks `submit` if given",
            json!({
                "type": "object",
                "required": ["fields"],
                "properties": {
                    "fields": {
                        "oneOf": [
                            { "type": "object", "additionalProperties": { "type": ["string", "number", "boolean"] } },
                            { "type": "array", "items": {
                                "type": "object", "required": ["selector", "value"],
                                "properties": { "selector": { "type": "string" }, "value": { "type": ["string", "number", "boolean"] } }
                            } }
                        ]
                    },
                    "submit": { "type": "string", "description": "selector of the button to click after filling" }
                }
            }),
        )]
    }

    fn run(name: &str, params: Value, _ctx: &Context) -> Result<Value, PluginError> {
        if name != "fill_form" {
            return Err(PluginError::not_found(format!("no action {name:?}")));
        }
        let params = Params::new(params)?;
        let fields = fields(params.get("fields"))?;
        let mut filled = Vec::new();
        for (selector, value) in &fields {
            let how = fill(selector, value)?;
            filled.push(json!({ "selector": selector, "how": how }));
        }
        let submitted = match params.optional_str("submit")? {
            Some(selector) => {
                click(selector)?;
                true
            }
            None => false,
        };
        Ok(json!({ "filled": filled, "submitted": submitted }))
    }
}

/// `fields` as (selector, value) pairs, in the order they are filled.
fn fields(value: Option<&Value>) -> Result<Vec<(String, Value)>, PluginError> {
    let pairs: Vec<(String, Value)> = match value {
        Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let selector = item["selector"].as_str().ok_or_else(|| PluginError::invalid(format!("fields[{i}].selector must be a string")))?;
                Ok((selector.to_string(), item["value"].clone()))
            })
            .collect::<Result<_, PluginError>>()?,
        _ => return Err(PluginError::invalid("\"fields\" is required: an object of selector to value, or an array of {selector, value}")),
    };
    if pairs.is_empty() {
        return Err(PluginError::invalid("\"fields\" is empty: nothing to fill"));
    }
    for (selector, value) in &pairs {
        if !matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
            return Err(PluginError::invalid(format!("the value for {selector:?} must be a string, number or boolean")));
        }
    }
    Ok(pairs)
}

/// Fills one field; returns how ("typed", "checked", "unchecked", "selected", "set", "unchanged").
fn fill(selector: &str, value: &Value) -> Result<&'static str, PluginError> {
    let info = eval(&format!(
        "(() => {{ let el; try {{ el = document.querySelector({sel}); }} catch (e) {{ return {{ error: e.message }}; }}
           if (!el) return null;
           return {{ tag: el.tagName.toLowerCase(), type: (el.type || '').toLowerCase(), disabled: !!el.disabled,
                     readonly: !!el.readOnly, checked: !!el.checked, editable: el.isContentEditable }}; }})()",
        sel = js(selector)
    ))?;
    if let Some(error) = info["error"].as_str() {
        return Err(PluginError::invalid(format!("invalid selector {selector:?}: {error}")));
    }
    if info.is_null() {
        return Err(PluginError::new(ErrorCode::SelectorNotFound, format!("no element matches {selector:?}")));
    }
    if info["disabled"] == true || info["readonly"] == true {
        return Err(PluginError::new(ErrorCode::ElementNotInteractable, format!("{selector:?} is disabled or read-only")));
    }
    let tag = info["tag"].as_str().unwrap_or_default();
    let kind = info["type"].as_str().unwrap_or_default();
    match (tag, kind) {
        ("input", "checkbox" | "radio") => {
            let want = value.as_bool().ok_or_else(|| PluginError::invalid(format!("{selector:?} is a {kind}: give true or false")))?;
            if info["checked"] == want {
                return Ok("unchanged");
            }
            if kind == "radio" && !want {
                return Err(PluginError::invalid(format!("{selector:?} is a radio button: set another one of its group to true instead")));
            }
            click(selector)?;
            let now = eval(&format!("document.querySelector({}).checked", js(selector)))?;
            if now != want {
                return Err(PluginError::new(ErrorCode::ElementNotInteractable, format!("clicking {selector:?} did not change it (covered, or the page undid it)")));
            }
            Ok(if want { "checked" } else { "unchecked" })
        }
        ("input", "file") => Err(PluginError::invalid(format!("{selector:?} is a file input: click it and answer the file_chooser event (POST /file-chooser/{{id}})"))),
        ("select", _) => {
            let text = text_of(value);
            let result = eval(&format!(
                "(() => {{ const el = document.querySelector({sel}); const want = {want};
                   const opt = [...el.options].find(o => o.value === want) || [...el.options].find(o => o.text.trim() === want);
                   if (!opt) return {{ missing: [...el.options].map(o => o.value) }};
                   el.value = opt.value;
                   el.dispatchEvent(new Event('input', {{ bubbles: true }}));
                   el.dispatchEvent(new Event('change', {{ bubbles: true }}));
                   return {{ value: el.value }}; }})()",
                sel = js(selector),
                want = js(&text)
            ))?;
            if let Some(options) = result["missing"].as_array() {
                return Err(PluginError::invalid(format!("{selector:?} has no option {text:?}; its values are {}", Value::Array(options.clone()))));
            }
            Ok("selected")
        }
        ("input", "date" | "datetime-local" | "month" | "week" | "time" | "color" | "range" | "hidden") => {
            // These have no text caret to type into; set them as their pickers would.
            let text = text_of(value);
            let ok = eval(&format!(
                "(() => {{ const el = document.querySelector({sel}); el.value = {want};
                   el.dispatchEvent(new Event('input', {{ bubbles: true }}));
                   el.dispatchEvent(new Event('change', {{ bubbles: true }}));
                   return el.value === {want}; }})()",
                sel = js(selector),
                want = js(&text)
            ))?;
            if ok != true {
                return Err(PluginError::invalid(format!("{selector:?} ({kind}) does not accept {text:?}")));
            }
            Ok("set")
        }
        ("input" | "textarea", _) => {
            type_into(selector, &text_of(value))?;
            Ok("typed")
        }
        _ if info["editable"] == true => {
            type_into(selector, &text_of(value))?;
            Ok("typed")
        }
        _ => Err(PluginError::invalid(format!("{selector:?} is a <{tag}>, not a form field"))),
    }
}

/// Clicks into the field, selects what is there and types over it.
fn type_into(selector: &str, text: &str) -> Result<(), PluginError> {
    click(selector)?;
    host::page::focus(&target(selector), true)?;
    if text.is_empty() {
        host::input::key_press("Backspace", Modifiers::empty())?;
    } else {
        host::input::insert_text(text)?;
    }
    Ok(())
}

/// A trusted left click at the point `locate` gives: scrolled into view,
/// visible and not covered.
fn click(selector: &str) -> Result<(), PluginError> {
    let at = host::page::locate(&target(selector))?;
    host::input::mouse_move(at.x, at.y)?;
    host::input::mouse_down(at.x, at.y, MouseButton::Left, 1, Modifiers::empty())?;
    host::input::mouse_up(at.x, at.y, MouseButton::Left, 1, Modifiers::empty())?;
    Ok(())
}

fn target(selector: &str) -> Target {
    Target::Selector(selector.to_string())
}

fn eval(expression: &str) -> Result<Value, PluginError> {
    Ok(host::script::evaluate(expression)?)
}

/// A JavaScript string literal (JSON strings are valid JavaScript).
fn js(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

wabp_plugin_sdk::export_action_plugin!(FillForm);
