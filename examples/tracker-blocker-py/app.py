"""tracker-blocker-py: the tracker blocker in Python, doing what the Rust
example (examples/tracker-blocker) does, and passing the same test.

- A request to a known tracking host, or to a tracking path (/analytics/,
  /collect, /pixel, /beacon, /track) of another site than the tab's, is
  blocked. A blocked script is answered with an empty one instead, so a page
  that waits for it to load goes on.
- Every other request goes on with Sec-GPC: 1 (Global Privacy Control).
"""

from urllib.parse import urlsplit

from wabp_plugin import InterceptorPlugin, abort, fulfill, proceed

TRACKER_HOSTS = (
    "google-analytics.com",
    "googletagmanager.com",
    "doubleclick.net",
    "connect.facebook.net",
    "hotjar.com",
    "segment.io",
    "scorecardresearch.com",
)

TRACKING_PATHS = ("/analytics/", "/collect", "/pixel", "/beacon", "/track")


def within(host: str, domain: str) -> bool:
    """`host` is `domain` or one of its subdomains."""
    return host == domain or host.endswith("." + domain)


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


class Interceptor(InterceptorPlugin):
    def handle(self, request):
        host = host_of(request.url)
        known = any(within(host, tracker) for tracker in TRACKER_HOSTS)
        third_party = host_of(request.tab_url) not in ("", host)
        parts = urlsplit(request.url)
        path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        tracking_path = third_party and any(p in path for p in TRACKING_PATHS)
        if not (known or tracking_path):
            return proceed({"Sec-GPC": "1"})
        if request.resource_type == "Script":
            return fulfill(200, "/* blocked by tracker-blocker-py */", {"Content-Type": "text/javascript"})
        return abort(f"tracker: {host}")
