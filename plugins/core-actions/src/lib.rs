//! The built-in input actions: click, move, hover, drag, raw mouse buttons,
//! scroll, type, fill, insert, shortcuts and raw keyboard events, with the
//! Agent Browser Protocol's params and results.
//! Pointer actions take x/y or a target (`ref`, `selector` or `index`),
//! which the host resolves to a point after scrolling it into view.

use wabp_plugin_sdk::host::clock::sleep_ms;
use wabp_plugin_sdk::host::{HostError, Modifiers, MouseButton, Target, input, page};
use wabp_plugin_sdk::serde_json;
use wabp_plugin_sdk::{ActionPlugin, ActionSpec, Context, ErrorCode, Params, PluginError, Value, json, modifier_names, parse_modifiers};

struct CoreActions;

/// Pause between keystrokes of `type` (the ABP contract's fixed 2 ms), so
/// pages that debounce or autocomplete on input see separate events. Page
/// time: on the page clock it costs a jump, not a real wait.
const KEYSTROKE_GAP_MS: u32 = 2;
/// Longest `hover` dwell.
const MAX_HOVER_MS: u32 = 10_000;
/// Most intermediate moves of a `drag`.
const MAX_DRAG_STEPS: u32 = 100;
/// Page time between a drag's moves, a frame's worth: drag libraries
/// (SortableJS, dnd-kit) check the pointer on timers and animation frames,
/// and moves sent all at once look like a jump to them.
const DRAG_STEP_MS: u32 = 16;
/// Page time the pointer rests at the drop point before the release, as a
/// hand does: a library that moves the item on a timer has done so.
const DRAG_HOLD_MS: u32 = 100;
/// Largest text `keyboard_insert` takes in one step.
const MAX_INSERT_BYTES: usize = 1 << 20;

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

fn button_schema() -> Value {
    json!({ "type": "string", "enum": ["left", "right", "middle"], "default": "left" })
}

/// One end of a drag: `<end>_x`/`<end>_y`, or `<end>_ref`, `<end>_selector`, `<end>_index`.
fn drag_end_properties(end: &str, properties: &mut serde_json::Map<String, Value>) {
    properties.insert(format!("{end}_x"), coordinate(&format!("Viewport x of the drag's {end}, CSS pixels")));
    properties.insert(format!("{end}_y"), coordinate(&format!("Viewport y of the drag's {end}, CSS pixels")));
    properties.insert(format!("{end}_ref"), json!({ "type": "string", "pattern": "^(f[0-9]+)?e[0-9]+$", "description": format!("Element ref at the drag's {end} (its centre)") }));
    properties.insert(format!("{end}_selector"), json!({ "type": "string", "minLength": 1, "description": format!("CSS selector of the element at the drag's {end} (its centre)") }));
    properties.insert(format!("{end}_index"), json!({ "type": "integer", "minimum": 1, "description": format!("Element index (GET /state) at the drag's {end}") }));
}

fn drag_schema() -> Value {
    let mut properties = serde_json::Map::new();
    drag_end_properties("start", &mut properties);
    drag_end_properties("end", &mut properties);
    properties.insert("steps".into(), json!({ "type": "integer", "minimum": 1, "maximum": MAX_DRAG_STEPS, "default": 10, "description": "Pointer moves between press and release" }));
    properties.insert("button".into(), button_schema());
    properties.insert("modifiers".into(), modifiers_schema());
    json!({
        "type": "object",
        "properties": properties,
        "required": [],
        "description": "Each end: x and y, or one of ref, selector, index"
    })
}

