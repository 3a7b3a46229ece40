//! The wait state machines, free of any bindings so they test on the host.
//!
//! Time is the host's `elapsed_ms` since the end of the action's dispatch;
//! signals are stamped with the elapsed time of the poll that delivered them.

use std::collections::BTreeSet;

/// Shortest and longest `pending` answer: short enough to notice a phase
/// boundary promptly, long enough that the host does not spin.
pub const MIN_PENDING_MS: u64 = 5;
pub const MAX_PENDING_MS: u64 = 100;

/// What the page did since the last poll.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    RequestStarted { id: String, resource_type: String, same_site: bool },
    RequestFinished(String),
    NavigationStarted,
    NavigationCommitted,
    DomContentLoaded,
    Load,
    DialogOpened,
}

/// The answer to the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Pending(u32),
    Done(&'static str),
}

/// Tuning of `action_complete`, all in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// How long event handlers get to start a request or navigation.
    pub grace_ms: u64,
    /// How long, after the grace window, in-flight work may hold the wait.
    pub network_cap_ms: u64,
    /// The quiet time required after the last activity.
    pub settle_ms: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { grace_ms: 50, network_cap_ms: 5000, settle_ms: 100 }
    }
}

/// Requests that never finish or don't affect what the page shows, so
/// waiting on them would only ever hit the cap.
const IGNORED_RESOURCE_TYPES: [&str; 5] = ["WebSocket", "EventSource", "Ping", "Prefetch", "CSPViolationReport"];

fn ignored(resource_type: &str) -> bool {
    IGNORED_RESOURCE_TYPES.iter().any(|t| t.eq_ignore_ascii_case(resource_type))
}

fn pending_until(deadline: u64, now: u64) -> Step {
    Step::Pending(deadline.saturating_sub(now).clamp(MIN_PENDING_MS, MAX_PENDING_MS) as u32)
}

/// One wait in progress.
#[derive(Debug, Clone)]
pub enum Wait {
    Immediate,
    Time { duration_ms: u64 },
    ActionComplete(ActionComplete),
    Navigation(NavigationLoad),
    NetworkIdle(NetworkIdle),
}

impl Wait {
    /// The answer to `begin`.
    pub fn begin(&mut self) -> Step {
        self.poll(Vec::new(), 0)
    }

    pub fn poll(&mut self, events: impl IntoIterator<Item = Event>, elapsed_ms: u64) -> Step {
        match self {
            Wait::Immediate => Step::Done("immediate"),
            Wait::Time { duration_ms } if elapsed_ms >= *duration_ms => Step::Done("time_elapsed"),
            Wait::Time { duration_ms } => pending_until(*duration_ms, elapsed_ms),
            Wait::ActionComplete(wait) => wait.poll(events, elapsed_ms),
            Wait::Navigation(wait) => wait.poll(events),
            Wait::NetworkIdle(wait) => wait.poll(events, elapsed_ms),
        }
    }
}

/// Waits for a navigation of the main frame to start and then load; only
/// the host's timeout ends it otherwise.
#[derive(Debug, Clone, Default)]
pub struct NavigationLoad {
    started: bool,
    done: Option<&'static str>,
}

impl NavigationLoad {
    fn poll(&mut self, events: impl IntoIterator<Item = Event>) -> Step {
        if let Some(reason) = self.done {
            return Step::Done(reason);
        }
        for event in events {
            match event {
                Event::NavigationStarted | Event::NavigationCommitted => self.started = true,
                Event::Load if self.started => {
                    self.done = Some("navigation_loaded");
                    return Step::Done("navigation_loaded");
                }
                Event::DialogOpened => {
                    self.done = Some("dialog");
                    return Step::Done("dialog");
                }
                _ => {}
            }
        }
        Step::Pending(MAX_PENDING_MS as u32)
    }
}

/// Waits until no request (of any site; long-lived streams aside) has
/// been in flight for `idle_ms`. Requests that began before the wait come
/// first among its signals (the host passes what is in flight when it
/// starts).
#[derive(Debug, Clone)]
pub struct NetworkIdle {
    idle_ms: u64,
    in_flight: BTreeSet<String>,
    idle_since_ms: u64,
    done: Option<&'static str>,
}

impl NetworkIdle {
    pub fn new(idle_ms: u64) -> Self {
        NetworkIdle { idle_ms, in_flight: BTreeSet::new(), idle_since_ms: 0, done: None }
    }

