//! Which URLs a tab may be sent to. Checked before the browser sees them:
//! `file:` would show the machine's files to whoever drives the engine,
//! `javascript:` runs script outside the action loop (and hangs it), and
//! `chrome:` pages are the browser's own settings.

use crate::error::{Error, Result};

/// Schemes every engine allows; `about:` only as `about:blank`.
const ALWAYS: [&str; 3] = ["http", "https", "data"];

/// Accepts `http`, `https`, `data:` and `about:blank`, plus the schemes in
/// `extra` (`--allow-scheme`, lowercase, without the colon).
pub fn check_url(url: &str, extra: &[String]) -> Result<()> {
    if url.is_empty() {
        return Err(Error::invalid("url must not be empty"));
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
            Error::invalid(format!("url {url:?} has no scheme; use e.g. https://{url}"))
        })?
        .to_ascii_lowercase();
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
}
