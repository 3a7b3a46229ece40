//! A request interceptor: blocks trackers, and sends every site the Global
//! Privacy Control signal.
//!
//! - A request to a known tracking host, or to a tracking path
//!   (`/analytics/`, `/collect`, `/pixel`, `/beacon`, `/track`) of another site
//!   than the tab's, is blocked. A blocked script is answered with an empty
//!   one instead, so a page that waits for it to load goes on.
//! - Every other request goes on with `Sec-GPC: 1`.

use wabp_plugin_sdk::{Header, InterceptedRequest, InterceptorPlugin, Outcome, PluginError, Response};

struct TrackerBlocker;

const TRACKER_HOSTS: &[&str] = &[
    "google-analytics.com",
    "googletagmanager.com",
    "doubleclick.net",
    "connect.facebook.net",
    "hotjar.com",
    "segment.io",
    "scorecardresearch.com",
];

const TRACKING_PATHS: &[&str] = &["/analytics/", "/collect", "/pixel", "/beacon", "/track"];

/// `host` is `domain` or one of its subdomains.
fn within(host: &str, domain: &str) -> bool {
    host == domain || host.strip_suffix(domain).is_some_and(|rest| rest.ends_with('.'))
}

/// The host of a URL, without port or credentials.
fn host_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    host.split(':').next()
}

fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("/", |i| &rest[i..])
}

impl InterceptorPlugin for TrackerBlocker {
    fn intercept(request: &InterceptedRequest) -> Result<Outcome, PluginError> {
        let host = request.host().unwrap_or_default();
        let known = TRACKER_HOSTS.iter().any(|t| within(host, t));
        let third_party = host_of(&request.tab_url).is_some_and(|tab| tab != host);
        let tracking_path = third_party && TRACKING_PATHS.iter().any(|p| path_of(&request.url).contains(p));
        if !(known || tracking_path) {
            return Ok(Outcome::Proceed(vec![Header { name: "Sec-GPC".into(), value: "1".into() }]));
        }
        if request.resource_type == "Script" {
            return Ok(Outcome::Fulfill(Response {
                status: 200,
                headers: vec![Header { name: "Content-Type".into(), value: "text/javascript".into() }],
                body: b"/* blocked by tracker-blocker */".to_vec(),
            }));
        }
        Ok(Outcome::Abort(format!("tracker: {host}")))
    }
}

wabp_plugin_sdk::export_interceptor_plugin!(TrackerBlocker);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_paths_are_read_from_urls() {
        assert_eq!(host_of("https://user@ads.example.com:8443/x?y"), Some("ads.example.com"));
        assert_eq!(path_of("http://a.b/analytics/collect?x=1"), "/analytics/collect?x=1");
        assert!(within("www.google-analytics.com", "google-analytics.com"));
        assert!(!within("notgoogle-analytics.com", "google-analytics.com"));
    }
}
