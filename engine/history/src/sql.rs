//! Small helpers shared by the table modules: JSON columns and WHERE clauses
//! built from optional filter fields.

use rusqlite::Row;
use rusqlite::types::{Type, Value as SqlValue};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// JSON values are stored as their compact text.
pub(crate) fn json_text(value: &Value) -> String {
    value.to_string()
}

pub(crate) fn optional_json_text(value: Option<&Value>) -> Option<String> {
    value.map(json_text)
}

/// Reads a JSON text column; a value that does not parse is a conversion
/// failure (reported as corrupt data), not a panic.
pub(crate) fn json_column<T: DeserializeOwned>(row: &Row<'_>, column: &str) -> rusqlite::Result<T> {
    let text: String = row.get(column)?;
    parse_json(row, column, &text)
}

pub(crate) fn optional_json_column<T: DeserializeOwned>(
    row: &Row<'_>,
    column: &str,
) -> rusqlite::Result<Option<T>> {
    let text: Option<String> = row.get(column)?;
    text.map(|text| parse_json(row, column, &text)).transpose()
}

fn parse_json<T: DeserializeOwned>(row: &Row<'_>, column: &str, text: &str) -> rusqlite::Result<T> {
    serde_json::from_str(text).map_err(|error| {
        let index = row.as_ref().column_index(column).unwrap_or(0);
        rusqlite::Error::FromSqlConversionFailure(index, Type::Text, Box::new(error))
    })
}

/// Whose rows a query or delete sees. `Any` is for the engine's own callers;
/// the REST API always narrows to the caller: `Only(None)` is the rows
/// recorded for requests without a `userId`, `Only(Some(u))` user `u`'s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RowOwner {
    #[default]
    Any,
    Only(Option<String>),
}

impl RowOwner {
    /// Whether a row recorded for `user_id` is visible.
    pub fn sees(&self, user_id: Option<&str>) -> bool {
        match self {
            RowOwner::Any => true,
            RowOwner::Only(owner) => owner.as_deref() == user_id,
        }
    }
}

/// `WHERE a = ? AND b >= ? ...` with its parameters in order.
#[derive(Default)]
pub(crate) struct Conditions {
    clauses: Vec<String>,
    params: Vec<SqlValue>,
}

impl Conditions {
    /// Adds `column = value` when the filter field is set.
    pub(crate) fn equals(&mut self, column: &str, value: Option<&str>) -> &mut Self {
        if let Some(value) = value {
            self.clauses.push(format!("{column} = ?"));
            self.params.push(SqlValue::Text(value.to_owned()));
        }
        self
    }

    /// Adds `column <op> value` when the filter field is set.
    pub(crate) fn compare(&mut self, column: &str, op: &str, value: Option<i64>) -> &mut Self {
        if let Some(value) = value {
            self.clauses.push(format!("{column} {op} ?"));
            self.params.push(SqlValue::Integer(value));
        }
        self
    }

    /// Adds `column IS value` (NULL matching NULL) unless the owner is `Any`.
    pub(crate) fn owned_by(&mut self, column: &str, owner: &RowOwner) -> &mut Self {
        if let RowOwner::Only(user) = owner {
            self.clauses.push(format!("{column} IS ?"));
            self.params.push(match user {
                Some(user) => SqlValue::Text(user.clone()),
                None => SqlValue::Null,
            });
        }
        self
    }

    pub(crate) fn where_sql(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.clauses.join(" AND "))
        }
    }

    pub(crate) fn params(&self) -> rusqlite::ParamsFromIter<&[SqlValue]> {
        rusqlite::params_from_iter(self.params.as_slice())
    }
}

/// ` LIMIT n OFFSET m`; no limit is SQLite's `-1`. Both are plain integers, so
/// they are formatted in rather than bound.
pub(crate) fn page_sql(limit: Option<u32>, offset: Option<u32>) -> String {
    let limit = limit.map_or(-1, i64::from);
    let offset = offset.map_or(0, i64::from);
    format!(" LIMIT {limit} OFFSET {offset}")
}
