use serde_json::{Map, Value};

use crate::PluginError;

/// Typed access to a params object, with error messages that name the field.
///
/// A missing field and an explicit `null` are treated alike, so clients may
/// send `null` for "use the default".
#[derive(Debug, Clone, Default)]
pub struct Params {
    fields: Map<String, Value>,
}

impl Params {
    /// Wraps a params value; `null` counts as `{}`, anything else but an
    /// object is an `invalid-request` error.
    pub fn new(value: Value) -> Result<Self, PluginError> {
        match value {
            Value::Object(fields) => Ok(Params { fields }),
            Value::Null => Ok(Params::default()),
            other => Err(PluginError::invalid(format!("params must be a JSON object, got {}", kind(&other)))),
        }
    }

    /// The raw value of a field, `None` when missing or `null`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.fields.get(name).filter(|v| !v.is_null())
    }

    /// A required number.
    pub fn required_f64(&self, name: &str) -> Result<f64, PluginError> {
        self.get(name).and_then(Value::as_f64).ok_or_else(|| PluginError::invalid(format!("\"{name}\" is required and must be a number")))
    }

    /// A number, or `default` when absent.
    pub fn optional_f64(&self, name: &str, default: f64) -> Result<f64, PluginError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v.as_f64().ok_or_else(|| PluginError::invalid(format!("\"{name}\" must be a number"))),
        }
    }

    /// A non-negative integer that fits in `u32`, or `default` when absent.
    /// `2.0` is accepted as `2`, since JSON encoders differ on this.
    pub fn optional_u32(&self, name: &str, default: u32) -> Result<u32, PluginError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => as_u32(v).ok_or_else(|| PluginError::invalid(format!("\"{name}\" must be an integer from 0 to {}", u32::MAX))),
        }
    }

    /// A boolean, or `default` when absent.
    pub fn optional_bool(&self, name: &str, default: bool) -> Result<bool, PluginError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| PluginError::invalid(format!("\"{name}\" must be a boolean"))),
        }
    }

    /// A required string (which may be empty).
    pub fn required_str(&self, name: &str) -> Result<&str, PluginError> {
        self.get(name).and_then(Value::as_str).ok_or_else(|| PluginError::invalid(format!("\"{name}\" is required and must be a string")))
    }

    /// A string, or `None` when absent.
    pub fn optional_str(&self, name: &str) -> Result<Option<&str>, PluginError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v.as_str().map(Some).ok_or_else(|| PluginError::invalid(format!("\"{name}\" must be a string"))),
        }
    }

    /// An array of strings, empty when absent.
    pub fn optional_str_list(&self, name: &str) -> Result<Vec<String>, PluginError> {
        let Some(v) = self.get(name) else { return Ok(Vec::new()) };
        let error = || PluginError::invalid(format!("\"{name}\" must be an array of strings"));
        v.as_array().ok_or_else(error)?.iter().map(|item| item.as_str().map(str::to_owned).ok_or_else(error)).collect()
    }

    /// Back to the plain JSON object.
    pub fn into_value(self) -> Value {
        Value::Object(self.fields)
    }
}

/// Parses the params string the host passes; empty means `{}`.
#[cfg_attr(not(any(feature = "action", feature = "wait")), allow(dead_code))]
pub(crate) fn parse_json_params(text: &str) -> Result<Value, PluginError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(text).map_err(|e| PluginError::invalid(format!("params are not valid JSON: {e}")))
}

fn as_u32(v: &Value) -> Option<u32> {
    if let Some(n) = v.as_u64() {
        return u32::try_from(n).ok();
    }
    let f = v.as_f64()?;
    (f.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&f)).then_some(f as u32)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Modifier keys held during an input event.
#[cfg(feature = "action")]
pub use crate::bindings::action::wabp::plugin::types::Modifiers;

#[cfg(feature = "action")]
const MODIFIERS: [(&str, Modifiers); 15] = [
    ("Shift", Modifiers::SHIFT),
    ("ShiftLeft", Modifiers::SHIFT),
    ("ShiftRight", Modifiers::SHIFT),
    ("Control", Modifiers::CONTROL),
    ("ControlLeft", Modifiers::CONTROL),
    ("ControlRight", Modifiers::CONTROL),
    ("Ctrl", Modifiers::CONTROL),
    ("Alt", Modifiers::ALT),
    ("AltLeft", Modifiers::ALT),
    ("AltRight", Modifiers::ALT),
    ("Meta", Modifiers::META),
    ("MetaLeft", Modifiers::META),
    ("MetaRight", Modifiers::META),
    ("Cmd", Modifiers::META),
    // The platform's command key; the browser runs on Linux.
    ("ControlOrMeta", Modifiers::CONTROL),
];

/// The modifier names [`parse_modifiers`] accepts, for params schemas.
#[cfg(feature = "action")]
pub fn modifier_names() -> Vec<&'static str> {
    MODIFIERS.iter().map(|(n, _)| *n).collect()
}

/// Parses modifier names such as `"Shift"`, `"ControlLeft"`, `"Ctrl"` or
/// `"Cmd"` (case-insensitive); left and right variants map to the same flag.
#[cfg(feature = "action")]
pub fn parse_modifiers(names: &[String]) -> Result<Modifiers, PluginError> {
    let mut modifiers = Modifiers::empty();
    for name in names {
        let Some((_, flag)) = MODIFIERS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) else {
            return Err(PluginError::invalid(format!("unknown modifier \"{name}\"; valid modifiers are {}", modifier_names().join(", "))));
        };
        modifiers |= *flag;
    }
    Ok(modifiers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_typed_fields() {
        let p = Params::new(json!({"x": 1.5, "n": 3.0, "s": "hi", "l": ["a"], "z": null})).unwrap();
        assert_eq!(p.required_f64("x").unwrap(), 1.5);
        assert_eq!(p.optional_u32("n", 0).unwrap(), 3);
        assert_eq!(p.optional_u32("z", 7).unwrap(), 7);
        assert_eq!(p.required_str("s").unwrap(), "hi");
        assert_eq!(p.optional_str("missing").unwrap(), None);
        assert_eq!(p.optional_str_list("l").unwrap(), vec!["a".to_string()]);
        assert!(p.optional_str_list("missing").unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_field() {
        let p = Params::new(json!({"x": "1", "n": -1, "l": [1]})).unwrap();
        assert_eq!(p.required_f64("x").unwrap_err().message, "\"x\" is required and must be a number");
        assert_eq!(p.required_f64("y").unwrap_err().message, "\"y\" is required and must be a number");
        assert!(p.optional_u32("n", 1).unwrap_err().message.starts_with("\"n\" must be an integer"));
        assert_eq!(p.optional_str_list("l").unwrap_err().message, "\"l\" must be an array of strings");
        assert!(Params::new(json!([1])).is_err());
        assert!(Params::new(Value::Null).is_ok());
    }

    #[cfg(feature = "action")]
    #[test]
    fn modifiers() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let m = parse_modifiers(&names(&["ShiftLeft", "ctrl", "Cmd", "AltRight"])).unwrap();
        assert_eq!(m, Modifiers::SHIFT | Modifiers::CONTROL | Modifiers::META | Modifiers::ALT);
        let e = parse_modifiers(&names(&["Hyper"])).unwrap_err();
        assert!(e.message.contains("\"Hyper\"") && e.message.contains("ControlRight"), "{}", e.message);
    }
}
