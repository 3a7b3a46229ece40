//! What a tab knows of its page for agents: the ref table (one number space
//! per tab; `refs.rs` reaches the page for it) and the last snapshot's text, valid for the epoch it
//! was taken in. Every action and navigation starts a new epoch. Its own
//! lock; nothing here sees the tab.

use parking_lot::Mutex;
use std::collections::HashMap;

/// Where a ref's element lives.
#[derive(Debug, Clone)]
pub struct RefEntry {
    pub frame_id: String,
    /// The isolated world it was registered in; gone with the document.
    pub context_id: i64,
    pub backend_node_id: Option<i64>,
}

/// Per tab: the numbers handed out, and each frame's isolated world.
#[derive(Debug)]
pub struct RefTable {
    next: u32,
    entries: HashMap<u32, RefEntry>,
    /// (frame, backend node id) -> number, so a repeated snapshot resolves
    /// only nodes it has not seen.
    by_backend: HashMap<(String, i64), u32>,
    worlds: HashMap<String, i64>,
    frame_ordinals: HashMap<String, u32>,
    next_frame_ordinal: u32,
}

impl Default for RefTable {
    fn default() -> Self {
        RefTable {
            next: 1,
            entries: HashMap::new(),
            by_backend: HashMap::new(),
            worlds: HashMap::new(),
            frame_ordinals: HashMap::new(),
            next_frame_ordinal: 1,
        }
    }
}

impl RefTable {
    pub fn next(&self) -> u32 {
        self.next
    }

    /// Records numbers a world handed out (the world returns its new `next`).
    pub fn record(
        &mut self,
        frame_id: &str,
        context_id: i64,
        numbers: &[(u32, Option<i64>)],
        next: u32,
    ) {
        for &(n, backend) in numbers {
            if n == 0 {
                continue;
            }
            let entry = self.entries.entry(n).or_insert_with(|| RefEntry {
                frame_id: frame_id.to_string(),
                context_id,
                backend_node_id: None,
            });
            if let Some(b) = backend {
                entry.backend_node_id = Some(b);
                self.by_backend.insert((frame_id.to_string(), b), n);
            }
        }
        self.next = self.next.max(next);
    }

    /// A frame committed a new document: its world and refs are gone.
    pub fn frame_navigated(&mut self, frame_id: &str) {
        self.worlds.remove(frame_id);
        self.entries.retain(|_, e| e.frame_id != frame_id);
        self.by_backend.retain(|(f, _), _| f != frame_id);
    }

    /// The main frame navigated: every frame's document is gone.
    pub fn page_navigated(&mut self) {
        self.worlds.clear();
        self.entries.clear();
        self.by_backend.clear();
    }

    pub fn ordinal(&mut self, frame_id: &str, is_main: bool) -> u32 {
        if is_main {
            return 0;
        }
        if let Some(&n) = self.frame_ordinals.get(frame_id) {
            return n;
        }
        let n = self.next_frame_ordinal;
        self.next_frame_ordinal += 1;
        self.frame_ordinals.insert(frame_id.to_string(), n);
        n
    }

    pub fn ordinal_of(&self, frame_id: &str) -> u32 {
        self.frame_ordinals.get(frame_id).copied().unwrap_or(0)
    }

    /// The number already given to a node, if it lives in `world`.
    pub fn known(&self, frame_id: &str, backend: i64, world: i64) -> Option<u32> {
        let n = *self.by_backend.get(&(frame_id.to_string(), backend))?;
        (self.entries.get(&n)?.context_id == world).then_some(n)
    }

    pub fn entry(&self, n: u32) -> Option<RefEntry> {
        self.entries.get(&n).cloned()
    }

    pub fn world(&self, frame_id: &str) -> Option<i64> {
        self.worlds.get(frame_id).copied()
    }

    pub fn set_world(&mut self, frame_id: &str, context_id: i64) {
        self.worlds.insert(frame_id.to_string(), context_id);
    }

