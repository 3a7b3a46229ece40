//! Whose turn it is on a tab. One action at a time holds the turn from its
//! before-frame to its after-frame. A read (a screenshot) takes the turn
//! too, so that it never lands between an action's thaw and its input;
//! but while the holder only waits for the page (a navigation, the
//! network, time) and sends it nothing, reads run beside it: a client
//! watching a 30 s wait gets its screenshots at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard, Notify, RwLock, RwLockReadGuard};

use crate::error::{Error, Result};

/// How long the end of a wait waits for the reads running beside it.
const READS_DRAIN_LIMIT: Duration = Duration::from_secs(5);

#[derive(Default)]
pub struct TabTurn {
    actions: Mutex<()>,
    /// Set while the turn's holder only waits for the page.
    open_to_reads: AtomicBool,
    /// Held (shared) by each read beside a wait; the wait's end takes it
    /// exclusively, so it freezes the page only once they are done.
    reads: RwLock<()>,
    opened: Notify,
}

/// An action's turn. Dropped, it takes the page back from reads, however
/// the action ended.
pub struct ActionTurn<'a> {
    _held: MutexGuard<'a, ()>,
    turn: &'a TabTurn,
}

impl ActionTurn<'_> {
    /// The holder now only waits for the page: reads may run beside it.
    pub fn open_to_reads(&self) {
        self.turn.open_to_reads.store(true, Ordering::Release);
        self.turn.opened.notify_waiters();
    }

    /// The wait is over: no new read comes in, and the ones running finish
    /// (bounded) before the holder touches the page again.
    pub async fn close_to_reads(&self) {
        if !self.turn.open_to_reads.swap(false, Ordering::AcqRel) {
            return;
        }
        let _ = tokio::time::timeout(READS_DRAIN_LIMIT, self.turn.reads.write()).await;
    }
}

impl Drop for ActionTurn<'_> {
    fn drop(&mut self) {
        self.turn.open_to_reads.store(false, Ordering::Release);
    }
}

/// A read's place: the turn itself, or beside a wait that holds it.
pub enum ReadTurn<'a> {
    Own(ActionTurn<'a>),
    BesideWait(RwLockReadGuard<'a, ()>),
}

impl TabTurn {
    /// The turn for an action (or anything that thaws the page), waiting at
    /// most `limit` for the one before to finish.
    pub async fn take(&self, limit: Duration) -> Result<ActionTurn<'_>> {
        let held = tokio::time::timeout(limit, self.actions.lock())
            .await
            .map_err(|_| Error::timeout("another action on this tab did not finish in time"))?;
        Ok(self.held(held))
    }

    fn held<'a>(&'a self, held: MutexGuard<'a, ()>) -> ActionTurn<'a> {
        ActionTurn {
            _held: held,
            turn: self,
        }
    }

    /// Whether nothing holds the turn now.
    pub fn is_free(&self) -> bool {
        self.actions.try_lock().is_ok()
    }

    /// A read's turn: its own, or beside the holder once that only waits.
    pub async fn read(&self, limit: Duration) -> Result<ReadTurn<'_>> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            // Made before the check: an opening between the two is not missed.
            let opened = self.opened.notified();
            if let Ok(held) = self.actions.try_lock() {
                return Ok(ReadTurn::Own(self.held(held)));
            }
            if self.open_to_reads.load(Ordering::Acquire) {
                let beside = self.reads.read().await;
                // The wait may have ended while this read queued.
                if self.open_to_reads.load(Ordering::Acquire) {
                    return Ok(ReadTurn::BesideWait(beside));
                }
                continue;
            }
            tokio::select! {
                held = self.actions.lock() => return Ok(ReadTurn::Own(self.held(held))),
                _ = opened => {}
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(Error::timeout(
                        "another action on this tab did not finish in time",
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_read_waits_for_an_action_but_runs_beside_a_wait() {
        let turn = Arc::new(TabTurn::default());
        let held = turn.take(Duration::from_secs(1)).await.unwrap();
        // Held by an action: a read times out.
        assert!(turn.read(Duration::from_millis(50)).await.is_err());
        // A read already queued gets in as soon as the holder only waits.
        let queued = {
            let turn = turn.clone();
            tokio::spawn(async move {
                matches!(
                    turn.read(Duration::from_secs(5)).await,
                    Ok(ReadTurn::BesideWait(_))
                )
            })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        held.open_to_reads();
        assert!(queued.await.unwrap());
        // The wait's end waits for a read beside it.
        let beside = turn.read(Duration::from_secs(1)).await.unwrap();
        {
            let closing = held.close_to_reads();
            tokio::pin!(closing);
            assert!(
                tokio::time::timeout(Duration::from_millis(20), &mut closing)
                    .await
                    .is_err()
            );
            drop(beside);
            closing.await;
        }
        // Closed: reads queue again, and get the turn once it is free.
        assert!(turn.read(Duration::from_millis(50)).await.is_err());
        // A turn dropped while open leaves no read beside the next holder.
        held.open_to_reads();
        drop(held);
        let next = turn.take(Duration::from_secs(1)).await.unwrap();
        assert!(turn.read(Duration::from_millis(50)).await.is_err());
        drop(next);
        assert!(matches!(
            turn.read(Duration::from_millis(50)).await,
            Ok(ReadTurn::Own(_))
        ));
    }
}
