//! Who is asking. A frontend resolves the caller once per request (REST:
//! the `userId` of the query or body; MCP: the `userId` of the `/mcp` URL or
//! `wabp mcp --user-id`) and hands it to every operation; the engine narrows
//! everything by it: tabs, the active tab, history, network, downloads,
//! dialogs, file choosers and selects. Another user's things are "not
//! found", never "forbidden": their ids leak nothing.

use crate::error::{Error, ErrorCode, Result};

/// The owner of what can't be attributed to a tab (a download from an
/// unknown frame): not a valid user id, so no caller owns it.
pub(crate) const NOBODY: &str = "\u{0}nobody";

#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Caller {
    user: Option<String>,
}

impl Caller {
    /// A request without a `userId`: it sees the tabs opened without one.
    pub fn anonymous() -> Caller {
        Caller { user: None }
    }

    /// A request with `userId` `id` (checked: 1-128 characters of letters,
    /// digits and `-_.@:`).
    pub fn user(id: &str) -> Result<Caller> {
        check_user_id(id)?;
        Ok(Caller {
            user: Some(id.to_string()),
        })
    }

    /// `Caller::user` for `Some`, `anonymous` for `None`.
    pub fn from_user_id(id: Option<&str>) -> Result<Caller> {
        id.map_or(Ok(Caller::anonymous()), Caller::user)
    }

    /// The caller that owns things owned by `owner` (a tab's owner).
    pub(crate) fn from_owner(owner: Option<String>) -> Caller {
        Caller { user: owner }
    }

    pub fn user_id(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// Whether something owned by `owner` (a tab, a download, a record) is
    /// this caller's.
    pub fn owns(&self, owner: Option<&str>) -> bool {
        self.user.as_deref() == owner
    }
}

/// A user id is a short opaque name.
pub fn check_user_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.@:".contains(c));
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidRequest,
            "userId must be 1-128 characters of letters, digits and - _ . @ :",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_ids_are_checked() {
        for ok in ["alice", "user-1", "a.b@c:d_e"] {
            assert!(Caller::user(ok).is_ok(), "{ok}");
        }
        for bad in ["", "has space", "semi;colon", "slash/", &"x".repeat(129)] {
            assert_eq!(
                Caller::user(bad).unwrap_err().code,
                ErrorCode::InvalidRequest,
                "{bad}"
            );
        }
    }

    #[test]
    fn callers_own_only_their_things() {
        let alice = Caller::user("alice").unwrap();
        assert!(alice.owns(Some("alice")));
        assert!(!alice.owns(None));
        assert!(!alice.owns(Some("bob")));
        assert!(Caller::anonymous().owns(None));
        assert!(Caller::user(NOBODY).is_err());
        assert!(!Caller::anonymous().owns(Some(NOBODY)));
        assert!(!Caller::anonymous().owns(Some("alice")));
    }
}