    pub fn forget_world(&mut self, frame_id: &str, context_id: i64) {
        if self.worlds.get(frame_id) == Some(&context_id) {
            self.worlds.remove(frame_id);
        }
    }
}

/// The last text snapshot, valid for the epoch it was taken in.
#[derive(Debug, Clone)]
pub struct CachedSnapshot {
    pub epoch: u64,
    pub url: String,
    pub text: String,
    pub refs_count: usize,
}

#[derive(Debug, Default)]
struct Known {
    refs: RefTable,
    /// Bumped by every action and navigation; a cached snapshot is valid
    /// only for the epoch it was taken in.
    epoch: u64,
    snapshot: Option<CachedSnapshot>,
}

#[derive(Debug, Default)]
pub struct Observation {
    known: Mutex<Known>,
}

impl Observation {
    fn known(&self) -> parking_lot::MutexGuard<'_, Known> {
        self.known.lock()
    }

    pub fn with_refs<T>(&self, f: impl FnOnce(&mut RefTable) -> T) -> T {
        f(&mut self.known().refs)
    }

    /// The page is about to change (an action): a cached snapshot is stale;
    /// refs stay valid while their elements live.
    pub fn bump_epoch(&self) {
        let mut known = self.known();
        known.epoch += 1;
        known.snapshot = None;
    }

    /// A frame committed a new document (`main`: the page itself).
    pub fn navigated(&self, frame_id: &str, main: bool) {
        let mut known = self.known();
        known.epoch += 1;
        known.snapshot = None;
        if main {
            known.refs.page_navigated();
        } else {
            known.refs.frame_navigated(frame_id);
        }
    }

    pub fn epoch(&self) -> u64 {
        self.known().epoch
    }

    pub fn cached_snapshot(&self) -> Option<CachedSnapshot> {
        let known = self.known();
        known.snapshot.clone().filter(|s| s.epoch == known.epoch)
    }

    /// Keeps `snapshot` unless the page changed while it was taken.
    pub fn cache_snapshot(&self, snapshot: CachedSnapshot) {
        let mut known = self.known();
        if snapshot.epoch == known.epoch {
            known.snapshot = Some(snapshot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_never_reused_after_navigation() {
        let mut t = RefTable::default();
        t.record("main", 1, &[(1, Some(10)), (2, None)], 3);
        assert!(t.entry(1).is_some());
        assert_eq!(t.known("main", 10, 1), Some(1));
        assert_eq!(
            t.known("main", 10, 2),
            None,
            "another world is another document"
        );
        t.page_navigated();
        assert_eq!(t.known("main", 10, 1), None);
        assert!(t.entry(1).is_none());
        assert_eq!(t.next(), 3, "a stale number must never name a new element");
        t.record("child", 2, &[(3, None)], 4);
        t.frame_navigated("child");
        assert!(t.entry(3).is_none());
        assert_eq!(t.next(), 4);
    }

    #[test]
    fn frame_ordinals_are_stable() {
        let mut t = RefTable::default();
        assert_eq!(t.ordinal("main", true), 0);
        assert_eq!(t.ordinal("a", false), 1);
        assert_eq!(t.ordinal("b", false), 2);
        assert_eq!(t.ordinal("a", false), 1);
        assert_eq!(t.ordinal_of("b"), 2);
    }

    fn snapshot(epoch: u64) -> CachedSnapshot {
        CachedSnapshot {
            epoch,
            url: "http://x/".into(),
            text: "- button \"Go\" [e1]".into(),
            refs_count: 1,
        }
    }

    #[test]
    fn a_snapshot_lives_until_the_page_changes() {
        let o = Observation::default();
        o.cache_snapshot(snapshot(o.epoch()));
        assert!(o.cached_snapshot().is_some());
        o.bump_epoch();
        assert!(o.cached_snapshot().is_none(), "an action makes it stale");
        let taken_at = o.epoch();
        o.navigated("main", true);
        o.cache_snapshot(snapshot(taken_at));
        assert!(
            o.cached_snapshot().is_none(),
            "taken before the navigation: not kept"
        );
    }
}
