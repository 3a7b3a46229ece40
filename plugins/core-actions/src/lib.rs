//! The built-in input actions: click, move, hover, scroll, type, fill and raw
//! keyboard events, with the Agent Browser Protocol's params and results.
//! Pointer actions take x/y or a target (`ref`, `selector` or `index`),
//! which the host resolves to a point after scrolling it into view.

use wabp_plugin_sdk::host::clock::sleep_ms;
use wabp_plugin_sdk::host::{HostError, Modifiers, MouseButton, Target, input, page};
use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, Params, PluginError, Value, json, modifier_names, parse_modifiers};

struct CoreActions;

/// Pause between keystrokes of `type`, so pages that debounce or autocomplete
/// on input see separate events.
const KEYSTROKE_GAP_MS: u32 = 2;

fn coordinate(description: &str) -> Value {
    json!({ "type": "number", "minimum": 0, "description": description })
}

fn modifiers_schema() -> Value {
    json!({
        "type": "array",
        "items": { "type": "string", "enum": modifier_names() },
        "default": [],
        "description": "Modifier keys held during the event"
    })
}

/// `properties` plus the three ways to name an element instead of a point.
fn with_target(mut properties: Value) -> Value {
    let extra = json!({
        "ref": { "type": "string", "pattern": "^(f[0-9]+)?e[0-9]+$", "description": "Element ref from GET /snapshot or a screenshot label (e7, f1e7)" },
        "selector": { "type": "string", "minLength": 1, "description": "CSS selector; the first match is used" },
        "index": { "type": "integer", "minimum": 1, "description": "Element index from GET /state (the same number as the ref)" }
    });
    if let (Some(map), Some(extra)) = (properties.as_object_mut(), extra.as_object()) {
        map.extend(extra.clone());
    }
    properties
}

fn point_schema(what: &str) -> Value {
    json!({
        "type": "object",
        "properties": with_target(json!({
            "x": coordinate(&format!("Viewport x of the {what}, CSS pixels")),
            "y": coordinate(&format!("Viewport y of the {what}, CSS pixels"))
        })),
        "required": [],
        "description": "Give x and y, or one of ref, selector, index"
    })
}

fn key_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "key": { "type": "string", "minLength": 1, "description": "DOM key value: \"Enter\", \"a\", \"ArrowUp\", \"F5\", ..." },
            "modifiers": modifiers_schema()
        },
        "required": ["key"]
    })
}

impl ActionPlugin for CoreActions {
    fn actions() -> Vec<ActionSpec> {
        vec![
            ActionSpec::new(
                "click",
                "Moves the pointer to (x, y) and clicks there",
                json!({
                    "type": "object",
                    "properties": with_target(json!({
                        "x": coordinate("Viewport x, CSS pixels"),
                        "y": coordinate("Viewport y, CSS pixels"),
                        "button": { "type": "string", "enum": ["left", "right", "middle"], "default": "left" },
                        "click_count": { "type": "integer", "minimum": 1, "maximum": 3, "default": 1, "description": "2 for a double click, 3 for a triple click" },
                        "modifiers": modifiers_schema()
                    })),
                    "required": [],
                    "description": "Give x and y, or one of ref, selector, index"
                }),
            ),
            ActionSpec::new("move", "Moves the pointer to (x, y) or to an element's centre", point_schema("target")),
            ActionSpec::new("hover", "Moves the pointer to (x, y) or to an element's centre and leaves it there", point_schema("target")),
            ActionSpec::new(
                "scroll",
                "Turns the mouse wheel at (x, y), over an element, or at the viewport's centre; positive delta_y scrolls down, positive delta_x right",
                json!({
                    "type": "object",
                    "properties": with_target(json!({
                        "x": coordinate("Viewport x of the wheel event, CSS pixels"),
                        "y": coordinate("Viewport y of the wheel event, CSS pixels"),
                        "delta_x": { "type": "number", "default": 0 },
                        "delta_y": { "type": "number", "default": 0 }
                    })),
                    "required": []
                }),
            ),
            ActionSpec::new(
                "type",
                "Types text, one key press per character, into the focused element or, given a target, at the end of that element's value (it appends)",
                json!({
                    "type": "object",
                    "properties": with_target(json!({ "text": { "type": "string" } })),
                    "required": ["text"]
                }),
            ),
            ActionSpec::new(
                "fill",
                "Replaces the value of a text field or editable element with `text` (empty clears it), firing input and change events",
                json!({
                    "type": "object",
                    "properties": with_target(json!({ "text": { "type": "string" } })),
                    "required": ["text"],
                    "description": "Give one of ref, selector, index, or none to fill the focused element"
                }),
            ),
            ActionSpec::new("keyboard_press", "Presses and releases a key", key_schema()),
            ActionSpec::new("keyboard_down", "Presses a key and keeps it down", key_schema()),
            ActionSpec::new("keyboard_up", "Releases a key", key_schema()),
        ]
    }

