//! The main frame's loading as the event pump reads it, told to waits.
//!
//! Chromium brackets every navigation of the main frame in a start and a
//! stop of loading: a new document commits in between, or a same-document
//! navigation (`pushState`, `replaceState`, a fragment) is reported
//! instead, with no load event. The pump reads each kind of event from a
//! stream of its own, so under load it may read them in any order and far
//! apart. What this concludes holds for every order, with no clock: a
//! wait told that a navigation started is always told that it ended.

#[derive(Debug, Default)]
pub struct MainFrameLoading {
    /// Starts read minus stops read, kept within -1..=1: 1 while loading,
    /// -1 when a stop was read before its start.
    balance: i8,
    /// Waits were told a navigation started, and not yet that it ended.
    start_told: bool,
    /// A new document committed since the last start.
    committed_since_start: bool,
    /// A same-document navigation was read since the last stop.
    same_document_since_stop: bool,
}

impl MainFrameLoading {
    /// The main frame started loading. True: waits are to be told a
    /// navigation started (not when its stop was read already).
    pub fn started(&mut self) -> bool {
        self.balance = (self.balance + 1).min(1);
        if self.balance <= 0 {
            return false;
        }
        self.committed_since_start = false;
        self.start_told = true;
        true
    }

    /// A new document committed in the main frame.
    pub fn committed(&mut self) {
        self.committed_since_start = true;
    }

    /// A same-document navigation. True: waits are to be told the page is
    /// loaded (not while a new document loads: its script may
    /// `replaceState` before its own load).
    pub fn within_document(&mut self) -> bool {
        self.same_document_since_stop = true;
        if self.committed_since_start {
            return false;
        }
        self.start_told = false;
        true
    }

    /// The main frame stopped loading. True: waits are to be told the page
    /// is loaded, because the navigation they were told of was a
    /// same-document one read before its start.
    pub fn stopped(&mut self) -> bool {
        self.balance = (self.balance - 1).max(-1);
        let same_document_end =
            self.start_told && !self.committed_since_start && self.same_document_since_stop;
        self.start_told = false;
        self.same_document_since_stop = false;
        same_document_end
    }

    /// Between a start and its stop.
    pub fn loading(&self) -> bool {
        self.balance > 0
    }

    /// A new document committed since the main frame last started loading.
    pub fn committed_since_start(&self) -> bool {
        self.committed_since_start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug)]
    enum Read {
        Start,
        Commit,
        SameDocument,
        Stop,
    }

    /// What waits are told for events read in this order: +1 a start, -1
    /// an end (a load), summed; and whether a start came at all.
    fn told(order: &[Read]) -> (i32, bool) {
        let mut loading = MainFrameLoading {
            committed_since_start: true,
            ..Default::default()
        };
        let (mut open, mut started) = (0, false);
        for read in order {
            match read {
                Read::Start => {
                    if loading.started() {
                        open = 1;
                        started = true;
                    }
                }
                Read::Commit => loading.committed(),
                Read::SameDocument => {
                    if loading.within_document() {
                        open = 0;
                    }
                }
                Read::Stop => {
                    if loading.stopped() {
                        open = 0;
                    }
                }
            }
        }
        (open, started)
    }

    #[test]
    fn a_same_document_navigation_ends_for_waits_in_every_read_order() {
        use Read::*;
        let orders = [
            [Start, SameDocument, Stop],
            [Start, Stop, SameDocument],
            [SameDocument, Start, Stop],
            [SameDocument, Stop, Start],
            [Stop, Start, SameDocument],
            [Stop, SameDocument, Start],
        ];
        for order in orders {
            assert_eq!(told(&order).0, 0, "{order:?} left a navigation open");
        }
    }

    #[test]
    fn a_new_document_s_navigation_ends_with_its_load_not_before() {
        use Read::*;
        let mut loading = MainFrameLoading::default();
        assert!(loading.started());
        loading.committed();
        // Its script replaces its state before its load: not loaded yet.
        assert!(!loading.within_document());
        assert!(loading.loading());
        assert!(!loading.stopped(), "its load event ends it, not the stop");
        assert!(!loading.loading());
        // A navigation the browser cancelled (a download, a 204) is not
        // called loaded either.
        assert!(loading.started());
        assert!(!loading.stopped());
        assert_eq!(told(&[Start, Commit, Stop]), (1, true));
    }

    #[test]
    fn a_stop_read_early_swallows_only_its_own_start() {
        let mut loading = MainFrameLoading::default();
        assert!(!loading.stopped());
        assert!(!loading.started(), "its start: over already");
        assert!(!loading.loading());
        assert!(loading.started(), "the next navigation's start");
        assert!(loading.loading());
    }
}