    fn poll(&mut self, events: impl IntoIterator<Item = Event>, now: u64) -> Step {
        if let Some(reason) = self.done {
            return Step::Done(reason);
        }
        let was_idle = self.in_flight.is_empty();
        for event in events {
            match event {
                Event::RequestStarted { id, resource_type, .. } if !ignored(&resource_type) => {
                    self.in_flight.insert(id);
                }
                Event::RequestFinished(id) => {
                    self.in_flight.remove(&id);
                }
                Event::DialogOpened => {
                    self.done = Some("dialog");
                    return Step::Done("dialog");
                }
                _ => {}
            }
        }
        if !self.in_flight.is_empty() {
            return Step::Pending(MAX_PENDING_MS as u32);
        }
        if !was_idle {
            // Idle again from this poll on.
            self.idle_since_ms = now;
        }
        let idle_at = self.idle_since_ms + self.idle_ms;
        if now >= idle_at {
            self.done = Some("network_idle");
            return Step::Done("network_idle");
        }
        pending_until(idle_at, now)
    }
}

/// Waits for the consequences of an action: grace window, then same-site
/// network and navigation activity (capped), then a quiet window.
#[derive(Debug, Clone)]
pub struct ActionComplete {
    settings: Settings,
    in_flight: BTreeSet<String>,
    navigating: bool,
    /// The end of dispatch counts as activity, so the quiet window also
    /// applies when nothing happens at all.
    last_activity_ms: u64,
    done: Option<&'static str>,
}

impl ActionComplete {
    pub fn new(settings: Settings) -> Self {
        ActionComplete { settings, in_flight: BTreeSet::new(), navigating: false, last_activity_ms: 0, done: None }
    }

    fn poll(&mut self, events: impl IntoIterator<Item = Event>, now: u64) -> Step {
        if let Some(reason) = self.done {
            return Step::Done(reason);
        }
        let mut activity = false;
        for event in events {
            match event {
                // The page is blocked until the dialog is handled, so nothing
                // more will settle; let the client see the dialog now.
                Event::DialogOpened => return self.finish("dialog"),
                Event::RequestStarted { id, resource_type, same_site } => {
                    if same_site && !ignored(&resource_type) {
                        self.in_flight.insert(id);
                        activity = true;
                    }
                }
                Event::RequestFinished(id) => activity |= self.in_flight.remove(&id),
                Event::NavigationStarted => {
                    self.navigating = true;
                    activity = true;
                }
                // A parsed document still loads its frames, each level once
                // its parent has; its load event waits for all of them.
                Event::NavigationCommitted | Event::DomContentLoaded => activity = true,
                Event::Load => {
                    self.navigating = false;
                    activity = true;
                }
            }
        }
        if activity {
            self.last_activity_ms = self.last_activity_ms.max(now);
        }

        let Settings { grace_ms, network_cap_ms, settle_ms } = self.settings;
        let cap_at = grace_ms + network_cap_ms;
        let busy = self.navigating || !self.in_flight.is_empty();
        if busy {
            if now >= cap_at {
                return self.finish("network_cap");
            }
            return pending_until(cap_at, now);
        }
        // A page that keeps starting short requests would reset the quiet
        // window forever; past the cap it gets one last window.
        let settle_at = (self.last_activity_ms + settle_ms).max(grace_ms).min(cap_at + settle_ms);
        if now >= settle_at {
            return self.finish("settled");
        }
        pending_until(settle_at, now)
    }

