//! The `network_calls` table: HTTP calls saved under a tag (ABP network
//! capture and `browser_curl`), queried with regex filters.

use std::collections::BTreeMap;

use regex::{Regex, RegexBuilder};
use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::sql::{Conditions, RowOwner, json_column};

/// One HTTP call, in the ABP `GET /network` JSON shape. The extension fields
/// (`session_id`, truncation flags, `body_encoding`) are omitted when unset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NetworkCall {
    /// Assigned by `save_network_calls`; whatever the caller put here is replaced.
    #[serde(default)]
    pub id: String,
    /// Set by `save_network_calls` to the store's current session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Replaced by the tag passed to `save_network_calls`.
    #[serde(default)]
    pub tag: String,
    pub tab_id: String,
    #[serde(default)]
    pub action_id: Option<String>,
    pub url: String,
    pub method: String,
    /// `None` while no response arrived (failed or still pending).
    #[serde(default)]
    pub status: Option<u16>,
    /// ABP request type: `XHR`, `Fetch`, `Document`…
    #[serde(rename = "type")]
    pub resource_type: String,
    /// Header name → value; repeated headers joined with `\n` (as CDP reports them).
    #[serde(default)]
    pub request_headers: BTreeMap<String, String>,
    #[serde(default)]
    pub response_headers: BTreeMap<String, String>,
    /// Omitted when there is none or the query did not ask for bodies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_body: Option<String>,
    /// The capture cut the body at its size limit.
    #[serde(default, skip_serializing_if = "is_false")]
    pub request_body_truncated: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub response_body_truncated: bool,
    /// Encoding of `response_body`: `"text"` or `"base64"` (as `browser_curl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_encoding: Option<String>,
    /// Request start to response end, when it ended.
    #[serde(default)]
    pub timing_ms: Option<f64>,
    /// When the request started, ms since the Unix epoch.
    pub timestamp_ms: i64,
    /// The `userId` of the tab's owner (`None`: no userId).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The interception rule or plugin that answered it
    /// (`<rule id>:<action>`, `plugin <name>:<action>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intercepted_by: Option<String>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// ABP `GET /network` query: every set field is an unanchored regex over the
/// call's field (hostname, path and query are taken from the URL; a missing
/// status or action id is matched as the empty string).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct NetworkFilter {
    pub tag: Option<String>,
    pub tab_id: Option<String>,
    pub url: Option<String>,
    pub hostname: Option<String>,
    pub path: Option<String>,
    pub query: Option<String>,
    pub method: Option<String>,
    pub status: Option<String>,
    #[serde(rename = "type")]
    pub resource_type: Option<String>,
    pub action_id: Option<String>,
    /// Include `request_body` and `response_body` (default false).
    pub include_body: bool,
    /// Set by the caller, never from a query string.
    #[serde(skip)]
    pub owner: RowOwner,
}

/// The filter's regexes, compiled once before the query runs.
pub(crate) struct CompiledFilter {
    fields: Vec<(Field, Regex)>,
    pub(crate) include_body: bool,
    owner: RowOwner,
}

#[derive(Clone, Copy)]
enum Field {
    Tag,
    TabId,
    Url,
    Hostname,
    Path,
    Query,
    Method,
    Status,
    ResourceType,
    ActionId,
}

impl Field {
    /// The name used in filters and in `Error::InvalidFilter`.
    fn name(self) -> &'static str {
        match self {
            Field::Tag => "tag",
            Field::TabId => "tab_id",
            Field::Url => "url",
            Field::Hostname => "hostname",
            Field::Path => "path",
            Field::Query => "query",
            Field::Method => "method",
            Field::Status => "status",
            Field::ResourceType => "type",
            Field::ActionId => "action_id",
        }
    }
}

/// Bounds a compiled pattern (user input) so one query cannot eat memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

