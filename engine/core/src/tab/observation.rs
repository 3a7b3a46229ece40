//! What a tab knows of its page for agents: the ref table (one number space
//! per tab, `refs.rs`) and the last snapshot's text, valid for the epoch it
//! was taken in. Every action and navigation starts a new epoch. Its own
//! lock; nothing here sees the tab.

use std::sync::Mutex;

use super::refs::RefTable;
use super::snapshot::CachedSnapshot;

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
    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
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
