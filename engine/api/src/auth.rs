//! Who may call: bearer tokens and what each grants.
//!
//! `--auth-token` is the admin token: every scope, and it may name any
//! user. `--auth-tokens FILE` adds per-user tokens (TOML, one `[[token]]`
//! table each):
//!
//! ```toml
//! [[token]]
//! token = "alice-secret"        # or: sha256 = "<hex of the token's SHA-256>"
//! user = "alice"                # the user it acts as; a different userId is 403
//! scopes = ["read", "act"]      # any of read, act, script, admin
//! ```
//!
//! Tokens are kept only as SHA-256 digests, compared in constant time, and
//! never logged. With no token at all, every request is let in (the
//! loopback default) and its `userId` is taken at its word.

use sha2::{Digest, Sha256};
use wabp_core::{Caller, Error, ErrorCode, Result, Scope, Scopes};

/// The tokens an engine accepts. Empty: requests need none.
#[derive(Debug, Default, Clone)]
pub struct Tokens {
    entries: Vec<Entry>,
}

#[derive(Clone)]
struct Entry {
    digest: [u8; 32],
    grant: Grant,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the digest: it is as good as the token for a dictionary.
        f.debug_struct("Entry").field("grant", &self.grant).finish()
    }
}

/// What a presented token allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The user it acts as; `None`: any user the request names.
    user: Option<String>,
    /// `None`: no token is configured, the caller's default scopes apply.
    scopes: Option<Scopes>,
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Equal without an early exit, so timing says nothing about where they differ.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn parse_hex(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The shortest token accepted: guessing one must stay out of reach.
pub const MIN_TOKEN_LEN: usize = 16;

impl Tokens {
    /// Only the admin token, if there is one (check it with
    /// [`check_admin_token`] first).
    pub fn new(admin_token: Option<&str>) -> Tokens {
        let mut tokens = Tokens::default();
        if let Some(token) = admin_token {
            tokens.entries.push(Entry {
                digest: digest(token),
                grant: Grant {
                    user: None,
                    scopes: Some(Scopes::ALL),
                },
            });
        }
        tokens
    }

    /// Adds the tokens of a token file's text. Errors name the table and
    /// the key, never a value (it may be a token).
    pub fn add_file(&mut self, text: &str) -> std::result::Result<(), String> {
        let file: toml::Table = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|span| text[..span.start.min(text.len())].lines().count().max(1));
            match line {
                Some(line) => format!("line {line}: not valid TOML ({})", e.message()),
                None => format!("not valid TOML ({})", e.message()),
            }
        })?;
        if let Some(other) = file.keys().find(|k| *k != "token") {
            return Err(format!("unknown key {other:?} (only [[token]] tables)"));
        }
        let tables = match file.get("token") {
            None => return Ok(()),
            Some(toml::Value::Array(tables)) => tables,
            Some(_) => return Err("token must be [[token]] tables".into()),
        };
        for (n, table) in tables.iter().enumerate() {
            let at = format!("[[token]] number {}", n + 1);
            let table = table
                .as_table()
                .ok_or_else(|| format!("{at}: not a table"))?;
            if let Some(other) = table
                .keys()
                .find(|k| !["token", "sha256", "user", "scopes"].contains(&k.as_str()))
            {
                return Err(format!(
                    "{at}: unknown key {other:?} (token, sha256, user, scopes)"
                ));
            }
            let text_of = |key: &str| -> std::result::Result<Option<&str>, String> {
                match table.get(key) {
                    None => Ok(None),
                    Some(toml::Value::String(text)) => Ok(Some(text)),
                    Some(_) => Err(format!("{at}: {key} must be a string")),
                }
            };
            let digest = match (text_of("token")?, text_of("sha256")?) {
                (Some(token), None) => {
                    if token.len() < MIN_TOKEN_LEN {
                        return Err(format!(
                            "{at}: a token has at least {MIN_TOKEN_LEN} characters"
                        ));
                    }
                    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
                        return Err(format!("{at}: a token has no spaces or control characters"));
                    }
                    digest(token)
                }
                (None, Some(hex)) => parse_hex(&hex.to_ascii_lowercase())
                    .ok_or_else(|| format!("{at}: sha256 is 64 hex digits"))?,
                _ => return Err(format!("{at}: give exactly one of token and sha256")),
            };
            let names = match table.get("scopes") {
                Some(toml::Value::Array(items)) => items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .ok_or_else(|| format!("{at}: scopes lists strings"))
                    })
                    .collect::<std::result::Result<Vec<&str>, String>>()?,
                Some(_) => return Err(format!("{at}: scopes is a list of strings")),
                None => {
                    return Err(format!(
                        "{at}: scopes is missing (any of read, act, script, admin)"
                    ));
                }
            };
            let scopes = names
                .iter()
                .map(|name| {
                    Scope::parse(name).ok_or_else(|| {
                        format!("{at}: unknown scope {name:?} (read, act, script, admin)")
                    })
                })
                .collect::<std::result::Result<Scopes, String>>()?;
            if scopes == Scopes::NONE {
                return Err(format!("{at}: scopes is empty"));
            }
            let user = match text_of("user")? {
                Some(user) => {
                    wabp_core::caller::check_user_id(user)
                        .map_err(|e| format!("{at}: {}", e.message))?;
                    Some(user.to_string())
                }
                None if scopes.allows(Scope::Admin) => None,
                None => {
                    return Err(format!(
                        "{at}: user is missing (only admin tokens may name any user)"
                    ));
                }
            };
            if self.entries.iter().any(|e| same(&e.digest, &digest)) {
                return Err(format!("{at}: the same token is listed twice"));
            }
            self.entries.push(Entry {
                digest,
                grant: Grant {
                    user,
                    scopes: Some(scopes),
                },
            });
        }
        Ok(())
    }

    /// Reads and adds a token file.
    pub fn add_file_at(&mut self, path: &std::path::Path) -> std::result::Result<(), String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("could not read {}: {e}", path.display()))?;
        self.add_file(&text)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Whether requests need a token.
    pub fn required(&self) -> bool {
        !self.entries.is_empty()
    }

    /// What the request's bearer token (`Authorization: Bearer <token>`)
    /// allows; 401 when tokens are required and it is missing or unknown.
    pub fn authenticate(&self, bearer: Option<&str>) -> Result<Grant> {
        if !self.required() {
            return Ok(Grant {
                user: None,
                scopes: None,
            });
        }
        let presented = digest(bearer.unwrap_or(""));
        // Every entry is compared: how long it takes says nothing of which matched.
        let found = self.entries.iter().fold(None, |found, entry| {
            if same(&entry.digest, &presented) {
                Some(entry)
            } else {
                found
            }
        });
        match (bearer, found) {
            (Some(_), Some(entry)) => Ok(entry.grant.clone()),
            _ => Err(Error::new(
                ErrorCode::Unauthorized,
                "missing or invalid bearer token (Authorization: Bearer <token>)",
            )),
        }
    }
}

