#!/usr/bin/env python3
"""Drives wabp's MCP server with the official Python SDK (`mcp` on PyPI).

    python tests/mcp_python_client.py http URL PAGE
    python tests/mcp_python_client.py stdio WABP_BINARY PAGE [wabp mcp args...]

Connects twice, once with the initialize handshake (mode "legacy") and once
the 2026-07-28 way (mode "auto": server/discover), and on each connection
lists the tools, opens a tab, navigates to PAGE, clicks its #btn (which
writes "clicked" into #out), takes a screenshot, checks that a bad call comes
back as an `isError` result, and closes the tab. Prints one JSON line per connection and exits non-zero at the
first thing that is not as expected. tests/mcp.rs runs it.
"""

import asyncio
import base64
import json
import logging
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters

WANTED_TOOLS = {
    "browser_navigate",
    "browser_click",
    "browser_screenshot",
    "browser_new_tab",
    "browser_close_tab",
    "browser_execute_javascript",
    "browser_snapshot",
    "screenshot",
}


class Warnings(logging.Handler):
    """Keeps the SDK's warnings: a session that doesn't end cleanly shows up there."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = []

    def emit(self, record):
        self.seen.append(record.getMessage())


WARNINGS = Warnings()
logging.getLogger("mcp").addHandler(WARNINGS)


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def texts(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


def images(result):
    return [block for block in result.content if block.type == "image"]


def is_webp(block):
    data = base64.b64decode(block.data)
    return block.mime_type == "image/webp" and data[:4] == b"RIFF" and data[8:12] == b"WEBP"


async def call_ok(client, name, arguments):
    result = await client.call_tool(name, arguments)
    if result.is_error:
        fail(f"{name} answered isError: {texts(result)}")
    return result


def action_envelope(result, what):
    shots = images(result)
    if len(shots) != 2 or not all(is_webp(s) for s in shots):
        fail(f"{what}: wanted before and after WebP images, got {[s.mime_type for s in shots]}")
    if [block.type for block in result.content[:3]] != ["text", "image", "image"]:
        fail(f"{what}: the text must come first, then the images")
    envelope = json.loads(texts(result))
    if "result" not in envelope or "data" in envelope.get("screenshot_after", {}):
        fail(f"{what}: envelope {envelope}")
    return envelope


async def session(server, mode, page):
    async with Client(server, mode=mode, read_timeout_seconds=120) as client:
        tools = set()
        cursor = None
        while True:
            listed = await client.list_tools(cursor=cursor)
            tools.update(tool.name for tool in listed.tools)
            cursor = listed.next_cursor
            if not cursor:
                break
        missing = WANTED_TOOLS - tools
        if missing:
            fail(f"tools missing: {sorted(missing)}")

        tab = json.loads(texts(await call_ok(client, "browser_new_tab", {"active": False})))["id"]
        navigated = action_envelope(
            await call_ok(client, "browser_navigate", {"tab_id": tab, "url": page}), "navigate"
        )
        clicked = action_envelope(
            await call_ok(client, "browser_click", {"tab_id": tab, "selector": "#btn"}), "click"
        )
        text = await call_ok(
            client,
            "browser_execute_javascript",
            {"tab_id": tab, "expression": "document.querySelector('#out').textContent"},
        )
        if "clicked" not in texts(text):
            fail(f"the click did not reach the page: {texts(text)}")
        shot = await call_ok(client, "browser_screenshot", {"tab_id": tab})
        if not images(shot) or not all(is_webp(s) for s in images(shot)):
            fail("browser_screenshot returned no WebP image")

        bad = await client.call_tool("browser_click", {"tab_id": tab, "selector": "#no-such-thing"})
        if not bad.is_error or "SELECTOR_NOT_FOUND" not in texts(bad):
            fail(f"a click on a missing element should be an isError result: {texts(bad)}")
        await call_ok(client, "browser_close_tab", {"tab_id": tab})
        print(
            json.dumps(
                {
                    "mode": mode,
                    "protocol": client.protocol_version,
                    "server": client.server_info.name if client.server_info else None,
                    "tools": len(tools),
                    "navigate_events": [e["type"] for e in navigated.get("events", [])],
                    "click_result": clicked["result"],
                }
            ),
            flush=True,
        )


async def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("http", "stdio"):
        fail(__doc__)
    transport, where, page = sys.argv[1:4]
    for mode in ("legacy", "auto"):
        if transport == "http":
            server = where
        else:
            server = StdioServerParameters(command=where, args=["mcp", *sys.argv[4:]])
        await asyncio.wait_for(session(server, mode, page), timeout=300)
        if WARNINGS.seen:
            fail(f"the SDK warned ({mode}, {transport}): {WARNINGS.seen}")


asyncio.run(main())
