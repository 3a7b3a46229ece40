//! HAR 1.2 export of network calls (<http://www.softwareishard.com/blog/har-12-spec/>).
//!
//! What a capture does not know is written as the spec's "unknown": `-1` for
//! sizes, `""` for the HTTP version and status text of an unknown status,
//! `0` for the status of a call that never got a response. wabp's own fields
//! use the spec's `_` prefix for custom fields.

use serde_json::{Value, json};

use crate::network::{NetworkCall, UrlParts};

/// A HAR 1.2 document (`{"log": {...}}`) with one entry per call, oldest first.
pub fn to_har(calls: &[NetworkCall], creator_version: &str) -> Value {
    let mut ordered: Vec<&NetworkCall> = calls.iter().collect();
    ordered.sort_by_key(|call| call.timestamp_ms);
    json!({
        "log": {
            "version": "1.2",
            "creator": { "name": "wabp", "version": creator_version },
            "entries": ordered.into_iter().map(entry).collect::<Vec<_>>(),
        }
    })
}

fn entry(call: &NetworkCall) -> Value {
    let time = call
        .timing_ms
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .unwrap_or(0.0);
    let mut entry = json!({
        "startedDateTime": iso8601(call.timestamp_ms),
        "time": time,
        "request": request(call),
        "response": response(call),
        "cache": {},
        // The capture has one duration; it is all "wait" (send and receive
        // are not measured separately). The sum equals `time`, as HAR asks.
        "timings": { "send": 0, "wait": time, "receive": 0 },
        "_id": call.id,
        "_tag": call.tag,
        "_tabId": call.tab_id,
        "_resourceType": call.resource_type,
    });
    if let Some(action_id) = &call.action_id {
        entry["_actionId"] = json!(action_id);
    }
    entry
}

fn request(call: &NetworkCall) -> Value {
    let query_string: Vec<Value> = UrlParts::parse(&call.url)
        .query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            json!({ "name": name, "value": value })
        })
        .collect();
    let cookies: Vec<Value> = header(&call.request_headers, "cookie")
        .into_iter()
        .flat_map(|cookie| cookie.split(';'))
        .filter_map(name_value)
        .collect();
    let mut request = json!({
        "method": call.method,
        "url": call.url,
        "httpVersion": "",
        "cookies": cookies,
        "headers": headers(&call.request_headers),
        "queryString": query_string,
        "headersSize": -1,
        "bodySize": call.request_body.as_ref().map_or(0, |body| body.len() as i64),
    });
    if let Some(body) = &call.request_body {
        request["postData"] = json!({
            "mimeType": header(&call.request_headers, "content-type").unwrap_or(""),
            "text": body,
        });
        if call.request_body_truncated {
            request["bodySize"] = json!(-1);
        }
    }
    request
}

fn response(call: &NetworkCall) -> Value {
    let base64 = call.body_encoding.as_deref() == Some("base64");
    let body_size = call.response_body.as_deref().map(|body| {
        if base64 {
            decoded_base64_len(body)
        } else {
            body.len() as i64
        }
    });
    let cookies: Vec<Value> = header(&call.response_headers, "set-cookie")
        .into_iter()
        .flat_map(|lines| lines.split('\n'))
        .filter_map(|line| name_value(line.split(';').next().unwrap_or("")))
        .collect();
    let mut content = json!({
        "size": body_size.unwrap_or(0),
        "mimeType": header(&call.response_headers, "content-type").unwrap_or("x-unknown"),
    });
    if let Some(body) = &call.response_body {
        content["text"] = json!(body);
        if base64 {
            content["encoding"] = json!("base64");
        }
    }
    let complete_body = body_size.filter(|_| !call.response_body_truncated);
    json!({
        "status": call.status.unwrap_or(0),
        "statusText": call.status.map_or("", status_text),
        "httpVersion": "",
        "cookies": cookies,
        "headers": headers(&call.response_headers),
        "content": content,
        "redirectURL": header(&call.response_headers, "location").unwrap_or(""),
        "headersSize": -1,
        "bodySize": complete_body.unwrap_or(-1),
    })
}

