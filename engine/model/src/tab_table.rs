//! The engine's tab table: the open tabs in listing order and each user's
//! active tab, behind their own locks. It knows tabs only as `Listed` (an
//! id, an owner, a target, its frames, pinned or not) and never sees the
//! engine or the browser, so its rules are tested without Chromium: a
//! lookup is narrowed to the caller's tabs, closing the active tab makes
//! the caller's last one active, a frame nobody claims is credited to the
//! active tab only while every tab has one owner.

use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::Arc;

use crate::caller::Caller;

/// What the table needs of a tab.
pub trait Listed: Send + Sync {
    fn id(&self) -> &str;
    /// The `userId` whose browser context holds it.
    fn owner(&self) -> Option<String>;
    /// Its page's target id.
    fn target(&self) -> &str;
    /// One of its frames has this id.
    fn has_frame(&self, frame: &str) -> bool;
    fn pinned(&self) -> bool;
}

pub struct TabTable<T> {
    tabs: RwLock<Vec<Arc<T>>>,
    /// Each user's active tab (the tab MCP tools act on by default), keyed
    /// by user id (`None` for requests without one). Never locked while
    /// `tabs` is.
    active: Mutex<HashMap<Option<String>, String>>,
}

impl<T> Default for TabTable<T> {
    fn default() -> Self {
        TabTable {
            tabs: RwLock::new(Vec::new()),
            active: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Listed> TabTable<T> {
    pub fn all(&self) -> Vec<Arc<T>> {
        self.tabs.read().clone()
    }

    pub fn is_empty(&self) -> bool {
        self.tabs.read().is_empty()
    }

    /// Every tab, taken out of the table (the browser went away). A
    /// restart reopens them under their ids and keeps the active ones
    /// (`forget_active` false); a browser stopped forgets them.
    pub fn take_all(&self, forget_active: bool) -> Vec<Arc<T>> {
        let tabs = std::mem::take(&mut *self.tabs.write());
        if forget_active {
            self.active.lock().clear();
        }
        tabs
    }

    /// Takes out the tabs whose owner `pick` picks (a browser that went
    /// away with only some users' tabs), keeping the rest in order.
    pub fn take_owned(&self, pick: impl Fn(Option<&str>) -> bool) -> Vec<Arc<T>> {
        let mut tabs = self.tabs.write();
        let (taken, kept) = std::mem::take(&mut *tabs)
            .into_iter()
            .partition(|t| pick(t.owner().as_deref()));
        *tabs = kept;
        taken
    }

    /// A tab whoever owns it: for the engine's own bookkeeping only.
    pub fn any(&self, id: &str) -> Option<Arc<T>> {
        self.tabs.read().iter().find(|t| t.id() == id).cloned()
    }

    /// The caller's tab `id`; another user's is not found.
    pub fn of_caller(&self, caller: &Caller, id: &str) -> Option<Arc<T>> {
        self.any(id).filter(|t| caller.owns(t.owner().as_deref()))
    }

    /// The caller's tabs, in listing order.
    pub fn of(&self, caller: &Caller) -> Vec<Arc<T>> {
        self.tabs
            .read()
            .iter()
            .filter(|t| caller.owns(t.owner().as_deref()))
            .cloned()
            .collect()
    }

    /// The first tab (with what `find` found in it) for which `find` finds
    /// something.
    pub fn find_map<R>(&self, find: impl Fn(&T) -> Option<R>) -> Option<(Arc<T>, R)> {
        self.tabs
            .read()
            .iter()
            .find_map(|t| find(t).map(|found| (t.clone(), found)))
    }

    pub fn by_target(&self, target: &str) -> Option<Arc<T>> {
        self.tabs
            .read()
            .iter()
            .find(|t| t.target() == target)
            .cloned()
    }

    /// Lists a tab last; it becomes its owner's active tab when asked to,
    /// or when its owner has none.
    pub fn add(&self, tab: Arc<T>, active: bool) {
        let owner = tab.owner();
        let id = tab.id().to_string();
        self.tabs.write().push(tab);
        let mut actives = self.active.lock();
        if active || !actives.contains_key(&owner) {
            actives.insert(owner, id);
        }
    }

    /// Lists a tab last without making it active (a popup, a tab reopened
    /// after a restart).
    pub fn push(&self, tab: Arc<T>) {
        self.tabs.write().push(tab);
    }

    /// Puts `fresh` in `old`'s place; false when `old` is no longer listed.
    pub fn replace(&self, old: &Arc<T>, fresh: Arc<T>) -> bool {
        let mut tabs = self.tabs.write();
        match tabs.iter_mut().find(|t| Arc::ptr_eq(t, old)) {
            Some(slot) => {
                *slot = fresh;
                true
            }
            None => false,
        }
    }

    /// Unlists a tab; if it was its owner's active tab, the owner's last
    /// tab becomes active.
    pub fn remove(&self, id: &str) {
        let (owner, last) = {
            let mut tabs = self.tabs.write();
            let owner = tabs.iter().find(|t| t.id() == id).map(|t| t.owner());
            tabs.retain(|t| t.id() != id);
            let Some(owner) = owner else { return };
            let last = tabs
                .iter()
                .rev()
                .find(|t| t.owner() == owner)
                .map(|t| t.id().to_string());
            (owner, last)
        };
        let mut actives = self.active.lock();
        if actives.get(&owner).map(String::as_str) == Some(id) {
            match last {
                Some(last) => actives.insert(owner, last),
                None => actives.remove(&owner),
            };
        }
    }

    /// The tab a frame belongs to. An unknown frame goes to the active tab
    /// only when every tab has the same owner: a download is never
    /// credited to another user.
    pub fn for_frame(&self, frame: &str) -> Option<Arc<T>> {
        let actives: Vec<String> = self.active.lock().values().cloned().collect();
        let tabs = self.tabs.read();
        if let Some(tab) = tabs
            .iter()
            .find(|t| t.target() == frame || t.has_frame(frame))
        {
            return Some(tab.clone());
        }
        let one_owner = tabs.windows(2).all(|w| w[0].owner() == w[1].owner());
        tabs.iter()
            .find(|t| one_owner && actives.iter().any(|a| a == t.id()))
            .cloned()
    }

    /// `caller`'s active tab: the last one it activated or opened active.
    pub fn active(&self, caller: &Caller) -> Option<String> {
        self.active
            .lock()
            .get(&caller.user_id().map(str::to_string))
            .cloned()
    }

    pub fn set_active(&self, caller: &Caller, id: &str) {
        self.active
            .lock()
            .insert(caller.user_id().map(str::to_string), id.to_string());
    }

    /// The tab's place in the whole list.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.tabs.read().iter().position(|t| t.id() == id)
    }

    /// Moves tab `id` to `index` in the whole list (clamped).
    pub fn move_to(&self, id: &str, index: usize) {
        let mut tabs = self.tabs.write();
        if let Some(from) = tabs.iter().position(|t| t.id() == id) {
            let tab = tabs.remove(from);
            let index = index.min(tabs.len());
            tabs.insert(index, tab);
        }
    }

    /// `tab`'s place in the caller's list.
    pub fn index_in(&self, caller: &Caller, tab: &Arc<T>) -> usize {
        self.tabs
            .read()
            .iter()
            .filter(|t| caller.owns(t.owner().as_deref()))
            .position(|t| Arc::ptr_eq(t, tab))
            .unwrap_or(0)
    }

    /// Moves `tab` to `wanted` in the caller's list, clamped to its group
    /// (pinned tabs lead); the place it got. Other users' tabs keep their
    /// places.
    pub fn place(&self, caller: &Caller, tab: &Arc<T>, wanted: usize) -> usize {
        let mut tabs = self.tabs.write();
        let Some(from) = tabs.iter().position(|t| Arc::ptr_eq(t, tab)) else {
            return 0;
        };
        let moving = tabs.remove(from);
        // The caller's tabs left, as (place in the whole list, pinned).
        let mine: Vec<(usize, bool)> = tabs
            .iter()
            .enumerate()
            .filter(|(_, t)| caller.owns(t.owner().as_deref()))
            .map(|(i, t)| (i, t.pinned()))
            .collect();
        let pinned_count = mine.iter().filter(|(_, p)| *p).count();
        let index = if moving.pinned() {
            wanted.min(pinned_count)
        } else {
            wanted.clamp(pinned_count, mine.len())
        };
        // Before the caller's tab now at `index`, or after its last.
        let at = match mine.get(index) {
            Some((i, _)) => *i,
            None => mine.last().map_or(tabs.len(), |(i, _)| i + 1),
        };
        tabs.insert(at, moving);
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct FakeTab {
        id: String,
        owner: Option<String>,
        frames: Vec<String>,
        pinned: bool,
    }

    impl Listed for FakeTab {
        fn id(&self) -> &str {
            &self.id
        }
        fn owner(&self) -> Option<String> {
            self.owner.clone()
        }
        fn target(&self) -> &str {
            &self.id
        }
        fn has_frame(&self, frame: &str) -> bool {
            self.frames.iter().any(|f| f == frame)
        }
        fn pinned(&self) -> bool {
            self.pinned
        }
    }

    #[test]
    fn take_owned_takes_only_the_picked_owners_tabs_and_keeps_order() {
        let table = TabTable::default();
        for (id, owner) in [
            ("a", Some("ann")),
            ("b", None),
            ("c", Some("ann")),
            ("d", Some("bob")),
        ] {
            table.add(tab(id, owner), false);
        }
        let taken: Vec<String> = table
            .take_owned(|owner| owner == Some("ann"))
            .iter()
            .map(|t| t.id.clone())
            .collect();
        assert_eq!(taken, ["a", "c"]);
        let left: Vec<String> = table.all().iter().map(|t| t.id.clone()).collect();
        assert_eq!(left, ["b", "d"]);
    }

    fn tab(id: &str, owner: Option<&str>) -> Arc<FakeTab> {
        Arc::new(FakeTab {
            id: id.into(),
            owner: owner.map(str::to_string),
            frames: vec![format!("{id}-frame")],
            pinned: false,
        })
    }

    #[test]
    fn lookups_are_narrowed_to_the_caller_and_actives_follow_closes() {
        let table = TabTable::default();
        let (alice, bob) = (Caller::user("alice").unwrap(), Caller::user("bob").unwrap());
        table.add(tab("a1", Some("alice")), false);
        table.add(tab("b1", Some("bob")), false);
        table.add(tab("a2", Some("alice")), false);
        assert!(
            table.of_caller(&bob, "a1").is_none(),
            "another user's tab is not found"
        );
        assert_eq!(table.of(&alice).len(), 2);
        // The first tab of a user is active until another is activated.
        assert_eq!(table.active(&alice).as_deref(), Some("a1"));
        table.set_active(&alice, "a2");
        table.remove("a2");
        assert_eq!(
            table.active(&alice).as_deref(),
            Some("a1"),
            "the last one left"
        );
        table.remove("a1");
        assert_eq!(table.active(&alice), None);
        assert_eq!(table.active(&bob).as_deref(), Some("b1"));
        // A restart keeps the actives, a stopped browser forgets them.
        assert_eq!(table.take_all(false).len(), 1);
        assert_eq!(table.active(&bob).as_deref(), Some("b1"));
        table.take_all(true);
        assert_eq!(table.active(&bob), None);
    }

    #[test]
    fn an_unknown_frame_goes_to_the_active_tab_only_with_one_owner() {
        let table = TabTable::default();
        table.add(tab("a1", Some("alice")), true);
        assert_eq!(table.for_frame("a1-frame").unwrap().id, "a1");
        assert_eq!(table.for_frame("elsewhere").unwrap().id, "a1");
        table.add(tab("b1", Some("bob")), true);
        assert!(
            table.for_frame("elsewhere").is_none(),
            "never credited to another user"
        );
    }

    #[test]
    fn a_tab_is_placed_within_its_group_in_its_owner_s_list() {
        let table = TabTable::default();
        let alice = Caller::user("alice").unwrap();
        let pinned = Arc::new(FakeTab {
            pinned: true,
            ..Arc::into_inner(tab("p", Some("alice"))).unwrap()
        });
        table.add(pinned.clone(), false);
        let (one, two) = (tab("one", Some("alice")), tab("two", Some("alice")));
        table.add(one.clone(), false);
        table.add(tab("bob", Some("bob")), false);
        table.add(two.clone(), false);
        // An unpinned tab can't go before the pinned one.
        assert_eq!(table.place(&alice, &two, 0), 1);
        let ids: Vec<String> = table.of(&alice).iter().map(|t| t.id.clone()).collect();
        assert_eq!(ids, ["p", "two", "one"]);
        assert_eq!(table.index_in(&alice, &one), 2);
        // Bob's tab kept its place among the others.
        assert_eq!(table.position("bob"), Some(3));
        let fresh = tab("one", Some("alice"));
        assert!(table.replace(&one, fresh.clone()));
        assert!(!table.replace(&one, fresh), "the old one is gone");
    }
}