fn mouse_button_schema(what: &str) -> Value {
    json!({
        "type": "object",
        "properties": with_target(json!({
            "x": coordinate(&format!("Viewport x of the {what}, CSS pixels (default: where the pointer is)")),
            "y": coordinate(&format!("Viewport y of the {what}, CSS pixels (default: where the pointer is)")),
            "button": button_schema(),
            "modifiers": modifiers_schema()
        })),
        "required": [],
        "description": "x and y, one of ref, selector, index, or nothing for the pointer's position"
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
        // Every field is named: the engine refuses others (a typo is an
        // error, not a field silently ignored).
        let specs = vec![
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
            ActionSpec::new("hover", "Moves the pointer to (x, y) or to an element's centre and leaves it there; with duration_ms the page runs that long with the pointer over it (a tooltip's delay)", {
                let mut schema = point_schema("target");
                schema["properties"]["duration_ms"] = json!({ "type": "integer", "minimum": 0, "maximum": MAX_HOVER_MS, "default": 0, "description": "How long the pointer stays before the action settles, ms" });
                schema
            }),
            ActionSpec::new(
                "drag",
                "Presses a mouse button at the start, moves to the end in steps and releases it there: HTML5 drag and drop, sliders, pointer-driven boxes",
                drag_schema(),
            ),
            ActionSpec::new("mouse_down", "Presses a mouse button (and keeps it down: later moves carry it)", mouse_button_schema("press")),
            ActionSpec::new("mouse_up", "Releases a mouse button", mouse_button_schema("release")),
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
                    "properties": with_target(json!({ "text": {
                        "type": "string",
                        "maxLength": MAX_TYPED_CHARS,
                        "description": "The characters to type, one key press each; for a longer value use fill",
                    } })),
                    "required": ["text"]
                }),
            ),
            ActionSpec::new(
                "fill",
                "Replaces the value of a text field or editable element with `text` (empty clears it), firing input and change events",
                json!({
                    "type": "object",
                    "properties": with_target(json!({ "text": { "type": "string", "maxLength": MAX_SET_CHARS } })),
                    "required": ["text"],
                    "description": "Give one of ref, selector, index, or none to fill the focused element"
                }),
            ),
            ActionSpec::new(
                "keyboard_shortcut",
                "Presses a key combination: the modifiers down in order, the last key pressed, the modifiers up (e.g. [\"Control\", \"a\"] selects all)",
                json!({
                    "type": "object",
                    "properties": {
                        "keys": {
                            "type": "array",
                            "items": { "type": "string", "minLength": 1 },
                            "minItems": 1,
                            "maxItems": 5,
                            "description": "Modifiers first (Control, Shift, Alt, Meta, ControlOrMeta), then one key (DOM key value)"
                        }
                    },
                    "required": ["keys"]
                }),
            ),
            ActionSpec::new(
                "keyboard_insert",
                "Inserts text at the caret in one step, as an IME commit does (no key events; newlines included)",
                json!({
                    "type": "object",
                    "properties": { "text": { "type": "string", "minLength": 1, "maxLength": MAX_SET_CHARS } },
                    "required": ["text"]
                }),
            ),
            ActionSpec::new("keyboard_press", "Presses and releases a key", key_schema()),
            ActionSpec::new("keyboard_down", "Presses a key and keeps it down", key_schema()),
            ActionSpec::new("keyboard_up", "Releases a key", key_schema()),
        ];
        specs
            .into_iter()
            .map(|mut spec| {
                spec.params_schema["additionalProperties"] = json!(false);
                spec
            })
            .collect()
    }

    fn run(name: &str, params: Value, ctx: &Context) -> Result<Value, PluginError> {
        let p = Params::new(params)?;
        match name {
            "click" => click(&p),
            "move" => {
                let (x, y) = point_or_target(&p)?;
                input::mouse_move(x, y)?;
                Ok(json!({ "status": "moved", "x": number(x), "y": number(y) }))
            }
            "hover" => hover(&p),
            "drag" => drag(&p),
            "mouse_down" | "mouse_up" => mouse_button(name, &p, ctx),
            "keyboard_shortcut" => shortcut(&p),
            "keyboard_insert" => {
                let text = p.required_str("text")?;
                if text.is_empty() {
                    return Err(PluginError::invalid("\"text\" must not be empty"));
                }
                if text.len() > MAX_INSERT_BYTES {
                    return Err(PluginError::invalid(format!("\"text\" is {} bytes; at most {MAX_INSERT_BYTES} are inserted in one step", text.len())));
                }
                input::insert_text(text)?;
                Ok(json!({ "status": "inserted", "length": text.chars().count() }))
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

fn button(p: &Params) -> Result<MouseButton, PluginError> {
    match p.optional_str("button")?.unwrap_or("left") {
        "left" => Ok(MouseButton::Left),
        "right" => Ok(MouseButton::Right),
        "middle" => Ok(MouseButton::Middle),
        other => Err(PluginError::invalid(format!("\"button\" must be \"left\", \"right\" or \"middle\", got \"{other}\""))),
    }
}

fn hover(p: &Params) -> Result<Value, PluginError> {
    let duration = p.optional_u32("duration_ms", 0).ok().filter(|d| *d <= MAX_HOVER_MS);
    let duration = duration.ok_or_else(|| PluginError::invalid(format!("\"duration_ms\" must be an integer from 0 to {MAX_HOVER_MS}")))?;
    let (x, y) = point_or_target(p)?;
    input::mouse_move(x, y)?;
    // The page runs meanwhile (virtual time follows), so hover effects with
    // a delay show before the action settles.
    if duration > 0 {
        sleep_ms(duration);
    }
    Ok(json!({ "status": "hovered", "x": number(x), "y": number(y), "duration_ms": duration }))
}

/// One end of a drag, by coordinates or by element.
fn drag_end(p: &Params, end: &str) -> Result<(f64, f64), PluginError> {
    let field = |name: &str| format!("{end}_{name}");
    let mut fields = serde_json::Map::new();
    for name in ["x", "y", "ref", "selector", "index"] {
        if let Some(v) = p.get(&field(name)) {
            fields.insert(name.to_string(), v.clone());
        }
    }
    if fields.is_empty() {
        return Err(PluginError::invalid(format!("give the drag's {end}: {end}_x and {end}_y, or one of {end}_ref, {end}_selector, {end}_index")));
    }
    let end_params = Params::new(Value::Object(fields))?;
    point_or_target(&end_params).map_err(|e| PluginError::new(e.code, format!("{end}: {}", e.message)))
}

fn drag(p: &Params) -> Result<Value, PluginError> {
    let steps = p.optional_u32("steps", 10).ok().filter(|s| (1..=MAX_DRAG_STEPS).contains(s));
    let steps = steps.ok_or_else(|| PluginError::invalid(format!("\"steps\" must be an integer from 1 to {MAX_DRAG_STEPS}")))?;
    let button = button(p)?;
    let modifiers = modifiers(p)?;
    let (x0, y0) = drag_end(p, "start")?;
    let (x1, y1) = drag_end(p, "end")?;
    input::mouse_move(x0, y0)?;
    input::mouse_down(x0, y0, button, 1, modifiers)?;
    for i in 1..=steps {
        input::pause(DRAG_STEP_MS)?;
        let t = f64::from(i) / f64::from(steps);
        input::mouse_move(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t)?;
    }
    input::pause(DRAG_HOLD_MS)?;
    input::mouse_up(x1, y1, button, 1, modifiers)?;
    Ok(json!({
        "status": "dragged",
        "start": { "x": number(x0), "y": number(y0) },
        "end": { "x": number(x1), "y": number(y1) },
        "steps": steps
    }))
}

/// `mouse_down` / `mouse_up` at a point, a target, or where the pointer is.
fn mouse_button(name: &str, p: &Params, ctx: &Context) -> Result<Value, PluginError> {
    let (x, y) = if p.get("x").is_none() && p.get("y").is_none() && target(p)?.is_none() {
        (ctx.pointer_x, ctx.pointer_y)
    } else {
        point_or_target(p)?
    };
    let button = button(p)?;
    let modifiers = modifiers(p)?;
    input::mouse_move(x, y)?;
    let status = if name == "mouse_down" {
        input::mouse_down(x, y, button, 1, modifiers)?;
        "mouse_down"
    } else {
        input::mouse_up(x, y, button, 1, modifiers)?;
        "mouse_up"
    };
    Ok(json!({ "status": status, "x": number(x), "y": number(y) }))
}

/// The modifiers down in order (each with those before it held), the last
/// key pressed with all of them, then the modifiers up in reverse.
fn shortcut(p: &Params) -> Result<Value, PluginError> {
    let keys = p.optional_str_list("keys")?;
    let Some((key, held)) = keys.split_last() else {
        return Err(PluginError::invalid("\"keys\" must list at least one key, e.g. [\"Control\", \"a\"]"));
    };
    if keys.len() > 5 {
        return Err(PluginError::invalid("\"keys\" takes at most 4 modifiers and one key"));
    }
    let mut names = Vec::with_capacity(held.len());
    let mut modifiers = Modifiers::empty();
    for name in held {
        let flag = parse_modifiers(std::slice::from_ref(name))
            .map_err(|_| PluginError::invalid(format!("\"{name}\" is not a modifier; every key but the last must be one of Control, Shift, Alt, Meta, ControlOrMeta")))?;
        let dom_key = if flag.contains(Modifiers::CONTROL) {
            "Control"
        } else if flag.contains(Modifiers::SHIFT) {
            "Shift"
        } else if flag.contains(Modifiers::ALT) {
            "Alt"
        } else {
            "Meta"
        };
        modifiers |= flag;
        input::key_down(dom_key, modifiers)?;
        names.push(dom_key);
    }
    if key.is_empty() {
        return Err(PluginError::invalid("a key in \"keys\" is empty"));
    }
    input::key_press(key, modifiers)?;
    for dom_key in names.iter().rev() {
        modifiers.remove(match *dom_key {
            "Control" => Modifiers::CONTROL,
            "Shift" => Modifiers::SHIFT,
            "Alt" => Modifiers::ALT,
            _ => Modifiers::META,
        });
        input::key_up(dom_key, modifiers)?;
    }
    let mut pressed: Vec<&str> = names;
    pressed.push(key);
    Ok(json!({ "status": "pressed", "keys": pressed }))
}

fn click(p: &Params) -> Result<Value, PluginError> {
    let (x, y) = point_or_target(p)?;
    let button = button(p)?;
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

/// The most characters `fill` and `keyboard/insert` set at once.
const MAX_SET_CHARS: usize = 1 << 20;

/// The most characters one `type` sends: each is a key press of its own
/// (about 2 ms each), and the action must end well inside its plugin's
/// deadline; `fill` sets any length at once.
const MAX_TYPED_CHARS: usize = 5_000;

fn type_text(p: &Params) -> Result<Value, PluginError> {
    let text = p.required_str("text")?;
    let count = text.chars().count();
    if count > MAX_TYPED_CHARS {
        return Err(PluginError::invalid(format!(
            "\"text\" has {count} characters; type sends at most {MAX_TYPED_CHARS}, one key press each: use fill to set a longer value"
        )));
    }
    if let Some(target) = target(p)? {
        page::focus(&target, false)?;
    }
    for (i, c) in text.replace("\r\n", "\n").chars().enumerate() {
        if i > 0 {
            input::pause(KEYSTROKE_GAP_MS)?;
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
/// page sees the same beforeinput/input events a user's paste makes. An
/// input that takes no typing (date, time, color, range, ...) gets its
/// value set in its format, as its picker would. The value is read back:
/// a text the page did not take is an error, never "filled".
fn fill(p: &Params) -> Result<Value, PluginError> {
    let text = p.required_str("text")?;
    // No target: the focused element.
    let target = target(p)?.unwrap_or_else(|| Target::Selector(":focus".into()));
    let no_focus = |e: HostError| match (&target, e) {
        (Target::Selector(s), HostError::SelectorNotFound(_)) if s == ":focus" => {
            PluginError::invalid("no element has focus; give \"ref\", \"selector\" or \"index\"")
        }
        (_, e) => e.into(),
    };
    if page::set_value(&target, text).map_err(no_focus)? {
        return Ok(json!({ "status": "filled", "text": text }));
    }
    page::focus(&target, true).map_err(no_focus)?;
    if text.is_empty() {
        input::key_press("Delete", Modifiers::empty())?;
    } else {
        input::insert_text(text)?;
    }
    page::dispatch_change(&target)?;
    // A page may reformat what it is given (a phone mask), but a field left
    // empty did not take the text at all.
    if !text.is_empty() && page::value_of(&target)?.is_some_and(|value| value.is_empty()) {
        return Err(PluginError::new(
            ErrorCode::ElementNotInteractable,
            "the field is still empty after the text was inserted: the page refused it (a handler that cancels input, or a field that takes no text)",
        ));
    }
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
            ("hover", json!({"x": 1, "y": 1, "duration_ms": 10_001}), "\"duration_ms\" must be an integer from 0 to 10000"),
            ("drag", json!({"end_x": 1, "end_y": 1}), "give the drag's start: start_x and start_y, or one of start_ref, start_selector, start_index"),
            ("drag", json!({"start_x": 1, "start_y": 1, "end_x": 2}), "end: \"y\" is required and must be a number"),
            ("drag", json!({"start_x": 1, "start_y": 1, "end_x": 2, "end_y": 2, "steps": 0}), "\"steps\" must be an integer from 1 to 100"),
            ("keyboard_shortcut", json!({"keys": []}), "\"keys\" must list at least one key, e.g. [\"Control\", \"a\"]"),
            ("keyboard_shortcut", json!({"keys": ["a", "b"]}), "\"a\" is not a modifier; every key but the last must be one of Control, Shift, Alt, Meta, ControlOrMeta"),
            ("keyboard_insert", json!({"text": ""}), "\"text\" must not be empty"),
            ("mouse_down", json!({"x": 1, "y": 1, "button": "back"}), "\"button\" must be \"left\", \"right\" or \"middle\", got \"back\""),
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
