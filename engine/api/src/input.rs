//! Inputs: one JSON object per call, decoded into the operation's type with
//! errors that name the field; JSON Schemas generated from the same types.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use wabp_core::{Error, Result};

/// Decodes an input object; an error names the field and what it should be.
pub fn decode<T: DeserializeOwned>(value: Value) -> Result<T> {
    let value = match value {
        Value::Null => Value::Object(Map::new()),
        Value::Object(map) => Value::Object(map),
        _ => return Err(Error::invalid("the request body must be a JSON object")),
    };
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().to_string().replace('`', "\"");
        if path.is_empty() || path == "." {
            Error::invalid(message)
        } else {
            Error::invalid(format!("field \"{path}\": {message}"))
        }
    })
}

/// Fields any input may carry besides its schema's: the caller's user and
/// an approval's id (read before the operation runs), and ABP's
/// `action_params` (a plugin action's params, beside the envelope's options).
pub const ALWAYS_ALLOWED: &[&str] = &["userId", "approval_id", "action_params"];

/// Refuses a field the operation's schema does not name (a typo, or a
/// field of another operation), naming it and what the operation takes; a
/// schema that admits other properties admits them.
pub fn check_fields(schema: &Value, input: &Value) -> Result<()> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    if schema
        .get("additionalProperties")
        .is_some_and(|extra| extra != &Value::Bool(false))
    {
        return Ok(());
    }
    let Some(fields) = input.as_object() else {
        return Ok(());
    };
    // Other spellings a field is read under (serde aliases), which the
    // schema states as `x-aliases`.
    let aliased = |key: &str| {
        properties.values().any(|p| {
            p.get("x-aliases")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|alias| alias == key))
        })
    };
    for key in fields.keys() {
        if properties.contains_key(key) || ALWAYS_ALLOWED.contains(&key.as_str()) || aliased(key) {
            continue;
        }
        let mut known: Vec<&str> = properties.keys().map(String::as_str).collect();
        known.sort_unstable();
        let name: String = key.chars().take(80).collect();
        return Err(Error::invalid(format!(
            "unknown field {name:?}; this operation takes {}",
            if known.is_empty() {
                "no fields".to_string()
            } else {
                known.join(", ")
            }
        )));
    }
    Ok(())
}

/// The JSON Schema of `T`, every subschema inline (it is embedded in MCP
/// tool lists and the OpenAPI document, where `$ref`s would not resolve).
pub fn schema_of<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    schema
}

/// The longest string an input field takes unless its schema says
/// otherwise (scripts and bodies say more): characters, as JSON Schema's
/// `maxLength` counts them.
pub const DEFAULT_MAX_STRING: u64 = 65_536;

/// Gives every string in an input schema a `maxLength` (the default where
/// it states none), so that the bound is stated where the field is
/// documented; [`check_strings`] holds inputs to it.
pub fn bound_strings(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let is_string = match object.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    let bounded = ["maxLength", "enum", "const"]
        .iter()
        .any(|key| object.contains_key(*key));
    if is_string && !bounded {
        object.insert("maxLength".into(), Value::from(DEFAULT_MAX_STRING));
    }
    for (key, value) in object.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Some(children) = value.as_object_mut() {
                    children.values_mut().for_each(bound_strings);
                }
            }
            "items" | "additionalProperties" | "not" | "if" | "then" | "else" => {
                bound_strings(value)
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Some(options) = value.as_array_mut() {
                    options.iter_mut().for_each(bound_strings);
                }
            }
            _ => {}
        }
    }
}

/// Refuses a string longer than its schema's `maxLength`, naming the field,
/// its bound and its length.
pub fn check_strings(schema: &Value, input: &Value) -> Result<()> {
    check_strings_at(schema, input, "", 0)
}

