#!/usr/bin/env python3
"""Drives wabp's REST API with the Python HTTP clients people use.

    python tests/clients/python_rest_client.py requests|httpx API_BASE PAGE

PAGE has a #btn that writes "clicked" into #out. Opens a tab, navigates,
clicks, reads #out back, checks that a bad request answers 400 with an error,
fetches the WebP screenshot, closes the tab. Prints one JSON line and exits
non-zero at the first thing that is not as expected. tests/clients.rs runs it.
"""

import json
import sys


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("requests", "httpx"):
        fail(__doc__)
    library, api, page = sys.argv[1:4]
    if library == "requests":
        import requests

        session = requests.Session()
    else:
        import httpx

        session = httpx.Client()

    def call(method, path, body=None):
        kwargs = {"timeout": 60}
        if body is not None:
            kwargs["json"] = body
        response = session.request(method, api + path, **kwargs)
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, response.text

    def expect(answer, status, what):
        if answer[0] != status:
            fail(f"{what}: wanted {status}, got {answer[0]} {answer[1]}")
        return answer[1]

    listed = expect(call("GET", "/tabs"), 200, "GET /tabs")
    if not isinstance(listed, list):
        fail(f"GET /tabs is not a list: {listed}")
    tab = expect(call("POST", "/tabs", {}), 201, "POST /tabs")["id"]
    navigated = expect(call("POST", f"/tabs/{tab}/navigate", {"url": page}), 200, "navigate")
    clicked = expect(call("POST", f"/tabs/{tab}/click", {"selector": "#btn"}), 200, "click")
    out = expect(
        call("POST", f"/tabs/{tab}/execute", {"script": "document.querySelector('#out').textContent"}),
        200,
        "execute",
    )
    status, bad = call("POST", f"/tabs/{tab}/navigate", {})
    if status != 400 or not isinstance(bad, dict) or not isinstance(bad.get("error"), str):
        fail(f"a navigate without url: wanted 400 with an error, got {status} {bad}")
    shot = session.get(f"{api}/tabs/{tab}/screenshot", timeout=60)
    webp = shot.status_code == 200 and shot.content[:4] == b"RIFF" and shot.content[8:12] == b"WEBP"
    expect(call("DELETE", f"/tabs/{tab}"), 200, "DELETE /tabs/{id}")
    print(
        json.dumps(
            {
                "client": f"python-{library}",
                "navigate_events": [e["type"] for e in navigated.get("events", [])],
                "click_result": clicked["result"],
                "page_out": out["result"]["value"],
                "bad_input_error": bad["error"],
                "screenshot_webp": webp,
            }
        ),
        flush=True,
    )


main()