/// Repeated headers arrive joined with `\n` (CDP); HAR lists each one.
fn headers(map: &std::collections::BTreeMap<String, String>) -> Vec<Value> {
    map.iter()
        .flat_map(|(name, values)| {
            values
                .split('\n')
                .map(move |value| json!({ "name": name, "value": value }))
        })
        .collect()
}

fn header<'a>(map: &'a std::collections::BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    map.iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}

fn name_value(pair: &str) -> Option<Value> {
    let (name, value) = pair.trim().split_once('=')?;
    Some(json!({ "name": name.trim(), "value": value.trim() }))
}

fn decoded_base64_len(text: &str) -> i64 {
    let significant = text
        .bytes()
        .filter(|byte| !byte.is_ascii_whitespace())
        .count();
    let padding = text
        .trim_end()
        .bytes()
        .rev()
        .take_while(|&byte| byte == b'=')
        .count();
    ((significant / 4 * 3) as i64 - padding as i64).max(0)
}

fn status_text(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        410 => "Gone",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for ms since the Unix epoch (UTC).
fn iso8601(epoch_ms: i64) -> String {
    let days = epoch_ms.div_euclid(86_400_000);
    let ms_of_day = epoch_ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    fn sample_calls() -> Vec<NetworkCall> {
        vec![
            NetworkCall {
                id: "net_2".into(),
                tag: "login".into(),
                tab_id: "tab_1".into(),
                action_id: Some("act_1".into()),
                url: "https://api.example.com/login?next=%2Fhome&debug".into(),
                method: "POST".into(),
                status: Some(200),
                resource_type: "Fetch".into(),
                request_headers: headers(&[
                    ("content-type", "application/json"),
                    ("cookie", "a=1; b=2"),
                ]),
                response_headers: headers(&[
                    ("Content-Type", "application/json"),
                    ("set-cookie", "sid=xyz; Path=/\ntheme=dark"),
                ]),
                request_body: Some(r#"{"user":"alice"}"#.into()),
                response_body: Some(r#"{"token":"t"}"#.into()),
                timing_ms: Some(124.5),
                timestamp_ms: 1_700_000_000_200,
                ..NetworkCall::default()
            },
            NetworkCall {
                id: "net_1".into(),
                tag: "login".into(),
                tab_id: "tab_1".into(),
                url: "https://cdn.example.com/logo.png".into(),
                method: "GET".into(),
                status: Some(200),
                resource_type: "Image".into(),
                response_headers: headers(&[("content-type", "image/png")]),
                response_body: Some("iVBORw0KGgo=".into()),
                body_encoding: Some("base64".into()),
                timing_ms: Some(3.0),
                timestamp_ms: 1_700_000_000_100,
                ..NetworkCall::default()
            },
            NetworkCall {
                id: "net_3".into(),
                tag: "login".into(),
                tab_id: "tab_1".into(),
                url: "https://api.example.com/slow".into(),
                method: "GET".into(),
                resource_type: "XHR".into(),
                timestamp_ms: 1_700_000_000_300,
                ..NetworkCall::default()
            },
        ]
    }

    fn assert_string(value: &Value, what: &str) {
        assert!(value.is_string(), "{what} should be a string: {value}");
    }

    fn assert_number(value: &Value, what: &str) {
        assert!(value.is_number(), "{what} should be a number: {value}");
    }

    fn assert_name_value_list(value: &Value, what: &str) {
        let list = value
            .as_array()
            .unwrap_or_else(|| panic!("{what} should be an array"));
        for item in list {
            assert_string(&item["name"], what);
            assert_string(&item["value"], what);
        }
    }

    #[test]
    fn har_has_every_required_field_with_the_right_type() {
        let har = to_har(&sample_calls(), "0.1.0");
        let log = &har["log"];
        assert_eq!(log["version"], "1.2");
        assert_eq!(log["creator"]["name"], "wabp");
        assert_eq!(log["creator"]["version"], "0.1.0");
        let entries = log["entries"].as_array().expect("entries array");
        assert_eq!(entries.len(), 3);

        for entry in entries {
            let started = entry["startedDateTime"].as_str().expect("startedDateTime");
            assert_eq!(started.len(), "2023-11-14T22:13:20.100Z".len(), "{started}");
            assert!(started.ends_with('Z'));
            assert_number(&entry["time"], "time");
            assert!(entry["cache"].is_object());

            let request = &entry["request"];
            for field in ["method", "url", "httpVersion"] {
                assert_string(&request[field], field);
            }
            assert_name_value_list(&request["cookies"], "request.cookies");
            assert_name_value_list(&request["headers"], "request.headers");
            assert_name_value_list(&request["queryString"], "request.queryString");
            assert_eq!(request["headersSize"], -1);
            assert_number(&request["bodySize"], "request.bodySize");

            let response = &entry["response"];
            assert_number(&response["status"], "status");
            for field in ["statusText", "httpVersion", "redirectURL"] {
                assert_string(&response[field], field);
            }
            assert_name_value_list(&response["cookies"], "response.cookies");
            assert_name_value_list(&response["headers"], "response.headers");
            assert_number(&response["content"]["size"], "content.size");
            assert_string(&response["content"]["mimeType"], "content.mimeType");
            assert_eq!(response["headersSize"], -1);
            assert_number(&response["bodySize"], "response.bodySize");

            let timings = &entry["timings"];
            let mut sum = 0.0;
            for phase in ["send", "wait", "receive"] {
                let ms = timings[phase].as_f64().expect("timing number");
                assert!(ms >= 0.0, "{phase} is negative");
                sum += ms;
            }
            assert_eq!(sum, entry["time"].as_f64().unwrap());
        }
    }

    #[test]
    fn har_entries_carry_the_call_details() {
        let har = to_har(&sample_calls(), "0.1.0");
        let entries = har["log"]["entries"].as_array().unwrap();
        // Oldest first.
        let ids: Vec<&str> = entries.iter().map(|e| e["_id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["net_1", "net_2", "net_3"]);
        assert_eq!(entries[0]["startedDateTime"], "2023-11-14T22:13:20.100Z");

        let image = &entries[0]["response"]["content"];
        assert_eq!(image["encoding"], "base64");
        assert_eq!(image["size"], 8);
        assert_eq!(image["mimeType"], "image/png");

        let login = &entries[1];
        assert_eq!(login["time"], 124.5);
        assert_eq!(login["_actionId"], "act_1");
        assert_eq!(login["request"]["postData"]["mimeType"], "application/json");
        assert_eq!(login["request"]["postData"]["text"], r#"{"user":"alice"}"#);
        assert_eq!(
            login["request"]["queryString"],
            json!([{"name": "next", "value": "%2Fhome"}, {"name": "debug", "value": ""}])
        );
        assert_eq!(
            login["request"]["cookies"],
            json!([{"name": "a", "value": "1"}, {"name": "b", "value": "2"}])
        );
        assert_eq!(
            login["response"]["cookies"],
            json!([{"name": "sid", "value": "xyz"}, {"name": "theme", "value": "dark"}])
        );
        assert_eq!(login["response"]["statusText"], "OK");
        assert_eq!(login["response"]["content"]["text"], r#"{"token":"t"}"#);
        assert!(login["response"]["content"].get("encoding").is_none());

        let pending = &entries[2];
        assert_eq!(pending["response"]["status"], 0);
        assert_eq!(pending["response"]["bodySize"], -1);
        assert!(pending["request"].get("postData").is_none());
    }

    #[test]
    fn iso8601_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(1_709_251_199_999), "2024-02-29T23:59:59.999Z");
        assert_eq!(iso8601(-1), "1969-12-31T23:59:59.999Z");
    }
}