    fn run(name: &str, params: Value, _ctx: &Context) -> Result<Value, PluginError> {
        let p = Params::new(params)?;
        match name {
            "click" => click(&p),
            "move" | "hover" => {
                let (x, y) = point_or_target(&p)?;
                input::mouse_move(x, y)?;
                let status = if name == "move" { "moved" } else { "hovered" };
                Ok(json!({ "status": status, "x": number(x), "y": number(y) }))
            }
            "scroll" => scroll(&p),
            "type" => type_text(&p),
            "fill" => fill(&p),
            "keyboard_press" | "keyboard_down" | "keyboard_up" => {
                let key = p.required_str("key")?;
                if key.is_empty() {
                    return Err(PluginError::invalid("\"key\" must not be empty"));
                }
                let modifiers = modifiers(&p)?;
                let status = match name {
                    "keyboard_press" => {
                        input::key_press(key, modifiers)?;
                        "pressed"
                    }
                    "keyboard_down" => {
                        input::key_down(key, modifiers)?;
                        "key_down"
                    }
                    _ => {
                        input::key_up(key, modifiers)?;
                        "key_up"
                    }
                };
                Ok(json!({ "status": status, "key": key }))
            }
            other => Err(PluginError::not_found(format!("core-actions has no action \"{other}\""))),
        }
    }
}

fn click(p: &Params) -> Result<Value, PluginError> {
    let (x, y) = point_or_target(p)?;
    let button = match p.optional_str("button")?.unwrap_or("left") {
        "left" => MouseButton::Left,
        "right" => MouseButton::Right,
        "middle" => MouseButton::Middle,
        other => return Err(PluginError::invalid(format!("\"button\" must be \"left\", \"right\" or \"middle\", got \"{other}\""))),
    };
    let clicks = p.optional_u32("click_count", 1).ok().filter(|n| (1..=3).contains(n));
    let clicks = clicks.ok_or_else(|| PluginError::invalid("\"click_count\" must be 1, 2 or 3"))?;
    let modifiers = modifiers(p)?;
    input::mouse_move(x, y)?;
    // Each press carries its position in the sequence, which is how the page
    // sees a double or triple click (dblclick fires on the second).
    for i in 1..=clicks {
        input::mouse_down(x, y, button, i, modifiers)?;
        input::mouse_up(x, y, button, i, modifiers)?;
    }
    Ok(json!({ "status": "clicked" }))
}

fn scroll(p: &Params) -> Result<Value, PluginError> {
    let dx = p.optional_f64("delta_x", 0.0)?;
    let dy = p.optional_f64("delta_y", 0.0)?;
    if dx == 0.0 && dy == 0.0 {
        return Err(PluginError::invalid("delta_x or delta_y must be non-zero"));
    }
    let (x, y) = if p.get("x").is_none() && p.get("y").is_none() && target(p)?.is_none() {
        let v = page::viewport()?;
        (v.width / 2.0, v.height / 2.0)
    } else {
        point_or_target(p)?
    };
    // The wheel event goes to whatever is under the pointer, so put it there.
    input::mouse_move(x, y)?;
    input::mouse_wheel(x, y, dx, dy, Modifiers::empty())?;
    Ok(json!({ "status": "scrolled", "delta_x": number(dx), "delta_y": number(dy) }))
}

fn type_text(p: &Params) -> Result<Value, PluginError> {
    let text = p.required_str("text")?;
    if let Some(target) = target(p)? {
        page::focus(&target, false)?;
    }
    for (i, c) in text.replace("\r\n", "\n").chars().enumerate() {
        if i > 0 {
            sleep_ms(KEYSTROKE_GAP_MS);
        }
        let key = match c {
            // Control characters have no key of their own; type them as the
            // keys that produce them.
            '\n' | '\r' => "Enter".to_string(),
            '\t' => "Tab".to_string(),
            c => c.to_string(),
        };
        input::key_press(&key, Modifiers::empty())?;
    }
    Ok(json!({ "status": "typed", "text": text }))
}

/// Replaces the value: select everything, then insert (or delete), so the
/// page sees the same beforeinput/input events a user's paste makes.
fn fill(p: &Params) -> Result<Value, PluginError> {
    let text = p.required_str("text")?;
    // No target: the focused element.
    let target = target(p)?.unwrap_or_else(|| Target::Selector(":focus".into()));
    page::focus(&target, true).map_err(|e| match (&target, e) {
        (Target::Selector(s), HostError::SelectorNotFound(_)) if s == ":focus" => {
            PluginError::invalid("no element has focus; give \"ref\", \"selector\" or \"index\"")
        }
        (_, e) => e.into(),
    })?;
    if text.is_empty() {
        input::key_press("Delete", Modifiers::empty())?;
    } else {
        input::insert_text(text)?;
    }
    page::dispatch_change(&target)?;
    Ok(json!({ "status": "filled", "text": text }))
}

