//! Who is looking: a person signs in once (a token when the engine has
//! tokens, else the one-time key `wabp serve` prints) and the UI keeps a
//! random login id in an `HttpOnly`, `SameSite=Strict` cookie scoped to
//! `/ui`. The cookie never holds the token: cookies ignore ports, so other
//! local servers receive it too.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use parking_lot::Mutex;
use wabp_api::auth::Grant;
use wabp_core::Caller;

/// How long a login lasts without use.
const LOGIN_IDLE: Duration = Duration::from_secs(12 * 3600);
/// Logins kept at most; the least recently used goes first.
const MAX_LOGINS: usize = 256;

/// A signed-in person.
#[derive(Clone)]
pub struct Viewer {
    pub(crate) grant: Grant,
    /// How the history names them (`admin`, `user alice`, `local`).
    pub who: String,
    /// The user whose sessions they look at, for a grant that may name any.
    pub as_user: Option<String>,
    /// Whether the grant may look at any user's sessions.
    pub any_user: bool,
}

impl Viewer {
    /// The caller their requests act as, narrowed exactly as the API's.
    pub fn caller(&self) -> wabp_core::Result<Caller> {
        self.grant.caller(self.as_user.as_deref())
    }
}

struct Login {
    viewer: Viewer,
    last_used: Instant,
}

/// The UI's logins and its one-time key.
pub struct Logins {
    logins: Mutex<HashMap<String, Login>>,
    /// Signs a person in when the engine has no tokens (printed by `serve`).
    key: String,
}

/// 256 random bits in hex, or `None` when the OS has no randomness to give
/// (then nobody can sign in, rather than with a guessable id).
pub fn random_secret() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Equal without an early exit.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

impl Logins {
    pub fn new() -> Logins {
        Logins {
            logins: Mutex::new(HashMap::new()),
            key: random_secret().unwrap_or_default(),
        }
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether `key` is the UI key.
    pub fn key_matches(&self, key: &str) -> bool {
        !self.key.is_empty() && same(key, &self.key)
    }

    /// Signs in with `grant`; the new login's id.
    pub fn sign_in(&self, grant: Grant, who: String, any_user: bool) -> Option<String> {
        let id = random_secret()?;
        let mut logins = self.logins.lock();
        logins.retain(|_, l| l.last_used.elapsed() < LOGIN_IDLE);
        if logins.len() >= MAX_LOGINS
            && let Some(oldest) = logins
                .iter()
                .min_by_key(|(_, l)| l.last_used)
                .map(|(id, _)| id.clone())
        {
            logins.remove(&oldest);
        }
        logins.insert(
            id.clone(),
            Login {
                viewer: Viewer {
                    grant,
                    who,
                    as_user: None,
                    any_user,
                },
                last_used: Instant::now(),
            },
        );
        Some(id)
    }

    /// Whether login `id` is still live (streams end when it is not).
    pub fn signed_in(&self, id: &str) -> bool {
        self.logins
            .lock()
            .get(id)
            .is_some_and(|l| l.last_used.elapsed() < LOGIN_IDLE)
    }

    pub fn sign_out(&self, id: &str) {
        self.logins.lock().remove(id);
    }

    /// The person behind the request's login cookie, if it is a live login.
    pub fn viewer(&self, headers: &HeaderMap) -> Option<(String, Viewer)> {
        let id = login_cookie(headers)?;
        let mut logins = self.logins.lock();
        let login = logins.get_mut(&id)?;
        if login.last_used.elapsed() >= LOGIN_IDLE {
            logins.remove(&id);
            return None;
        }
        login.last_used = Instant::now();
        Some((id, login.viewer.clone()))
    }

    /// Looks at `user`'s sessions from now on (a grant that may name any).
    pub fn view_as(&self, id: &str, user: Option<String>) {
        if let Some(login) = self.logins.lock().get_mut(id) {
            login.viewer.as_user = user;
        }
    }
}

/// The cookie's name: one per port, since cookies ignore ports and two
/// engines on one machine must not sign each other's people out.
pub fn cookie_name(headers: &HeaderMap) -> String {
    let port = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.rsplit_once(':'))
        .map(|(_, p)| p)
        .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or("80");
    format!("wabp_ui_{port}")
}

fn login_cookie(headers: &HeaderMap) -> Option<String> {
    let name = cookie_name(headers);
    headers
        .get_all("cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// `Set-Cookie` for a login id (`None`: the cookie is removed).
pub fn set_cookie(headers: &HeaderMap, id: Option<&str>) -> String {
    let name = cookie_name(headers);
    match id {
        Some(id) => format!("{name}={id}; Path=/ui; HttpOnly; SameSite=Strict"),
        None => format!("{name}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_is_found_by_its_cookie_on_its_port_only() {
        let logins = Logins::new();
        assert_eq!(logins.key().len(), 64);
        let grant = wabp_api::Tokens::new(None).authenticate(None).unwrap();
        let id = logins.sign_in(grant, "local".into(), true).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("host", "127.0.0.1:8222".parse().unwrap());
        headers.insert(
            "cookie",
            format!("other=1; wabp_ui_8222={id}").parse().unwrap(),
        );
        assert_eq!(logins.viewer(&headers).unwrap().1.who, "local");
        headers.insert("host", "127.0.0.1:8223".parse().unwrap());
        assert!(logins.viewer(&headers).is_none());
        headers.insert("host", "127.0.0.1:8222".parse().unwrap());
        assert!(logins.signed_in(&id));
        logins.sign_out(&id);
        assert!(logins.viewer(&headers).is_none());
        assert!(!logins.signed_in(&id));
        assert!(!logins.key_matches(""));
        assert!(logins.key_matches(&logins.key().to_string()));
    }
}