    fn finish(&mut self, reason: &'static str) -> Step {
        self.done = Some(reason);
        Step::Done(reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(id: &str) -> Event {
        Event::RequestStarted { id: id.into(), resource_type: "XHR".into(), same_site: true }
    }

    fn finish(id: &str) -> Event {
        Event::RequestFinished(id.into())
    }

    fn action_complete() -> Wait {
        Wait::ActionComplete(ActionComplete::new(Settings::default()))
    }

    #[test]
    fn navigation_waits_for_a_load_after_a_navigation() {
        let mut w = Wait::Navigation(NavigationLoad::default());
        assert_eq!(w.begin(), Step::Pending(100));
        assert_eq!(w.poll([Event::Load], 50), Step::Pending(100), "a load with no navigation before it");
        assert_eq!(w.poll([Event::NavigationStarted], 100), Step::Pending(100));
        assert_eq!(w.poll([Event::DomContentLoaded], 150), Step::Pending(100));
        assert_eq!(w.poll([Event::Load], 200), Step::Done("navigation_loaded"));
        assert_eq!(w.poll([], 300), Step::Done("navigation_loaded"));
    }

    #[test]
    fn network_idle_waits_out_requests_and_the_idle_window() {
        let mut w = Wait::NetworkIdle(NetworkIdle::new(500));
        assert_eq!(w.begin(), Step::Pending(100));
        assert_eq!(w.poll([start("a"), start("b")], 100), Step::Pending(100));
        assert_eq!(w.poll([finish("a")], 300), Step::Pending(100));
        assert_eq!(w.poll([finish("b")], 800), Step::Pending(100), "idle from 800");
        assert_eq!(w.poll([], 1250), Step::Pending(50));
        let socket = Event::RequestStarted { id: "ws".into(), resource_type: "WebSocket".into(), same_site: false };
        assert_eq!(w.poll([socket], 1290), Step::Pending(10), "a stream never counts");
        assert_eq!(w.poll([], 1300), Step::Done("network_idle"));
        let mut quiet = Wait::NetworkIdle(NetworkIdle::new(500));
        assert_eq!(quiet.poll([], 500), Step::Done("network_idle"));
    }

    #[test]
    fn immediate_is_done_at_once() {
        let mut w = Wait::Immediate;
        assert_eq!(w.begin(), Step::Done("immediate"));
        assert_eq!(w.poll([], 10), Step::Done("immediate"));
    }

    #[test]
    fn time_waits_for_its_duration() {
        let mut w = Wait::Time { duration_ms: 250 };
        assert_eq!(w.begin(), Step::Pending(100));
        assert_eq!(w.poll([], 100), Step::Pending(100));
        assert_eq!(w.poll([], 230), Step::Pending(20));
        assert_eq!(w.poll([], 248), Step::Pending(5), "never below the minimum");
        assert_eq!(w.poll([], 250), Step::Done("time_elapsed"));
        assert_eq!(Wait::Time { duration_ms: 0 }.begin(), Step::Done("time_elapsed"));
    }

    #[test]
    fn quiet_page_settles_after_the_settle_window() {
        let mut w = action_complete();
        assert_eq!(w.begin(), Step::Pending(100));
        assert_eq!(w.poll([], 50), Step::Pending(50));
        assert_eq!(w.poll([], 99), Step::Pending(5));
        assert_eq!(w.poll([], 100), Step::Done("settled"));
    }

    #[test]
    fn grace_window_holds_even_with_zero_settle() {
        let mut w = Wait::ActionComplete(ActionComplete::new(Settings { grace_ms: 50, network_cap_ms: 5000, settle_ms: 0 }));
        assert_eq!(w.begin(), Step::Pending(50));
        assert_eq!(w.poll([], 20), Step::Pending(30));
        assert_eq!(w.poll([], 50), Step::Done("settled"));
    }

    #[test]
    fn in_flight_request_holds_then_settle_window_follows_it() {
        let mut w = action_complete();
        w.begin();
        assert_eq!(w.poll([start("1")], 30), Step::Pending(100));
        assert_eq!(w.poll([], 400), Step::Pending(100));
        assert_eq!(w.poll([finish("1")], 600), Step::Pending(100));
        assert_eq!(w.poll([], 680), Step::Pending(20));
        assert_eq!(w.poll([], 700), Step::Done("settled"));
    }

    #[test]
    fn new_activity_resets_the_settle_window() {
        let mut w = action_complete();
        w.begin();
        w.poll([start("1")], 10);
        assert_eq!(w.poll([finish("1")], 100), Step::Pending(100));
        assert_eq!(w.poll([start("2"), finish("2")], 180), Step::Pending(100));
        assert_eq!(w.poll([], 200), Step::Pending(80));
        assert_eq!(w.poll([], 280), Step::Done("settled"));
    }

    #[test]
    fn ignored_and_cross_site_requests_do_not_hold() {
        let mut w = action_complete();
        w.begin();
        let events = vec![
            Event::RequestStarted { id: "ws".into(), resource_type: "WebSocket".into(), same_site: true },
            Event::RequestStarted { id: "es".into(), resource_type: "EventSource".into(), same_site: true },
            Event::RequestStarted { id: "p".into(), resource_type: "Ping".into(), same_site: true },
            Event::RequestStarted { id: "pf".into(), resource_type: "Prefetch".into(), same_site: true },
            Event::RequestStarted { id: "csp".into(), resource_type: "CSPViolationReport".into(), same_site: true },
            Event::RequestStarted { id: "ad".into(), resource_type: "Script".into(), same_site: false },
        ];
        assert_eq!(w.poll(events, 20), Step::Pending(80));
        assert_eq!(w.poll([finish("ad")], 60), Step::Pending(40), "finishing an untracked request is not activity");
        assert_eq!(w.poll([], 100), Step::Done("settled"));
    }

    #[test]
    fn navigation_holds_until_dom_content_loaded() {
        let mut w = action_complete();
        w.begin();
        let nav_doc = Event::RequestStarted { id: "doc".into(), resource_type: "Document".into(), same_site: false };
        assert_eq!(w.poll([Event::NavigationStarted, nav_doc], 20), Step::Pending(100));
        assert_eq!(w.poll([Event::NavigationCommitted, finish("doc")], 300), Step::Pending(100));
        assert_eq!(w.poll([Event::DomContentLoaded], 500), Step::Pending(100));
        assert_eq!(w.poll([Event::Load], 550), Step::Pending(100));
        assert_eq!(w.poll([], 620), Step::Pending(30));
        assert_eq!(w.poll([], 650), Step::Done("settled"));
    }

    #[test]
    fn a_navigation_lasts_until_its_document_has_loaded() {
        let mut w = action_complete();
        w.begin();
        w.poll([Event::NavigationStarted, Event::NavigationCommitted], 10);
        assert_eq!(w.poll([Event::DomContentLoaded], 20), Step::Pending(100));
        assert_eq!(w.poll([], 400), Step::Pending(100), "frames still loading");
        assert_eq!(w.poll([Event::Load], 450), Step::Pending(100));
        assert_eq!(w.poll([], 550), Step::Done("settled"));
    }

    #[test]
    fn load_alone_ends_a_navigation() {
        let mut w = action_complete();
        w.begin();
        w.poll([Event::NavigationStarted], 10);
        assert_eq!(w.poll([Event::Load], 200), Step::Pending(100));
        assert_eq!(w.poll([], 300), Step::Done("settled"));
    }

    #[test]
    fn stuck_request_hits_the_network_cap() {
        let mut w = action_complete();
        w.begin();
        w.poll([start("slow")], 10);
        assert_eq!(w.poll([], 4000), Step::Pending(100));
        assert_eq!(w.poll([], 5000), Step::Pending(50), "exactly until the cap at grace + cap");
        assert_eq!(w.poll([], 5050), Step::Done("network_cap"));
        assert_eq!(w.poll([finish("slow")], 5100), Step::Done("network_cap"), "done stays done");
    }

    #[test]
    fn stuck_navigation_hits_the_network_cap() {
        let mut w = Wait::ActionComplete(ActionComplete::new(Settings { grace_ms: 0, network_cap_ms: 300, settle_ms: 100 }));
        w.begin();
        w.poll([Event::NavigationStarted], 5);
        assert_eq!(w.poll([], 300), Step::Done("network_cap"));
    }

    #[test]
    fn chatty_page_gets_one_window_past_the_cap() {
        let mut w = action_complete();
        w.begin();
        let mut t = 10;
        while t < 5050 {
            assert!(matches!(w.poll([start("r"), finish("r")], t), Step::Pending(_)), "at {t}");
            t += 40;
        }
        // Idle at the cap: the quiet window may not extend past cap + settle.
        assert_eq!(w.poll([start("r"), finish("r")], 5090), Step::Pending(60));
        assert_eq!(w.poll([], 5150), Step::Done("settled"));
    }

    #[test]
    fn dialog_ends_the_wait_at_once() {
        let mut w = action_complete();
        w.begin();
        assert_eq!(w.poll([start("1"), Event::DialogOpened], 5), Step::Done("dialog"));
        assert_eq!(w.poll([finish("1")], 50), Step::Done("dialog"));
    }

    #[test]
    fn pending_is_clamped() {
        let mut w = Wait::ActionComplete(ActionComplete::new(Settings { grace_ms: 2, network_cap_ms: 5000, settle_ms: 1 }));
        assert_eq!(w.begin(), Step::Pending(5));
        let mut w = Wait::ActionComplete(ActionComplete::new(Settings { grace_ms: 1000, network_cap_ms: 5000, settle_ms: 100 }));
        assert_eq!(w.begin(), Step::Pending(100));
    }

    #[test]
    fn redirect_reusing_an_id_is_one_request() {
        let mut w = action_complete();
        w.begin();
        w.poll([start("1"), start("1")], 10);
        assert_eq!(w.poll([finish("1")], 100), Step::Pending(100));
        assert_eq!(w.poll([], 200), Step::Done("settled"));
    }
}
