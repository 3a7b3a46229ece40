//! Users and their sessions, as a component: which users have a session
//! (a browser context of their own, `C`), when each was last used, how many
//! requests each is serving, and the limits on them. Behind its own lock;
//! it knows contexts only as values, so its rules (who is evicted, when a
//! session expires, two first requests racing) are unit-tested without a
//! browser. The engine makes and disposes of the contexts and closes the
//! tabs; this decides.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::error::{Error, ErrorCode, Result};

/// Bounds on per-user sessions.
#[derive(Debug, Clone, Copy)]
pub struct UserLimits {
    pub max_sessions: usize,
    pub max_tabs_per_session: usize,
    /// A session with no request for this long is closed.
    pub idle_ttl: Duration,
}

impl Default for UserLimits {
    fn default() -> Self {
        UserLimits {
            max_sessions: 20,
            max_tabs_per_session: 10,
            idle_ttl: Duration::from_secs(30 * 60),
        }
    }
}

#[derive(Debug)]
struct Session<C> {
    context: C,
    last_used: Instant,
    /// Requests being served; a busy session is never evicted.
    in_flight: usize,
}

/// Where a user's next tab goes.
#[derive(Debug, PartialEq, Eq)]
pub enum Room<C> {
    /// The user's session, touched.
    Existing(C),
    /// No session yet, and room for one.
    Free,
    /// No session yet and no room: close this idle user's session first.
    Evict(String),
}

/// The users with a session.
#[derive(Debug)]
pub struct Users<C> {
    limits: UserLimits,
    sessions: Mutex<HashMap<String, Session<C>>>,
}

impl<C: Clone> Users<C> {
    pub fn new(limits: UserLimits) -> Users<C> {
        Users {
            limits,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    pub fn limits(&self) -> UserLimits {
        self.limits
    }

    /// Where `user`'s next tab goes: their session (touched), a new one, or
    /// a new one once the longest-idle session is closed. Every session
    /// busy at the limit: `LIMIT_REACHED`.
    pub fn room_for(&self, user: &str) -> Result<Room<C>> {
        let mut sessions = self.sessions.lock();
        if let Some(s) = sessions.get_mut(user) {
            s.last_used = Instant::now();
            return Ok(Room::Existing(s.context.clone()));
        }
        if sessions.len() < self.limits.max_sessions {
            return Ok(Room::Free);
        }
        sessions
            .iter()
            .filter(|(_, s)| s.in_flight == 0)
            .min_by_key(|(_, s)| s.last_used)
            .map(|(name, _)| Room::Evict(name.clone()))
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::LimitReached,
                    format!(
                        "the session limit ({}) is reached and every session is busy; retry later or raise --max-sessions",
                        self.limits.max_sessions
                    ),
                )
            })
    }

    /// Records `user`'s new session. When another request made one
    /// meanwhile (two first requests race), that one is kept: the answer is
    /// the context to use and, if any, the one made for nothing, to dispose
    /// of.
    pub fn settle(&self, user: &str, context: C) -> (C, Option<C>) {
        let mut sessions = self.sessions.lock();
        if let Some(s) = sessions.get(user) {
            return (s.context.clone(), Some(context));
        }
        sessions.insert(
            user.to_string(),
            Session {
                context: context.clone(),
                last_used: Instant::now(),
                in_flight: 0,
            },
        );
        (context, None)
    }

    /// Ends `user`'s session; its context, to dispose of.
    pub fn remove(&self, user: &str) -> Option<C> {
        self.sessions.lock().remove(user).map(|s| s.context)
    }

    /// Forgets every session (their browser went away with the contexts).
    pub fn clear(&self) {
        self.sessions.lock().clear();
    }

    /// When `user`'s session was last used.
    pub fn last_used(&self, user: &str) -> Option<Instant> {
        self.sessions.lock().get(user).map(|s| s.last_used)
    }

    /// Puts back when `user`'s session was last used (a session carried over
    /// a new browser is no fresher than it was).
    pub fn set_last_used(&self, user: &str, at: Instant) {
        if let Some(session) = self.sessions.lock().get_mut(user) {
            session.last_used = at;
        }
    }

    /// Forgets the sessions `keep` does not keep (a browser went away with
    /// their contexts; other users' are in other browsers).
    pub fn retain(&self, keep: impl Fn(&str) -> bool) {
        self.sessions.lock().retain(|user, _| keep(user));
    }

    /// Sessions idle (no request in flight) for longer than the limit.
    pub fn expired(&self) -> Vec<String> {
        self.sessions
            .lock()
            .iter()
            .filter(|(_, s)| s.in_flight == 0 && s.last_used.elapsed() > self.limits.idle_ttl)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Each user with a session, and for how many seconds it has been
    /// idle.
    pub fn idle_seconds(&self) -> Vec<(String, u64)> {
        self.sessions
            .lock()
            .iter()
            .map(|(name, s)| (name.clone(), s.last_used.elapsed().as_secs()))
            .collect()
    }

    fn count_request(&self, user: &str, delta: isize) {
        if let Some(s) = self.sessions.lock().get_mut(user) {
            s.in_flight = s.in_flight.saturating_add_signed(delta);
            s.last_used = Instant::now();
        }
    }
}

