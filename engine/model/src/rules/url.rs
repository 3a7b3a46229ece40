//! Which URLs a tab may be sent to. Checked before the browser sees them:
//! `file:` would show the machine's files to whoever drives the engine,
//! `javascript:` runs script outside the action loop (and hangs it), and
//! `chrome:` pages are the browser's own settings.

use crate::error::{Error, Result, cut};

/// Chromium's own limit on a URL's length.
pub const MAX_URL_CHARS: usize = 2 * 1024 * 1024;

/// Ports Chromium refuses to load (`net::ERR_UNSAFE_PORT`): mail, shell,
/// printer and other services a page must not talk to.
const UNSAFE_PORTS: &[u16] = &[
    0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101,
    102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427,
    465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990,
    993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667,
    6668, 6669, 6697, 10080,
];

/// The addresses the engine itself serves on (its API and web UI). Pages
/// it drives may not be sent there: a tab on the engine's own address would
/// be same-origin with its web UI, and a navigation the engine makes
/// carries no sign of who asked for it (`Sec-Fetch-Site: none`).
#[derive(Debug, Clone, Default)]
pub struct OwnAddresses(std::sync::Arc<std::sync::RwLock<Vec<std::net::SocketAddr>>>);

impl OwnAddresses {
    /// Adds an address the engine now listens on.
    pub fn add(&self, address: std::net::SocketAddr) {
        if let Ok(mut all) = self.0.write() {
            all.push(address);
        }
    }

    /// URL patterns (URLPattern syntax, for `Network.setBlockedURLs`) that
    /// match the addresses under the names a page would use.
    pub fn block_patterns(&self) -> Vec<String> {
        let Ok(all) = self.0.read() else {
            return Vec::new();
        };
        let mut patterns = Vec::new();
        for own in all.iter() {
            let port = own.port();
            let mut hosts = vec![match own.ip() {
                std::net::IpAddr::V4(ip) => ip.to_string(),
                std::net::IpAddr::V6(ip) => format!("\\[{}\\]", ip.to_string().replace(':', "\\:")),
            }];
            if own.ip().is_loopback() || own.ip().is_unspecified() {
                hosts.extend([
                    "127.0.0.1".into(),
                    "localhost".into(),
                    "\\[\\:\\:1\\]".into(),
                ]);
            }
            for host in hosts {
                for scheme in ["http", "https", "ws", "wss"] {
                    let pattern = format!("{scheme}://{host}:{port}/*");
                    if !patterns.contains(&pattern) {
                        patterns.push(pattern);
                    }
                }
            }
        }
        patterns
    }

    /// Refuses a URL that points at one of the addresses (`localhost`,
    /// `127.1` and `2130706433` name 127.0.0.1 as well).
    pub fn check(&self, url: &str) -> Result<()> {
        use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
        let Ok(all) = self.0.read() else {
            return Ok(());
        };
        if all.is_empty() {
            return Ok(());
        }
        let Ok(parsed) = url::Url::parse(url.trim()) else {
            return Ok(());
        };
        if !matches!(parsed.scheme(), "http" | "https" | "ws" | "wss") {
            return Ok(());
        }
        let ip = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
            Some(url::Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                if name == "localhost" || name.ends_with(".localhost") {
                    IpAddr::V4(Ipv4Addr::LOCALHOST)
                } else {
                    return Ok(());
                }
            }
            None => return Ok(()),
        };
        let Some(port) = parsed.port_or_known_default() else {
            return Ok(());
        };
        let local = |ip: IpAddr| ip.is_loopback() || ip.is_unspecified();
        let ours = all.iter().any(|own| {
            own.port() == port
                && (own.ip() == ip
                    || (local(ip) && (own.ip().is_unspecified() || own.ip().is_loopback()))
                    || (own.ip().is_unspecified() && ip != IpAddr::V6(Ipv6Addr::UNSPECIFIED)))
        });
        if ours {
            return Err(Error::invalid(format!(
                "{} is this engine's own address: pages it drives may not open its API or web UI",
                cut(url)
            )));
        }
        Ok(())
    }
}

/// [`check_url`], and for a page to open: not on a port the browser
/// refuses.
pub fn check_navigation_url(url: &str, extra: &[String]) -> Result<()> {
    check_url(url, extra)?;
    if let Ok(parsed) = url::Url::parse(url.trim())
        && matches!(parsed.scheme(), "http" | "https")
        && let Some(port) = parsed.port()
        && UNSAFE_PORTS.contains(&port)
    {
        return Err(Error::invalid(format!(
            "port {port} is one the browser refuses to load (net::ERR_UNSAFE_PORT): {}",
            cut(url)
        )));
    }
    Ok(())
}

/// Schemes every engine allows; `about:` only as `about:blank`.
const ALWAYS: [&str; 3] = ["http", "https", "data"];

