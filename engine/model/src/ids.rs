//! Ids handed to clients (tabs, file choosers, selects, network calls):
//! random, so that knowing one says nothing about another.

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

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_prefixed_and_distinct() {
        let a = super::random_id("tab");
        let b = super::random_id("tab");
        assert!(a.starts_with("tab_") && a.len() == 20, "{a}");
        assert_ne!(a, b);
    }
}