fn check_strings_at(schema: &Value, value: &Value, at: &str, depth: usize) -> Result<()> {
    // Inputs nest a few levels; a deeper one is not walked further.
    if depth > 16 {
        return Ok(());
    }
    match value {
        Value::String(text) => {
            let Some(max) = string_bound(schema) else {
                return Ok(());
            };
            if text.len() as u64 > max {
                let length = text.chars().count() as u64;
                if length > max {
                    let field = if at.is_empty() { "the input" } else { at };
                    // What the field is for often says what to do instead.
                    let about = schema
                        .get("description")
                        .and_then(Value::as_str)
                        .map(|d| format!(" ({})", wabp_core::error::cut(d)))
                        .unwrap_or_default();
                    return Err(Error::invalid(format!(
                        "field {field:?} is {length} characters long; it takes at most {max}{about}"
                    )));
                }
            }
            Ok(())
        }
        Value::Object(fields) => {
            for (key, child) in fields {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                for sub in subschemas(schema, |s| {
                    s.get("properties")
                        .and_then(|p| p.get(key))
                        .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()))
                }) {
                    check_strings_at(sub, child, &path, depth + 1)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                for sub in subschemas(schema, |s| s.get("items")) {
                    check_strings_at(sub, item, &format!("{at}[{i}]"), depth + 1)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// What `pick` finds in `schema` and in its `anyOf`/`oneOf`/`allOf` options.
fn subschemas<'a>(
    schema: &'a Value,
    pick: impl Fn(&'a Value) -> Option<&'a Value>,
) -> Vec<&'a Value> {
    let mut found: Vec<&Value> = pick(schema).into_iter().collect();
    for key in ["anyOf", "oneOf", "allOf"] {
        for option in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            found.extend(pick(option));
        }
    }
    found
}

/// A string's bound under `schema`: its own `maxLength`, or the largest of
/// its string options'.
fn string_bound(schema: &Value) -> Option<u64> {
    let own = schema.get("maxLength").and_then(Value::as_u64);
    let options = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .filter_map(|option| option.get("maxLength").and_then(Value::as_u64))
        .max();
    match (own, options) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Query parameters arrive as strings; this gives each the JSON type the
/// input schema says (integer, number, boolean), leaving what doesn't parse
/// as a string so the decode error names it.
pub fn coerce_query(schema: &Value, pairs: Vec<(String, String)>) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut out = Map::new();
    for (key, text) in pairs {
        let types: Vec<&str> = properties
            .and_then(|p| p.get(&key))
            .map(|p| match p.get("type") {
                Some(Value::String(t)) => vec![t.as_str()],
                Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
                _ => vec![],
            })
            .unwrap_or_default();
        let value = if types.contains(&"boolean") && matches!(text.as_str(), "true" | "1") {
            Value::Bool(true)
        } else if types.contains(&"boolean") && matches!(text.as_str(), "false" | "0" | "") {
            Value::Bool(false)
        } else if types.contains(&"integer") && text.parse::<i64>().is_ok() {
            Value::from(text.parse::<i64>().unwrap_or_default())
        } else if types.contains(&"number") && text.parse::<f64>().is_ok_and(f64::is_finite) {
            Value::from(text.parse::<f64>().unwrap_or_default())
        } else if text.is_empty() && types.contains(&"null") {
            Value::Null
        } else {
            Value::String(text)
        };
        out.insert(key, value);
    }
    out
}

/// A whole number that JSON clients may send as `5.0`.
pub(crate) fn whole<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<u64>, D::Error> {
    let value = Option::<serde_json::Number>::deserialize(d)?;
    match value {
        None => Ok(None),
        Some(n) => match n.as_u64() {
            Some(v) => Ok(Some(v)),
            None => n
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
                .map(|f| Some(f as u64))
                .ok_or_else(|| {
                    serde::de::Error::custom(format!("expected a whole number >= 0, got {n}"))
                }),
        },
    }
}

/// A boolean that a query string may spell `true`, `false`, `1` or `0`
/// (for query keys the schema can't see, like an alias).
pub(crate) fn flag<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<bool>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(Value::String(s)) => match s.as_str() {
            "true" | "1" => Ok(Some(true)),
            "false" | "0" | "" => Ok(Some(false)),
            other => Err(serde::de::Error::custom(format!(
                "expected true or false, got {other:?}"
            ))),
        },
        Some(other) => Err(serde::de::Error::custom(format!(
            "expected true or false, got {other}"
        ))),
    }
}