impl NetworkFilter {
    pub(crate) fn compile(&self) -> Result<CompiledFilter, Error> {
        let patterns = [
            (Field::Tag, &self.tag),
            (Field::TabId, &self.tab_id),
            (Field::Url, &self.url),
            (Field::Hostname, &self.hostname),
            (Field::Path, &self.path),
            (Field::Query, &self.query),
            (Field::Method, &self.method),
            (Field::Status, &self.status),
            (Field::ResourceType, &self.resource_type),
            (Field::ActionId, &self.action_id),
        ];
        let mut fields = Vec::new();
        for (field, pattern) in patterns {
            let Some(pattern) = pattern else { continue };
            let regex = RegexBuilder::new(pattern)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
                .map_err(|error| Error::InvalidFilter {
                    field: field.name(),
                    message: error.to_string(),
                })?;
            fields.push((field, regex));
        }
        Ok(CompiledFilter {
            fields,
            include_body: self.include_body,
            owner: self.owner.clone(),
        })
    }
}

impl CompiledFilter {
    pub(crate) fn matches(&self, call: &NetworkCall) -> bool {
        let url = UrlParts::parse(&call.url);
        self.fields.iter().all(|(field, regex)| match field {
            Field::Tag => regex.is_match(&call.tag),
            Field::TabId => regex.is_match(&call.tab_id),
            Field::Url => regex.is_match(&call.url),
            Field::Hostname => regex.is_match(url.hostname),
            Field::Path => regex.is_match(url.path),
            Field::Query => regex.is_match(url.query),
            Field::Method => regex.is_match(&call.method),
            Field::Status => regex.is_match(
                &call
                    .status
                    .map(|status| status.to_string())
                    .unwrap_or_default(),
            ),
            Field::ResourceType => regex.is_match(&call.resource_type),
            Field::ActionId => regex.is_match(call.action_id.as_deref().unwrap_or("")),
        })
    }
}

/// The parts of a URL the filters look at. A small parser rather than a URL
/// crate: only splitting is needed, not normalisation.
#[derive(Debug, PartialEq)]
pub(crate) struct UrlParts<'a> {
    /// Without port, user info or IPv6 brackets.
    pub(crate) hostname: &'a str,
    /// From the first `/` after the authority, `/` if none; empty for URLs
    /// without an authority (`data:`, `about:blank`).
    pub(crate) path: &'a str,
    /// After `?`, without it and without any `#fragment`.
    pub(crate) query: &'a str,
}

impl<'a> UrlParts<'a> {
    pub(crate) fn parse(url: &'a str) -> UrlParts<'a> {
        let without_fragment = url.split('#').next().unwrap_or("");
        let (before_query, query) = without_fragment
            .split_once('?')
            .unwrap_or((without_fragment, ""));
        let Some((_scheme, rest)) = before_query.split_once("://") else {
            return UrlParts {
                hostname: "",
                path: "",
                query,
            };
        };
        let (authority, path) = match rest.find('/') {
            Some(slash) => (&rest[..slash], &rest[slash..]),
            None => (rest, "/"),
        };
        let host_port = authority.rsplit('@').next().unwrap_or("");
        let hostname = if let Some(bracketed) = host_port.strip_prefix('[') {
            bracketed.split(']').next().unwrap_or("")
        } else {
            host_port.split(':').next().unwrap_or("")
        };
        UrlParts {
            hostname,
            path,
            query,
        }
    }
}

const COLUMNS_WITHOUT_BODIES: &str = "id, session_id, tag, tab_id, action_id, url, method, status, \
     resource_type, request_headers, response_headers, request_body_truncated, \
     response_body_truncated, body_encoding, timing_ms, timestamp_ms, user_id, intercepted_by";

fn from_row(row: &Row<'_>, include_body: bool) -> rusqlite::Result<NetworkCall> {
    let (request_body, response_body) = if include_body {
        (row.get("request_body")?, row.get("response_body")?)
    } else {
        (None, None)
    };
    Ok(NetworkCall {
        id: row.get("id")?,
        session_id: row.get("session_id")?,
        tag: row.get("tag")?,
        tab_id: row.get("tab_id")?,
        action_id: row.get("action_id")?,
        url: row.get("url")?,
        method: row.get("method")?,
        status: row.get("status")?,
        resource_type: row.get("resource_type")?,
        request_headers: json_column(row, "request_headers")?,
        response_headers: json_column(row, "response_headers")?,
        request_body,
        response_body,
        request_body_truncated: row.get("request_body_truncated")?,
        response_body_truncated: row.get("response_body_truncated")?,
        body_encoding: if include_body {
            row.get("body_encoding")?
        } else {
            None
        },
        timing_ms: row.get("timing_ms")?,
        timestamp_ms: row.get("timestamp_ms")?,
        user_id: row.get("user_id")?,
        intercepted_by: row.get("intercepted_by")?,
    })
}

fn headers_text(headers: &BTreeMap<String, String>) -> String {
    // A map of strings always serialises.
    serde_json::to_string(headers).unwrap_or_else(|_| "{}".to_owned())
}

/// Inserts calls already carrying their id, tag and session.
pub(crate) fn insert(conn: &Connection, call: &NetworkCall) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO network_calls (id, session_id, tag, tab_id, action_id, url, method, status,
             resource_type, request_headers, response_headers, request_body, response_body,
             request_body_truncated, response_body_truncated, body_encoding, timing_ms,
             timestamp_ms, user_id, intercepted_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
    )?
    .execute(params![
        call.id,
        call.session_id,
        call.tag,
        call.tab_id,
        call.action_id,
        call.url,
        call.method,
        call.status,
        call.resource_type,
        headers_text(&call.request_headers),
        headers_text(&call.response_headers),
        call.request_body,
        call.response_body,
        call.request_body_truncated,
        call.response_body_truncated,
        call.body_encoding,
        call.timing_ms,
        call.timestamp_ms,
        call.user_id,
        call.intercepted_by,
    ])?;
    Ok(())
}

