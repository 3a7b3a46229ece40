//! The wall clock as the engine reports it (ms since the epoch), and the
//! page's own clock as page-side helpers report it.

use serde_json::Value;

/// The `now` field page-side helpers report, or the wall clock.
pub fn page_clock(value: &Value) -> f64 {
    value
        .get("now")
        .and_then(Value::as_f64)
        .unwrap_or_else(now_ms)
}

pub fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// `now_ms` in whole milliseconds, for records.
pub fn now_ms_i64() -> i64 {
    now_ms() as i64
}
