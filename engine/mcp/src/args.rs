//! Tool arguments: a JSON object, read field by field with errors that name
//! the field and what it should be.

use serde_json::{Map, Value};
use wabp_core::{Caller, Engine, Error, Result};

pub type Args = Map<String, Value>;

pub fn required_str<'a>(args: &'a Args, field: &str) -> Result<&'a str> {
    match args.get(field) {
        Some(Value::String(s)) => Ok(s),
        None | Some(Value::Null) => Err(Error::invalid(format!(
            "missing argument \"{field}\" (a string)"
        ))),
        Some(_) => Err(Error::invalid(format!(
            "argument \"{field}\" must be a string"
        ))),
    }
}

pub fn optional_str<'a>(args: &'a Args, field: &str) -> Result<Option<&'a str>> {
    match args.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Error::invalid(format!(
            "argument \"{field}\" must be a string"
        ))),
    }
}

pub fn optional_bool(args: &Args, field: &str) -> Result<Option<bool>> {
    match args.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(Error::invalid(format!(
            "argument \"{field}\" must be a boolean"
        ))),
    }
}

/// A whole number (JSON clients often send `5.0`), checked against a range.
pub fn optional_int(args: &Args, field: &str, min: u64, max: u64) -> Result<Option<u64>> {
    let invalid = || {
        Error::invalid(format!(
            "argument \"{field}\" must be a whole number from {min} to {max}"
        ))
    };
    match args.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            let v = match n.as_u64() {
                Some(v) => v,
                None => {
                    let f = n.as_f64().ok_or_else(invalid)?;
                    if f.fract() != 0.0 || f < 0.0 || f > u64::MAX as f64 {
                        return Err(invalid());
                    }
                    f as u64
                }
            };
            if (min..=max).contains(&v) {
                Ok(Some(v))
            } else {
                Err(invalid())
            }
        }
        Some(_) => Err(invalid()),
    }
}

pub fn string_list(args: &Args, field: &str) -> Result<Option<Vec<String>>> {
    let invalid = || Error::invalid(format!("argument \"{field}\" must be a list of strings"));
    match args.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or_else(invalid))
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(_) => Err(invalid()),
    }
}

/// The tab an operation names, or the caller's active tab when it names none.
pub fn tab_id(engine: &Engine, caller: &Caller, args: &Args) -> Result<String> {
    match optional_str(args, "tab_id")? {
        Some(id) if !id.is_empty() => Ok(id.to_string()),
        _ => engine.active_tab(caller).ok_or_else(|| {
            Error::invalid(
                "no tab_id given and no active tab; call browser_list_tabs or browser_new_tab first",
            )
        }),
    }
}

/// The arguments as a JSON object value without `tab_id` (for action params
/// and options).
pub fn without_tab(args: &Args) -> Value {
    let mut rest = args.clone();
    rest.remove("tab_id");
    Value::Object(rest)
}
