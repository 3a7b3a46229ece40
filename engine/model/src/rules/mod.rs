//! What the engine accepts from a client where the browser would take
//! anything: URLs (which a tab may open, which a request may name) and
//! cookies. One set of rules for every operation that takes them, so that a
//! frontend or an operation can't check less than another.

pub mod cookie;
pub mod url;
