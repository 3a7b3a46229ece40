#!/usr/bin/env python3
"""A walk through wabp's REST API with nothing but the Python standard library.

    python3 examples/rest_walkthrough.py [API] [URL]

API defaults to http://127.0.0.1:8222/api/v1 (a running `wabp serve`), URL to
https://example.com. It waits for the engine, opens a tab, navigates, reads
the page, clicks the first button or link, saves the after-screenshot as
walkthrough.webp, and closes the tab. Exits non-zero on any error answer.
"""

import base64
import json
import sys
import time
import urllib.error
import urllib.request

API = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8222/api/v1"
URL = sys.argv[2] if len(sys.argv) > 2 else "https://example.com"


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(API + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        sys.exit(f"{method} {path} -> {error.code}: {error.read().decode()}")


# 1. Wait until the browser is up.
for _ in range(100):
    _, status = call("GET", "/browser/status")
    if status["data"]["ready"]:
        break
    time.sleep(0.2)
print("engine ready, frame driver:", status["data"].get("frame_driver"))

# 2. A tab of our own (201), then navigate; the envelope has both screenshots.
code, tab = call("POST", "/tabs", {})
assert code == 201, code
tab_id = tab["id"]
_, envelope = call("POST", f"/tabs/{tab_id}/navigate", {"url": URL})
print("navigated:", envelope["result"], "events:", [e["type"] for e in envelope["events"]])

# 3. Read it: title by script, text by selector.
_, title = call("POST", f"/tabs/{tab_id}/execute", {"script": "document.title"})
_, heading = call("POST", f"/tabs/{tab_id}/text", {"selector": "h1"})
print("title:", title["result"]["value"], "| h1:", heading["text"])

# 4. Click the first button or link, found by script, at its centre.
_, point = call("POST", f"/tabs/{tab_id}/execute", {"script": (
    "(() => { const el = document.querySelector('button, a[href]'); if (!el) return null;"
    " const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")})
if point["result"]["value"]:
    x, y = point["result"]["value"]
    _, envelope = call("POST", f"/tabs/{tab_id}/click", {"x": x, "y": y})
    print("clicked at", (round(x), round(y)), "events:", [e["type"] for e in envelope["events"]],
          "wait ended by:", envelope["timing"]["wait_reason"])

# 5. The after-screenshot is a WebP with markup drawn on it.
shot = envelope["screenshot_after"]
with open("walkthrough.webp", "wb") as out:
    out.write(base64.b64decode(shot["data"]))
print(f"saved walkthrough.webp ({shot['width']}x{shot['height']}, virtual time {shot['virtual_time_ms']})")

call("DELETE", f"/tabs/{tab_id}")
print("done")
