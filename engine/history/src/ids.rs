//! Record ids (`ses_`, `act_`, `evt_`, `net_` + 16 hex digits) and wall-clock
//! milliseconds.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

pub(crate) const SESSION: &str = "ses";
pub(crate) const ACTION: &str = "act";
pub(crate) const EVENT: &str = "evt";
pub(crate) const NETWORK_CALL: &str = "net";

/// `prefix_` + 64 random bits in hex. The bits come from std's `RandomState`
/// (seeded from the OS, re-keyed per call) over a process-wide counter, so ids
/// are unique without a random-number crate. They are not secrets.
pub(crate) fn new_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_i64(now_ms());
    format!("{prefix}_{:016x}", hasher.finish())
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_prefix_and_are_unique() {
        let ids: std::collections::HashSet<String> = (0..10_000).map(|_| new_id(ACTION)).collect();
        assert_eq!(ids.len(), 10_000);
        assert!(
            ids.iter()
                .all(|id| id.starts_with("act_") && id.len() == 20)
        );
    }
}
