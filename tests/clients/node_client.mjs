// Drives wabp the way JavaScript users do: Node's built-in fetch (undici,
// which sends `Sec-Fetch-Mode: cors` on every request) against the REST API,
// and the official TypeScript MCP SDK over Streamable HTTP and stdio.
//
//   node tests/clients/node_client.mjs rest API_BASE PAGE
//   node tests/clients/node_client.mjs mcp-http MCP_URL PAGE
//   node tests/clients/node_client.mjs mcp-stdio WABP_BINARY PAGE [wabp mcp args...]
//
// PAGE has a #btn that writes "clicked" into #out. Prints one JSON line with
// what it saw and exits non-zero at the first thing that is not as expected.
// tests/clients.rs runs it.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function fail(message) {
  console.error(`FAIL: ${message}`);
  process.exit(1);
}

async function rest(api, page) {
  const call = async (method, path, body) => {
    const init = { method, signal: AbortSignal.timeout(60_000) };
    if (body !== undefined) {
      init.headers = { "content-type": "application/json" };
      init.body = JSON.stringify(body);
    }
    const response = await fetch(api + path, init);
    const text = await response.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: response.status, body: json };
  };
  const expect = (answer, status, what) => {
    if (answer.status !== status) {
      fail(`${what}: wanted ${status}, got ${answer.status} ${JSON.stringify(answer.body)}`);
    }
    return answer.body;
  };
  const listed = expect(await call("GET", "/tabs"), 200, "GET /tabs");
  if (!Array.isArray(listed)) fail(`GET /tabs is not a list: ${JSON.stringify(listed)}`);
  const tab = expect(await call("POST", "/tabs", {}), 201, "POST /tabs").id;
  const navigated = expect(
    await call("POST", `/tabs/${tab}/navigate`, { url: page }),
    200,
    "navigate",
  );
  const clicked = expect(
    await call("POST", `/tabs/${tab}/click`, { selector: "#btn" }),
    200,
    "click",
  );
  const out = expect(
    await call("POST", `/tabs/${tab}/execute`, {
      script: "document.querySelector('#out').textContent",
    }),
    200,
    "execute",
  );
  const bad = await call("POST", `/tabs/${tab}/navigate`, {});
  if (bad.status !== 400 || typeof bad.body.error !== "string") {
    fail(`a navigate without url: wanted 400 with an error, got ${bad.status} ${JSON.stringify(bad.body)}`);
  }
  const shot = await fetch(`${api}/tabs/${tab}/screenshot`);
  const bytes = new Uint8Array(await shot.arrayBuffer());
  const webp =
    shot.status === 200 &&
    String.fromCharCode(...bytes.slice(0, 4)) === "RIFF" &&
    String.fromCharCode(...bytes.slice(8, 12)) === "WEBP";
  expect(await call("DELETE", `/tabs/${tab}`), 200, "DELETE /tabs/{id}");
  return {
    client: "node-fetch",
    navigate_events: (navigated.events ?? []).map((e) => e.type),
    click_result: clicked.result,
    page_out: out.result?.value,
    bad_input_error: bad.body.error,
    screenshot_webp: webp,
  };
}

function texts(result) {
  return result.content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

async function callOk(client, name, args) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  if (result.isError) fail(`${name} answered isError: ${texts(result)}`);
  return result;
}

function isWebp(block) {
  const data = Buffer.from(block.data, "base64");
  return (
    block.mimeType === "image/webp" &&
    data.subarray(0, 4).toString() === "RIFF" &&
    data.subarray(8, 12).toString() === "WEBP"
  );
}

async function mcp(transport, page, name) {
  const client = new Client({ name: "wabp-node-test", version: "1.0.0" });
  await client.connect(transport);
  const tools = new Set();
  let cursor;
  do {
    const listed = await client.listTools(cursor ? { cursor } : undefined);
    for (const tool of listed.tools) tools.add(tool.name);
    cursor = listed.nextCursor;
  } while (cursor);
  for (const wanted of ["browser_new_tab", "browser_navigate", "browser_click", "browser_close_tab"]) {
    if (!tools.has(wanted)) fail(`tool ${wanted} missing from ${[...tools]}`);
  }
  const tab = JSON.parse(texts(await callOk(client, "browser_new_tab", { active: false }))).id;
  const navigated = await callOk(client, "browser_navigate", { tab_id: tab, url: page });
  const clicked = await callOk(client, "browser_click", { tab_id: tab, selector: "#btn" });
  const images = clicked.content.filter((block) => block.type === "image");
  if (images.length !== 2 || !images.every(isWebp)) {
    fail(`click: wanted before and after WebP images, got ${images.map((i) => i.mimeType)}`);
  }
  const out = await callOk(client, "browser_execute_javascript", {
    tab_id: tab,
    expression: "document.querySelector('#out').textContent",
  });
  const bad = await client.callTool({
    name: "browser_click",
    arguments: { tab_id: tab, selector: "#no-such-thing" },
  });
  if (!bad.isError) fail(`a click on a missing element should be an isError result: ${texts(bad)}`);
  await callOk(client, "browser_close_tab", { tab_id: tab });
  const server = client.getServerVersion();
  await client.close();
  return {
    client: name,
    server: server?.name,
    tools: tools.size,
    navigate_events: JSON.parse(texts(navigated)).events.map((e) => e.type),
    click_result: JSON.parse(texts(clicked)).result,
    page_out: texts(out),
  };
}

const [mode, where, page, ...rest_args] = process.argv.slice(2);
if (!mode || !where || !page) fail("usage: node_client.mjs rest|mcp-http|mcp-stdio WHERE PAGE [args...]");
const timer = setTimeout(() => fail("did not finish within 300 s"), 300_000);
let report;
if (mode === "rest") {
  report = await rest(where, page);
} else if (mode === "mcp-http") {
  report = await mcp(new StreamableHTTPClientTransport(new URL(where)), page, "ts-sdk-http");
} else if (mode === "mcp-stdio") {
  const transport = new StdioClientTransport({ command: where, args: ["mcp", ...rest_args], stderr: "inherit" });
  report = await mcp(transport, page, "ts-sdk-stdio");
} else {
  fail(`unknown mode ${mode}`);
}
clearTimeout(timer);
console.log(JSON.stringify(report));