/// The element named by `ref`, `selector` or `index`, if any (at most one).
fn target(p: &Params) -> Result<Option<Target>, PluginError> {
    let by_ref = p.optional_str("ref")?.map(|r| Target::ElementRef(r.to_string()));
    let by_selector = p.optional_str("selector")?.map(|s| Target::Selector(s.to_string()));
    let by_index = match p.get("index") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Some(Target::ElementRef(format!("e{n}"))),
            _ => return Err(PluginError::invalid("\"index\" must be an integer >= 1")),
        },
    };
    let mut given: Vec<Target> = [by_ref, by_selector, by_index].into_iter().flatten().collect();
    match given.len() {
        0 => Ok(None),
        1 => Ok(given.pop()),
        _ => Err(PluginError::invalid("give only one of \"ref\", \"selector\" and \"index\"")),
    }
}

/// x/y when given, else the centre of the target's visible box.
fn point_or_target(p: &Params) -> Result<(f64, f64), PluginError> {
    match target(p)? {
        Some(t) => {
            if p.get("x").is_some() || p.get("y").is_some() {
                return Err(PluginError::invalid("give either x and y or a target (ref, selector, index), not both"));
            }
            let located = page::locate(&t)?;
            Ok((located.x, located.y))
        }
        None => point(p),
    }
}

fn point(p: &Params) -> Result<(f64, f64), PluginError> {
    let coordinate = |name: &str| {
        let v = p.required_f64(name)?;
        if v.is_finite() && v >= 0.0 { Ok(v) } else { Err(PluginError::invalid(format!("\"{name}\" must be a finite number >= 0"))) }
    };
    Ok((coordinate("x")?, coordinate("y")?))
}

fn modifiers(p: &Params) -> Result<Modifiers, PluginError> {
    parse_modifiers(&p.optional_str_list("modifiers")?)
}

/// Whole numbers are echoed as integers (`100`, not `100.0`), as clients sent them.
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 { json!(v as i64) } else { json!(v) }
}

wabp_plugin_sdk::export_action_plugin!(CoreActions);

#[cfg(test)]
mod tests {
    // Only paths that fail before reaching the host run off-wasm.
    use super::*;
    use wabp_plugin_sdk::ErrorCode;

    fn run(name: &str, params: Value) -> PluginError {
        let ctx = Context { tab_id: "t".into(), pointer_x: 0.0, pointer_y: 0.0 };
        CoreActions::run(name, params, &ctx).unwrap_err()
    }

    #[test]
    fn rejects_bad_params() {
        let cases = [
            ("click", json!({"y": 1}), "\"x\" is required and must be a number"),
            ("click", json!({"ref": "e1", "selector": "a"}), "give only one of \"ref\", \"selector\" and \"index\""),
            ("click", json!({"x": 1, "y": 1, "ref": "e1"}), "give either x and y or a target (ref, selector, index), not both"),
            ("click", json!({"index": 0}), "\"index\" must be an integer >= 1"),
            ("fill", json!({"ref": "e1"}), "\"text\" is required and must be a string"),
            ("click", json!({"x": -1, "y": 1}), "\"x\" must be a finite number >= 0"),
            ("click", json!({"x": 1, "y": 1, "button": "back"}), "\"button\" must be \"left\", \"right\" or \"middle\", got \"back\""),
            ("click", json!({"x": 1, "y": 1, "click_count": 4}), "\"click_count\" must be 1, 2 or 3"),
            ("click", json!({"x": 1, "y": 1, "click_count": 0}), "\"click_count\" must be 1, 2 or 3"),
            ("scroll", json!({"x": 1, "y": 1}), "delta_x or delta_y must be non-zero"),
            ("type", json!({}), "\"text\" is required and must be a string"),
            ("keyboard_press", json!({"key": ""}), "\"key\" must not be empty"),
        ];
        for (name, params, message) in cases {
            let e = run(name, params);
            assert_eq!((e.code, e.message.as_str()), (ErrorCode::InvalidRequest, message));
        }
        let e = run("keyboard_down", json!({"key": "a", "modifiers": ["Super"]}));
        assert!(e.message.contains("valid modifiers are Shift"), "{}", e.message);
        assert_eq!(run("teleport", json!({})).code, ErrorCode::NotFound);
    }

    #[test]
    fn schemas_are_objects_with_required_fields() {
        for spec in CoreActions::actions() {
            assert_eq!(spec.params_schema["type"], "object", "{}", spec.name);
            assert!(spec.params_schema["required"].is_array(), "{}", spec.name);
        }
    }

    #[test]
    fn whole_numbers_echo_as_integers() {
        assert_eq!(number(100.0).to_string(), "100");
        assert_eq!(number(-3.0).to_string(), "-3");
        assert_eq!(number(1.5).to_string(), "1.5");
    }
}
