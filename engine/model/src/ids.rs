//! Ids handed to clients (tabs, downloads, file choosers, selects, pickers,
//! approvals, network calls): random, so that knowing one says nothing about
//! another, and (those a client names in a path) ending in the id of the
//! engine that holds the thing, `tab_0123456789abcdef.engine-1`, so a load
//! balancer can send every request about it to that engine.

use std::fmt;

/// `{prefix}_` and 64 random bits in hex.
pub fn random_id(prefix: &str) -> String {
    let mut bytes = [0u8; 8];
    // The OS source does not fail on Linux; if it ever did, a clock-and-
    // counter id is still unique, only guessable.
    if getrandom::fill(&mut bytes).is_err() {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        bytes = (nanos ^ COUNTER.fetch_add(1, Ordering::Relaxed).rotate_left(48)).to_le_bytes();
    }
    format!("{prefix}_{:016x}", u64::from_le_bytes(bytes))
}

/// The engine an id (`{prefix}_{16 hex}.{engine}`) names, if it is one.
pub fn holder(id: &str) -> Option<&str> {
    let (random, engine) = id.split_once('.')?;
    let (prefix, hex) = random.split_once('_')?;
    let shaped = !prefix.is_empty()
        && prefix.bytes().all(|b| b.is_ascii_lowercase())
        && hex.len() == 16
        && hex.bytes().all(|b| b.is_ascii_hexdigit());
    (shaped && EngineId::valid(engine)).then_some(engine)
}

/// A random id held by the same engine as `sibling` (a file chooser's id
/// from its tab's).
pub fn sibling_id(prefix: &str, sibling: &str) -> String {
    match holder(sibling) {
        Some(engine) => format!("{}.{engine}", random_id(prefix)),
        None => random_id(prefix),
    }
}

/// The name of one engine in a fleet (`--engine-id`): 1 to 63 lower-case
/// letters, digits and dashes, not starting or ending with a dash (a DNS
/// label, so it can also name the balancer's server for it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EngineId(String);

impl EngineId {
    pub fn new(id: &str) -> Result<Self, String> {
        if Self::valid(id) {
            Ok(EngineId(id.to_string()))
        } else {
            Err(format!(
                "engine id {id:?}: 1 to 63 lower-case letters, digits and dashes, not starting or ending with a dash"
            ))
        }
    }

    fn valid(id: &str) -> bool {
        (1..=63).contains(&id.len())
            && id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !id.starts_with('-')
            && !id.ends_with('-')
    }

    /// From this machine's host name (its first label, lower-cased, other
    /// characters as dashes); `engine` when there is none.
    pub fn from_host_name() -> Self {
        let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| std::env::var("HOSTNAME"))
            .unwrap_or_default();
        let label: String = name
            .trim()
            .split('.')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .take(63)
            .collect();
        Self::new(label.trim_matches('-')).unwrap_or_else(|_| EngineId("engine".into()))
    }

    /// A new random id held by this engine.
    pub fn new_id(&self, prefix: &str) -> String {
        format!("{}.{}", random_id(prefix), self.0)
    }

    /// True when `id` names another engine than this one.
    pub fn foreign(&self, id: &str) -> Option<String> {
        holder(id)
            .filter(|engine| *engine != self.0)
            .map(str::to_string)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EngineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_prefixed_and_distinct() {
        let a = random_id("tab");
        let b = random_id("tab");
        assert!(a.starts_with("tab_") && a.len() == 20, "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn ids_name_their_engine() {
        let engine = EngineId::new("engine-1").unwrap();
        let id = engine.new_id("tab");
        assert!(id.starts_with("tab_") && id.ends_with(".engine-1"), "{id}");
        assert_eq!(holder(&id), Some("engine-1"));
        assert_eq!(engine.foreign(&id), None);
        assert_eq!(
            EngineId::new("engine-2").unwrap().foreign(&id).as_deref(),
            Some("engine-1")
        );
        let chooser = sibling_id("fc", &id);
        assert!(chooser.starts_with("fc_") && chooser.ends_with(".engine-1"));
        // Ids from before engines were named, and junk, name none.
        assert_eq!(holder("tab_0123456789abcdef"), None);
        assert_eq!(holder("a.B C"), None);
        assert_eq!(holder("openapi.json"), None);
        assert_eq!(holder("tab_0123456789abcdeg.e1"), None);
        assert!(sibling_id("fc", "tab_1").starts_with("fc_"));
    }

    #[test]
    fn engine_ids_are_dns_labels() {
        for bad in ["", "-a", "a-", "A", "a.b", "a_b", &"x".repeat(64)] {
            assert!(EngineId::new(bad).is_err(), "{bad:?}");
        }
        for good in ["a", "engine-1", "e0", &"x".repeat(63)] {
            assert!(EngineId::new(good).is_ok(), "{good:?}");
        }
        assert!(EngineId::valid(EngineId::from_host_name().as_str()));
    }
}