/// A tab id. Named in its own error: it sits in flattened inputs, whose
/// errors carry no path.
pub(crate) fn tab_id<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(serde::de::Error::custom(format!(
            "\"tab_id\" must be a string (a tab id), got {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_input_string_is_bounded_and_held_to_its_bound() {
        let mut schema = serde_json::json!({
            "type": "object",
            "properties": {
                "url": { "type": "string" },
                "script": { "type": ["string", "null"], "maxLength": 10 },
                "kind": { "type": "string", "enum": ["a", "b"] },
                "headers": { "type": "object", "additionalProperties": { "type": "string" } },
                "files": { "type": "array", "items": { "type": "string" } },
                "either": { "anyOf": [{ "type": "string" }, { "type": "integer" }] },
            },
        });
        super::bound_strings(&mut schema);
        let max = super::DEFAULT_MAX_STRING;
        assert_eq!(schema["properties"]["url"]["maxLength"], max);
        assert_eq!(schema["properties"]["script"]["maxLength"], 10);
        assert!(schema["properties"]["kind"].get("maxLength").is_none());
        assert_eq!(
            schema["properties"]["headers"]["additionalProperties"]["maxLength"],
            max
        );
        assert_eq!(schema["properties"]["files"]["items"]["maxLength"], max);
        assert_eq!(schema["properties"]["either"]["anyOf"][0]["maxLength"], max);

        let long = "x".repeat(max as usize + 1);
        let check = |input: serde_json::Value| super::check_strings(&schema, &input);
        assert!(check(serde_json::json!({ "url": "https://a.test", "script": "1+1" })).is_ok());
        // Characters are counted, not bytes.
        assert!(check(serde_json::json!({ "script": "éééééééééé" })).is_ok());
        for (input, field) in [
            (serde_json::json!({ "script": "12345678901" }), "script"),
            (serde_json::json!({ "url": long }), "url"),
            (
                serde_json::json!({ "headers": { "x-a": long } }),
                "headers.x-a",
            ),
            (serde_json::json!({ "files": ["a", long] }), "files[1]"),
            (serde_json::json!({ "either": long }), "either"),
        ] {
            let error = check(input).unwrap_err().message;
            assert!(error.contains(&format!("{field:?}")), "{error}");
            assert!(error.contains("at most"), "{error}");
        }
    }

    #[test]
    fn fields_the_schema_does_not_name_are_refused() {
        let schema = json!({ "type": "object", "properties": {
            "url": { "type": "string" },
            "include_screenshot": { "type": "boolean", "x-aliases": ["includeScreenshot"] }
        }});
        assert!(check_fields(&schema, &json!({ "url": "x", "userId": "u" })).is_ok());
        assert!(check_fields(&schema, &json!({ "includeScreenshot": true })).is_ok());
        let e = check_fields(&schema, &json!({ "url": "x", "referer": "y" })).unwrap_err();
        assert!(
            e.message.contains("\"referer\"") && e.message.contains("include_screenshot, url"),
            "{}",
            e.message
        );
        let open = json!({ "type": "object", "properties": {}, "additionalProperties": true });
        assert!(check_fields(&open, &json!({ "anything": 1 })).is_ok());
    }

    use super::*;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Probe {
        url: String,
        count: Option<u32>,
        flag: Option<bool>,
        #[serde(default, deserialize_with = "whole")]
        #[schemars(with = "Option<u64>")]
        ms: Option<u64>,
    }

    #[test]
    fn errors_name_the_field() {
        let e = decode::<Probe>(json!({})).err().unwrap();
        assert_eq!(e.message, "missing field \"url\"");
        let e = decode::<Probe>(json!({ "url": 7 })).err().unwrap();
        assert!(
            e.message
                .starts_with("field \"url\": invalid type: integer"),
            "{}",
            e.message
        );
        let e = decode::<Probe>(json!([1])).err().unwrap();
        assert_eq!(e.message, "the request body must be a JSON object");
        let ok = decode::<Probe>(json!({ "url": "x", "ms": 5.0 })).unwrap();
        assert_eq!(ok.ms, Some(5));
        assert!(decode::<Probe>(json!({ "url": "x", "ms": 5.5 })).is_err());
    }

    #[test]
    fn queries_take_the_schema_types() {
        let schema = schema_of::<Probe>();
        assert!(schema.get("$defs").is_none());
        let q = coerce_query(
            &schema,
            vec![
                ("url".into(), "42".into()),
                ("count".into(), "3".into()),
                ("flag".into(), "true".into()),
                ("other".into(), "1".into()),
            ],
        );
        assert_eq!(
            Value::Object(q),
            json!({ "url": "42", "count": 3, "flag": true, "other": "1" })
        );
    }
}