/// Marks a user's session busy while a request is served (if the user has
/// a session yet); dropped, the request is done.
pub struct UserActivity<C: Clone> {
    users: Arc<Users<C>>,
    user: String,
}

impl<C: Clone> UserActivity<C> {
    pub fn begin(users: &Arc<Users<C>>, user: &str) -> UserActivity<C> {
        users.count_request(user, 1);
        UserActivity {
            users: users.clone(),
            user: user.to_string(),
        }
    }
}

impl<C: Clone> Drop for UserActivity<C> {
    fn drop(&mut self) {
        self.users.count_request(&self.user, -1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn users(max_sessions: usize, idle_ttl: Duration) -> Arc<Users<u32>> {
        Arc::new(Users::new(UserLimits {
            max_sessions,
            max_tabs_per_session: 10,
            idle_ttl,
        }))
    }

    #[test]
    fn a_full_table_evicts_the_longest_idle_session_never_a_busy_one() {
        let users = users(2, Duration::from_secs(60));
        assert_eq!(users.room_for("a").unwrap(), Room::Free);
        assert_eq!(users.settle("a", 1), (1, None));
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(users.settle("b", 2), (2, None));
        assert_eq!(users.room_for("a").unwrap(), Room::Existing(1));
        // "b" is now the longest idle.
        assert_eq!(users.room_for("c").unwrap(), Room::Evict("b".into()));
        let busy = UserActivity::begin(&users, "b");
        assert_eq!(users.room_for("c").unwrap(), Room::Evict("a".into()));
        let also_busy = UserActivity::begin(&users, "a");
        let full = users.room_for("c").unwrap_err();
        assert_eq!(full.code, ErrorCode::LimitReached);
        drop((busy, also_busy));
        assert!(matches!(users.room_for("c").unwrap(), Room::Evict(_)));
        assert_eq!(users.remove("b"), Some(2));
        assert_eq!(users.room_for("c").unwrap(), Room::Free);
    }

    #[test]
    fn the_first_of_two_racing_sessions_is_kept() {
        let users = users(5, Duration::from_secs(60));
        assert_eq!(users.settle("a", 1), (1, None));
        assert_eq!(users.settle("a", 2), (1, Some(2)), "2 is disposed of");
    }

    #[test]
    fn idle_sessions_expire_unless_serving() {
        let users = users(5, Duration::from_millis(1));
        users.settle("a", 1);
        users.settle("b", 2);
        let serving = UserActivity::begin(&users, "b");
        std::thread::sleep(Duration::from_millis(10));
        assert_eq!(users.expired(), ["a".to_string()]);
        drop(serving);
        std::thread::sleep(Duration::from_millis(10));
        let mut expired = users.expired();
        expired.sort();
        assert_eq!(expired, ["a", "b"]);
        users.clear();
        assert!(users.expired().is_empty());
    }
}
