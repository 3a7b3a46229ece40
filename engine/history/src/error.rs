//! One error type for the store. Storage failures say what was being done and
//! what kind of fault it was, so a frontend can answer "disk full" or
//! "database locked" instead of a bare 500.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// SQLite or the file system refused: see `fault` for the kind.
    #[error("history {operation} failed ({fault}): {message}")]
    Storage {
        operation: &'static str,
        fault: StorageFault,
        message: String,
    },
    /// A write referenced a session (or action) that does not exist.
    #[error("history {kind} {id} not found")]
    NotFound { kind: &'static str, id: String },
    /// A network query filter is not a valid regular expression.
    #[error("invalid `{field}` filter: {message}")]
    InvalidFilter {
        field: &'static str,
        message: String,
    },
    /// The write needs a session and none was given or started.
    #[error("no history session is current: start one first or name one")]
    NoCurrentSession,
    /// The store's thread has stopped (closed, or it died): nothing can run.
    #[error("the history store is closed: its {thread} thread has stopped")]
    Closed { thread: &'static str },
    /// The thread accepted the request but dropped it without an answer (a bug).
    #[error("the history {thread} thread dropped the request without answering")]
    Interrupted { thread: &'static str },
}

/// What kind of storage failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageFault {
    /// No space left (SQLITE_FULL, ENOSPC, quota).
    DiskFull,
    /// Read-only file system, read-only database or permission denied.
    ReadOnly,
    /// Another connection holds the lock longer than the busy timeout.
    Locked,
    /// The file is not a database, or a stored value does not parse.
    Corrupt,
    /// The session directory or database file cannot be opened or created.
    CannotOpen,
    /// The database was written by a newer schema than this build knows.
    Incompatible,
    /// A constraint failed (e.g. a duplicate id).
    Constraint,
    /// Any other I/O or SQLite failure.
    Other,
}

impl fmt::Display for StorageFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StorageFault::DiskFull => "disk full",
            StorageFault::ReadOnly => "read-only",
            StorageFault::Locked => "database locked",
            StorageFault::Corrupt => "corrupt data",
            StorageFault::CannotOpen => "cannot open",
            StorageFault::Incompatible => "incompatible schema",
            StorageFault::Constraint => "constraint violated",
            StorageFault::Other => "storage error",
        })
    }
}

impl Error {
    /// The storage fault, if this is a storage error.
    pub fn fault(&self) -> Option<StorageFault> {
        match self {
            Error::Storage { fault, .. } => Some(*fault),
            _ => None,
        }
    }
}

/// The failure of one job on a store thread, before it knows which public
/// operation it belongs to. `Lane::run` turns it into an [`Error`] that names
/// the operation, so the database code can use `?` freely.
#[derive(Debug)]
pub(crate) enum Failure {
    Sqlite(rusqlite::Error),
    Io { path: PathBuf, source: io::Error },
    Public(Error),
}

impl Failure {
    /// `map_err` adapter for file operations: keeps the path for the message.
    pub(crate) fn io(path: &Path) -> impl FnOnce(io::Error) -> Failure + '_ {
        move |source| Failure::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn into_error(self, operation: &'static str) -> Error {
        match self {
            Failure::Sqlite(error) => Error::Storage {
                operation,
                fault: sqlite_fault(&error),
                message: error.to_string(),
            },
            Failure::Io { path, source } => Error::Storage {
                operation,
                fault: io_fault(&source),
                message: format!("{}: {source}", path.display()),
            },
            Failure::Public(error) => error,
        }
    }
}

impl From<rusqlite::Error> for Failure {
    fn from(error: rusqlite::Error) -> Self {
        Failure::Sqlite(error)
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Public(error)
    }
}

fn sqlite_fault(error: &rusqlite::Error) -> StorageFault {
    match error.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => StorageFault::DiskFull,
        Some(ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => StorageFault::ReadOnly,
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StorageFault::Locked,
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StorageFault::Corrupt,
        Some(ErrorCode::CannotOpen) => StorageFault::CannotOpen,
        Some(ErrorCode::ConstraintViolation) => StorageFault::Constraint,
        Some(_) => StorageFault::Other,
        // Not from SQLite itself: a stored value that does not convert.
        None => match error {
            rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::IntegralValueOutOfRange(..) => StorageFault::Corrupt,
            _ => StorageFault::Other,
        },
    }
}

fn io_fault(error: &io::Error) -> StorageFault {
    match error.kind() {
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => StorageFault::DiskFull,
        io::ErrorKind::ReadOnlyFilesystem | io::ErrorKind::PermissionDenied => {
            StorageFault::ReadOnly
        }
        io::ErrorKind::AlreadyExists | io::ErrorKind::NotADirectory => StorageFault::CannotOpen,
        _ => StorageFault::Other,
    }
}
