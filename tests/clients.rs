//! The engine as the clients people use meet it, each a real program run as
//! a child process against the real server and headless Chromium: Node's
//! built-in fetch and the official TypeScript MCP SDK (over Streamable HTTP
//! and stdio), Python's requests and httpx, and curl. Each opens a tab,
//! navigates, clicks, reads the page back, sends a bad request and closes
//! the tab (`tests/clients/`). A suite that spoke through one client would
//! hide what the others hit: every Node client was refused once, because
//! Node's fetch sends `Sec-Fetch-Mode: cors`.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{block_on, shared};
use serde_json::Value;

/// `WABP_TEST_NODE` (set by `scripts/test.sh` from `scripts/test-node.sh`),
/// else `node` on the PATH; the SDK must be installed in `tests/clients`.
fn node() -> PathBuf {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients/node_modules/@modelcontextprotocol/sdk/package.json");
    assert!(
        sdk.is_file(),
        "the TypeScript MCP SDK is missing: run `bash scripts/test-node.sh` (scripts/test.sh does)"
    );
    std::env::var_os("WABP_TEST_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("node"))
}

/// Runs a client to its end and parses the one JSON line it prints.
async fn run_client(program: &Path, args: &[&str]) -> Value {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .env("RUST_LOG", "warn")
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(300), command.output())
        .await
        .unwrap_or_else(|_| panic!("{program:?} {args:?} finished within 300 s"))
        .unwrap_or_else(|e| panic!("{program:?} starts: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(40).collect();
    assert!(
        output.status.success(),
        "{program:?} {args:?} failed\nstdout:\n{stdout}\nstderr (tail):\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?}: {e}\nstderr: {stderr}"))
}

fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// What every client must have seen: the navigation in the envelope, the
/// click landing on the page, a bad request answered 400 with its reason.
fn assert_drove_the_page(report: &Value) {
    assert_eq!(report["navigate_events"][0], "navigation", "{report}");
    assert_eq!(report["click_result"]["status"], "clicked", "{report}");
    assert!(
        report["page_out"]
            .as_str()
            .unwrap_or("")
            .contains("clicked"),
        "{report}"
    );
}

fn assert_rest_client(report: &Value) {
    assert_drove_the_page(report);
    assert!(
        report["bad_input_error"]
            .as_str()
            .is_some_and(|e| e.contains("url")),
        "the 400 names the missing field: {report}"
    );
    assert_eq!(report["screenshot_webp"], true, "{report}");
}

#[test]
fn node_fetch_drives_the_rest_api() {
    let (h, _g) = shared();
    block_on(async {
        let report = run_client(
            &node(),
            &[
                &script("node_client.mjs"),
                "rest",
                &h.server.api,
                &h.url("/"),
            ],
        )
        .await;
        assert_eq!(report["client"], "node-fetch");
        assert_rest_client(&report);
    });
}

#[test]
fn the_typescript_mcp_sdk_works_over_http_and_stdio() {
    let (h, _g) = shared();
    block_on(async {
        let mcp = h.server.api.replace("/api/v1", "/mcp");
        let page = h.url("/");
        let http = run_client(
            &node(),
            &[&script("node_client.mjs"), "mcp-http", &mcp, &page],
        )
        .await;
        assert_eq!(http["server"], "wabp", "{http}");
        assert!(http["tools"].as_u64().unwrap() >= 25, "{http}");
        assert_drove_the_page(&http);

        let engine_args = common::stdio_engine_args("clients-node-stdio");
        let mut args = vec![
            script("node_client.mjs"),
            "mcp-stdio".into(),
            env!("CARGO_BIN_EXE_wabp").into(),
            page.clone(),
        ];
        args.extend(engine_args);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let stdio = run_client(&node(), &args).await;
        assert_eq!(stdio["server"], "wabp", "{stdio}");
        assert_drove_the_page(&stdio);
    });
}

#[test]
fn python_requests_and_httpx_drive_the_rest_api() {
    let (h, _g) = shared();
    block_on(async {
        for library in ["requests", "httpx"] {
            let report = run_client(
                &common::test_python(),
                &[
                    &script("python_rest_client.py"),
                    library,
                    &h.server.api,
                    &h.url("/"),
                ],
            )
            .await;
            assert_eq!(report["client"], format!("python-{library}"));
            assert_rest_client(&report);
        }
    });
}

/// curl as the README's walk-through uses it (`--json`).
#[test]
fn curl_drives_the_rest_api() {
    let (h, _g) = shared();
    block_on(async {
        let api = &h.server.api;
        let curl = |args: Vec<String>| async move {
            let output = tokio::process::Command::new("curl")
                .args(["-sS", "--max-time", "60", "-w", "\n%{http_code}"])
                .args(&args)
                .output()
                .await
                .expect("curl runs");
            let text = String::from_utf8_lossy(&output.stdout).to_string();
            let (body, status) = text.rsplit_once('\n').unwrap();
            (
                status.parse::<u16>().unwrap(),
                serde_json::from_str::<Value>(body).unwrap_or(Value::String(body.into())),
            )
        };
        let (status, created) =
            curl(vec![format!("{api}/tabs"), "--json".into(), "{}".into()]).await;
        assert_eq!(status, 201, "{created}");
        let tab = created["id"].as_str().unwrap().to_string();
        let (status, navigated) = curl(vec![
            format!("{api}/tabs/{tab}/navigate"),
            "--json".into(),
            format!(r#"{{"url": "{}"}}"#, h.url("/")),
        ])
        .await;
        assert_eq!(status, 200, "{navigated}");
        let (status, clicked) = curl(vec![
            format!("{api}/tabs/{tab}/click"),
            "--json".into(),
            r##"{"selector": "#btn"}"##.into(),
        ])
        .await;
        assert_eq!(status, 200, "{clicked}");
        assert_eq!(clicked["result"]["status"], "clicked", "{clicked}");
        // A form post, as `curl -d` sends it, is not JSON: 415, with the reason.
        let (status, refused) = curl(vec![
            format!("{api}/tabs/{tab}/navigate"),
            "-d".into(),
            "url=x".into(),
        ])
        .await;
        assert_eq!(status, 415, "{refused}");
        assert!(
            refused["error"]
                .as_str()
                .unwrap()
                .contains("application/json")
        );
        let (status, _) = curl(vec![
            "-X".into(),
            "DELETE".into(),
            format!("{api}/tabs/{tab}"),
        ])
        .await;
        assert_eq!(status, 200);
    });
}