/// The admin token (`--auth-token`) follows the token file's rules.
pub fn check_admin_token(token: &str) -> std::result::Result<(), String> {
    if token.len() < MIN_TOKEN_LEN {
        return Err(format!(
            "--auth-token must have at least {MIN_TOKEN_LEN} characters"
        ));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("--auth-token must have no spaces or control characters".into());
    }
    Ok(())
}

impl Grant {
    /// The user the token acts as; `None`: it may name any.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The caller of a request with this grant that names `user_id`: the
    /// token's own user (403 if the request names another), or the named
    /// one for a token that may name any.
    pub fn caller(&self, user_id: Option<&str>) -> Result<Caller> {
        let caller = match (&self.user, user_id) {
            (Some(own), Some(named)) if own != named => {
                return Err(Error::new(
                    ErrorCode::Forbidden,
                    format!(
                        "this token acts as user {own:?}; it may not act as {:?}",
                        wabp_core::error::cut(named)
                    ),
                ));
            }
            (Some(own), _) => Caller::user(own)?,
            (None, named) => Caller::from_user_id(named)?,
        };
        Ok(match self.scopes {
            Some(scopes) => caller.granted(scopes),
            None => caller,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
[[token]]
token = "alice-0123456789abcdef"
user = "alice"
scopes = ["read", "act"]

[[token]]
# sha256 of "bob-0123456789abcdef"
sha256 = "SHA_BOB"
user = "bob"
scopes = ["read", "act", "script"]
"#;

    fn tokens() -> Tokens {
        let bob = Sha256::digest(b"bob-0123456789abcdef")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        let mut tokens = Tokens::new(Some("admin-0123456789abcdef"));
        tokens.add_file(&FILE.replace("SHA_BOB", &bob)).unwrap();
        tokens
    }

    #[test]
    fn no_tokens_let_every_request_in_as_it_says() {
        let grant = Tokens::default().authenticate(None).unwrap();
        assert_eq!(
            grant.caller(Some("carol")).unwrap(),
            Caller::user("carol").unwrap()
        );
        assert_eq!(grant.caller(None).unwrap(), Caller::anonymous());
    }

    #[test]
    fn a_token_acts_as_its_user_with_its_scopes() {
        let tokens = tokens();
        let alice = tokens.authenticate(Some("alice-0123456789abcdef")).unwrap();
        let caller = alice.caller(None).unwrap();
        assert_eq!(caller.user_id(), Some("alice"));
        assert_eq!(caller.scopes().names(), ["read", "act"]);
        assert_eq!(alice.caller(Some("alice")).unwrap(), caller);
        let err = alice.caller(Some("bob")).unwrap_err();
        assert_eq!(err.code, ErrorCode::Forbidden);
        assert!(caller.may(Scope::Script, "execute").is_err());
        assert!(
            caller
                .may(Scope::Admin, "browser_shutdown")
                .unwrap_err()
                .message
                .contains("needs the `admin` scope")
        );

        let bob = tokens.authenticate(Some("bob-0123456789abcdef")).unwrap();
        assert!(
            bob.caller(None)
                .unwrap()
                .may(Scope::Script, "execute")
                .is_ok()
        );

        let admin = tokens.authenticate(Some("admin-0123456789abcdef")).unwrap();
        let as_carol = admin.caller(Some("carol")).unwrap();
        assert_eq!(as_carol.user_id(), Some("carol"));
        assert!(as_carol.may(Scope::Admin, "browser_shutdown").is_ok());
    }

    #[test]
    fn the_example_token_file_loads() {
        let mut tokens = Tokens::default();
        tokens
            .add_file(include_str!("../../../examples/tokens.toml"))
            .unwrap();
        let ops = tokens.authenticate(Some("ops-0d9e8f7a6b5c4d3e")).unwrap();
        let caller = ops.caller(Some("alice")).unwrap();
        assert!(caller.may(Scope::Admin, "browser_shutdown").is_ok());
        assert!(caller.may(Scope::Act, "navigate").is_err());
    }

    #[test]
    fn unknown_or_missing_tokens_are_401() {
        let tokens = tokens();
        for bearer in [None, Some(""), Some("alice-0123456789abcdeF"), Some("x")] {
            assert_eq!(
                tokens.authenticate(bearer).unwrap_err().code,
                ErrorCode::Unauthorized,
                "{bearer:?}"
            );
        }
    }

    #[test]
    fn bad_token_files_say_which_table_and_never_the_token() {
        for (file, says) in [
            (
                "[[token]]\ntoken = \"short\"\nuser = \"a\"\nscopes = [\"read\"]",
                "at least 16",
            ),
            (
                "[[token]]\nsha256 = \"abc\"\nuser = \"a\"\nscopes = [\"read\"]",
                "64 hex",
            ),
            (
                "[[token]]\ntoken = \"0123456789abcdefgh\"\nuser = \"a\"\nscopes = [\"root\"]",
                "unknown scope",
            ),
            (
                "[[token]]\ntoken = \"0123456789abcdefgh\"\nscopes = [\"read\"]",
                "user is missing",
            ),
            (
                "[[token]]\ntoken = \"0123456789abcdefgh\"\nuser = \"a b\"\nscopes = [\"read\"]",
                "userId",
            ),
            (
                "[[token]]\ntoken = \"0123456789abcdefgh\"\nuser = \"a\"\nscopes = []",
                "empty",
            ),
            (
                "[[token]]\nuser = \"a\"\nscopes = [\"read\"]",
                "exactly one",
            ),
            (
                "[[token]]\ntoken = \"0123456789abcdefgh\"\nuser = \"a\"\nscopes = [\"read\"]\nextra = 1",
                "unknown key",
            ),
            (
                "[[token]]\ntoken = 0123456789abcdefgh\nuser = \"a\"\nscopes = [\"read\"]",
                "not valid TOML",
            ),
            (
                "[[token]]\ntoken = 1234567890123456789\nuser = \"a\"\nscopes = [\"read\"]",
                "token must be a string",
            ),
            (
                "[[token]]\ntoken = \"0123456789abcdefgh\"\nuser = \"a\"",
                "scopes is missing",
            ),
            (
                "[[token]]\ntoken = \"0123456789 abcdefgh\"\nuser = \"a\"\nscopes = [\"read\"]",
                "no spaces",
            ),
            (
                "[[token]]\ntoken = \"0123456789abcdefgh\"\nuser = \"a\"\nscopes = \"0123456789abcdefgh\"",
                "list of strings",
            ),
        ] {
            let err = Tokens::default().add_file(file).unwrap_err();
            assert!(err.contains(says), "{file}: {err}");
            assert!(!err.contains("0123456789abcdefgh"), "{err}");
            assert!(!err.contains("1234567890123456789"), "{err}");
        }
    }
}
