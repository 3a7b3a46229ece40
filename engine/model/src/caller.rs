//! Who is asking. A frontend resolves the caller once per request (REST:
//! the `userId` of the query or body; MCP: the `userId` of the `/mcp` URL or
//! `wabp mcp --user-id`) and hands it to every operation; the engine narrows
//! everything by it: tabs, the active tab, history, network, downloads,
//! dialogs, file choosers and selects. Another user's things are "not
//! found", never "forbidden": their ids leak nothing.
//!
//! A caller also carries its [`Scopes`]: what its token lets it do. Without
//! tokens (the loopback default) a caller may do everything, except that
//! engine-wide operations are refused to a caller that names a user.

use crate::error::{Error, ErrorCode, Result};

/// The owner of what can't be attributed to a tab (a download from an
/// unknown frame): not a valid user id, so no caller owns it.
pub const NOBODY: &str = "\u{0}nobody";

/// What an operation may do; a token grants any subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Reads state: tabs, pages, history, network.
    Read,
    /// Acts on pages: input, navigation, dialogs, downloads.
    Act,
    /// Runs the caller's own code in a page or sends requests as it:
    /// `execute`, `curl`.
    Script,
    /// Engine-wide: shutdown, the input mode.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 4] = [Scope::Read, Scope::Act, Scope::Script, Scope::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Act => "act",
            Scope::Script => "script",
            Scope::Admin => "admin",
        }
    }

    pub fn parse(name: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == name)
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scopes(u8);

impl Scopes {
    pub const NONE: Scopes = Scopes(0);
    pub const ALL: Scopes = Scopes(0b1111);

    pub fn with(self, scope: Scope) -> Scopes {
        Scopes(self.0 | scope.bit())
    }

    pub fn without(self, scope: Scope) -> Scopes {
        Scopes(self.0 & !scope.bit())
    }

    pub fn allows(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    /// The scopes' names, in a fixed order.
    pub fn names(self) -> Vec<&'static str> {
        Scope::ALL
            .into_iter()
            .filter(|s| self.allows(*s))
            .map(Scope::as_str)
            .collect()
    }
}

impl FromIterator<Scope> for Scopes {
    fn from_iter<I: IntoIterator<Item = Scope>>(scopes: I) -> Scopes {
        scopes.into_iter().fold(Scopes::NONE, Scopes::with)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caller {
    user: Option<String>,
    scopes: Scopes,
    /// Whether a token granted the scopes (else they are the defaults).
    by_token: bool,
}

impl Default for Caller {
    fn default() -> Self {
        Caller::anonymous()
    }
}

impl Caller {
    /// A request without a `userId`: it sees the tabs opened without one.
    pub fn anonymous() -> Caller {
        Caller {
            user: None,
            scopes: Scopes::ALL,
            by_token: false,
        }
    }

    /// A request with `userId` `id` (checked: 1-128 characters of letters,
    /// digits and `-_.@:`). Without a token, a user's caller may do all but
    /// engine-wide operations, which touch every user.
    pub fn user(id: &str) -> Result<Caller> {
        check_user_id(id)?;
        Ok(Caller {
            user: Some(id.to_string()),
            scopes: Scopes::ALL.without(Scope::Admin),
            by_token: false,
        })
    }

    /// `Caller::user` for `Some`, `anonymous` for `None`.
    pub fn from_user_id(id: Option<&str>) -> Result<Caller> {
        id.map_or(Ok(Caller::anonymous()), Caller::user)
    }

    /// This caller with exactly `scopes`, what its token grants.
    pub fn granted(mut self, scopes: Scopes) -> Caller {
        self.scopes = scopes;
        self.by_token = true;
        self
    }

    pub fn scopes(&self) -> Scopes {
        self.scopes
    }

    /// Ok when this caller may run operation `name`, which needs `scope`;
    /// else 403 saying what is missing.
    pub fn may(&self, scope: Scope, name: &str) -> Result<()> {
        if self.scopes.allows(scope) {
            return Ok(());
        }
        let message = if !self.by_token {
            format!(
                "{name} acts on the whole engine, not on one user's tabs: send it without a userId"
            )
        } else {
            format!(
                "{name} needs the `{}` scope; this token has: {}",
                scope.as_str(),
                match self.scopes.names() {
                    names if names.is_empty() => "none".to_string(),
                    names => names.join(", "),
                }
            )
        };
        Err(Error::new(ErrorCode::Forbidden, message))
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
    fn scopes_are_sets() {
        let read_act: Scopes = [Scope::Read, Scope::Act].into_iter().collect();
        assert!(read_act.allows(Scope::Read) && read_act.allows(Scope::Act));
        assert!(!read_act.allows(Scope::Script) && !read_act.allows(Scope::Admin));
        assert_eq!(read_act.names(), ["read", "act"]);
        assert_eq!(Scopes::ALL.names(), ["read", "act", "script", "admin"]);
        assert_eq!(Scope::parse("script"), Some(Scope::Script));
        assert_eq!(Scope::parse("root"), None);
        assert!(Caller::anonymous().scopes().allows(Scope::Admin));
        assert!(!Caller::user("alice").unwrap().scopes().allows(Scope::Admin));
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