/// Oldest first. SQL selects by session only; the regexes run here, on
/// rows read without bodies unless they are wanted.
pub(crate) fn query(
    conn: &Connection,
    session_id: Option<&str>,
    filter: &CompiledFilter,
) -> rusqlite::Result<Vec<NetworkCall>> {
    let mut conditions = Conditions::default();
    conditions
        .equals("session_id", session_id)
        .owned_by("user_id", &filter.owner);
    let columns = if filter.include_body {
        format!("{COLUMNS_WITHOUT_BODIES}, request_body, response_body")
    } else {
        COLUMNS_WITHOUT_BODIES.to_owned()
    };
    let mut statement = conn.prepare(&format!(
        "SELECT {columns} FROM network_calls{} ORDER BY timestamp_ms, rowid",
        conditions.where_sql()
    ))?;
    let mut calls = Vec::new();
    for call in statement.query_map(conditions.params(), |row| {
        from_row(row, filter.include_body)
    })? {
        let call = call?;
        if filter.matches(&call) {
            calls.push(call);
        }
    }
    Ok(calls)
}

/// Deletes the owner's calls with exactly this tag, or all of them.
pub(crate) fn delete(
    conn: &Connection,
    tag: Option<&str>,
    owner: &RowOwner,
) -> rusqlite::Result<usize> {
    let mut conditions = Conditions::default();
    conditions.equals("tag", tag).owned_by("user_id", owner);
    conn.execute(
        &format!("DELETE FROM network_calls{}", conditions.where_sql()),
        conditions.params(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_parts() {
        let parts =
            UrlParts::parse("https://user:pw@api.example.com:8443/v1/login?next=%2F&x=1#top");
        assert_eq!(
            parts,
            UrlParts {
                hostname: "api.example.com",
                path: "/v1/login",
                query: "next=%2F&x=1"
            }
        );
        let parts = UrlParts::parse("http://[::1]:8080");
        assert_eq!((parts.hostname, parts.path, parts.query), ("::1", "/", ""));
        let parts = UrlParts::parse("http://example.com?q=1");
        assert_eq!(
            (parts.hostname, parts.path, parts.query),
            ("example.com", "/", "q=1")
        );
        let parts = UrlParts::parse("data:text/plain,hi");
        assert_eq!((parts.hostname, parts.path, parts.query), ("", "", ""));
    }
}
