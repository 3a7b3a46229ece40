//! Draining: the engine's way out of a fleet. Once it begins (SIGTERM) the
//! engine is not ready, takes no new sessions, and the operations in flight
//! are let finish, up to a bound, before the tabs close.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

#[derive(Debug, Default)]
pub struct Drain {
    draining: AtomicBool,
    in_flight: AtomicUsize,
    idle: tokio::sync::Notify,
}

/// One operation in flight; it ends when this is dropped.
#[must_use = "the operation counts as in flight only while this lives"]
pub struct InFlight(Arc<Drain>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Drain {
    /// An operation begins.
    pub fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(self.clone())
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// From now on: not ready, no new sessions. True the first time.
    pub fn start(&self) -> bool {
        !self.draining.swap(true, Ordering::AcqRel)
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Waits until no operation is in flight, or `bound` has passed; true
    /// if none is.
    pub async fn settled(&self, bound: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let idle = self.idle.notified();
            if self.in_flight() == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, idle).await.is_err() {
                return self.in_flight() == 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn settles_when_the_last_operation_ends_or_at_the_bound() {
        let drain = Arc::new(Drain::default());
        assert!(drain.settled(Duration::ZERO).await, "nothing in flight");
        let first = drain.begin();
        let second = drain.begin();
        assert_eq!(drain.in_flight(), 2);
        assert!(drain.start() && !drain.start() && drain.is_draining());
        assert!(!drain.settled(Duration::from_millis(20)).await, "bounded");
        let waiting = tokio::spawn({
            let drain = drain.clone();
            async move { drain.settled(Duration::from_secs(10)).await }
        });
        drop(first);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "one still in flight");
        drop(second);
        assert!(waiting.await.unwrap());
    }
}