/// Accepts `http`, `https`, `data:` and `about:blank`, plus the schemes in
/// `extra` (`--allow-scheme`, lowercase, without the colon).
pub fn check_url(url: &str, extra: &[String]) -> Result<()> {
    if url.is_empty() {
        return Err(Error::invalid("url must not be empty"));
    }
    if url.len() > MAX_URL_CHARS {
        return Err(Error::invalid(format!(
            "url is {} bytes long; the limit is {MAX_URL_CHARS}",
            url.len()
        )));
    }
    let trimmed = url.trim();
    let scheme = trimmed
        .split_once(':')
        .map(|(s, _)| s)
        .filter(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        })
        .ok_or_else(|| {
            let url = cut(url);
            Error::invalid(format!("url {url:?} has no scheme; use e.g. https://{url}"))
        })?
        .to_ascii_lowercase();
    if scheme == "http" || scheme == "https" {
        let parsed = url::Url::parse(trimmed)
            .map_err(|e| Error::invalid(format!("url {:?} is not a valid URL: {e}", cut(url))))?;
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(Error::invalid(format!("url {:?} has no host", cut(url))));
        }
        return Ok(());
    }
    if ALWAYS.contains(&scheme.as_str()) || extra.iter().any(|e| e.eq_ignore_ascii_case(&scheme)) {
        return Ok(());
    }
    if scheme == "about" {
        let rest = &trimmed["about:".len()..];
        if rest.eq_ignore_ascii_case("blank") || rest.to_ascii_lowercase().starts_with("blank#") {
            return Ok(());
        }
    }
    Err(Error::invalid(format!(
        "url scheme \"{scheme}:\" is not allowed; tabs open http, https, data: and about:blank (the engine's --allow-scheme adds others)"
    )))
}

/// An absolute `http` or `https` URL with a host: what a request may name
/// as the page a cookie or a capture is for. `field` names it in the error.
pub fn http_url(text: &str, field: &str) -> Result<url::Url> {
    let parsed = url::Url::parse(text.trim()).map_err(|e| {
        Error::invalid(format!(
            "\"{field}\" is not an absolute URL ({e}): {:?}",
            cut(text)
        ))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none_or(str::is_empty) {
        return Err(Error::invalid(format!(
            "\"{field}\" must be an http or https URL with a host, got {:?}",
            cut(text)
        )));
    }
    Ok(parsed)
}

/// `url` as the browser will read it (WHATWG parsing: `\` as `/`, numeric
/// and IPv4-mapped addresses as dotted IPv4, IDNA, percent-escapes, no
/// trailing dot), so a policy can't be passed by spelling a host another way.
/// A URL that doesn't parse is handed over as it is (the operation refuses it).
pub fn canonical_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url.trim()) else {
        return url.to_string();
    };
    match parsed.host() {
        Some(url::Host::Ipv6(ip)) => {
            if let Some(v4) = ip.to_ipv4_mapped() {
                let _ = parsed.set_ip_host(std::net::IpAddr::V4(v4));
            }
        }
        Some(url::Host::Domain(domain)) if domain.ends_with('.') => {
            let bare = domain.trim_end_matches('.').to_string();
            let _ = parsed.set_host(Some(&bare));
        }
        _ => {}
    }
    parsed.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_urls_pass_local_and_script_urls_do_not() {
        for ok in [
            "http://127.0.0.1:8000/",
            "HTTPS://example.com",
            "data:text/html,<p>hi",
            "about:blank",
            "about:blank#x",
        ] {
            assert!(check_url(ok, &[]).is_ok(), "{ok}");
        }
        for bad in [
            "file:///etc/passwd",
            "FILE:///etc/passwd",
            "javascript:alert(1)",
            " javascript:alert(1)",
            "chrome://settings",
            "about:settings",
            "view-source:http://x",
            "example.com",
            "",
        ] {
            let e = check_url(bad, &[]).unwrap_err();
            assert_eq!(e.code, crate::ErrorCode::InvalidRequest, "{bad}");
        }
        assert!(check_url("file:///tmp/x.html", &["file".into()]).is_ok());
    }

    #[test]
    fn malformed_long_and_unsafe_urls_are_refused_with_a_short_message() {
        let huge = format!("http://[{}", "a".repeat(1_000_000));
        let e = check_url(&huge, &[]).unwrap_err();
        assert!(
            e.message.len() < 400,
            "the message quotes at most 200 characters"
        );
        let too_long = format!("http://x/{}", "a".repeat(MAX_URL_CHARS));
        assert!(
            check_url(&too_long, &[])
                .unwrap_err()
                .message
                .contains("limit")
        );
        for bad in ["http://", "https://exa mple.com/", "http://[::1"] {
            assert!(check_url(bad, &[]).is_err(), "{bad}");
        }
        assert!(check_navigation_url("http://127.0.0.1:25/", &[]).is_err());
        assert!(check_navigation_url("http://127.0.0.1:8080/", &[]).is_ok());
    }

    #[test]
    fn the_engines_own_address_is_refused_under_any_name() {
        let own = OwnAddresses::default();
        assert!(
            own.check("http://127.0.0.1:8222/ui/").is_ok(),
            "nothing served yet"
        );
        own.add("127.0.0.1:8222".parse().unwrap());
        for url in [
            "http://127.0.0.1:8222/ui/",
            "http://localhost:8222/api/v1/tabs",
            "http://127.1:8222/",
            "http://2130706433:8222/",
            "http://0x7f.1:8222/",
            "http://[::1]:8222/ui/",
            "ws://localhost:8222/",
            "http://app.localhost:8222/",
        ] {
            assert!(own.check(url).is_err(), "{url} should be refused");
        }
        for url in [
            "http://127.0.0.1:8223/",
            "http://example.com:8222/",
            "https://127.0.0.1/",
            "data:text/html,hi",
            "about:blank",
        ] {
            assert!(own.check(url).is_ok(), "{url} should be allowed");
        }
        assert!(
            check_url("http://127.0.0.1:25/", &[]).is_ok(),
            "curl may try it"
        );
    }
}
