//! Aleph's `browser` tool over REST (`POST /browser-tool`) and MCP, against
//! real Chromium: an engine started without a browser, the "not running"
//! answers, start and stop, every action of the table, the launch modes
//! (auto, binary, connect to a Chromium this test starts), and approval
//! policies seeing each action's own category.

mod common;

use std::os::unix::process::CommandExt;
use std::time::Duration;

use base64::Engine as _;
use common::{Harness, block_on};
use serde_json::{Value, json};

const NOT_RUNNING: &str = "Browser is not running. Use action 'start' to launch a browser first.";

/// An engine of this binary's own, started with `--no-browser`.
fn harness() -> (&'static Harness, std::sync::RwLockWriteGuard<'static, ()>) {
    static H: std::sync::OnceLock<Harness> = std::sync::OnceLock::new();
    let (base, guard) = common::exclusive();
    let h = H.get_or_init(|| {
        block_on(async {
            let server = common::start_server_with(common::temp_dir("tool-plugins"), |o| {
                o.browser_at_start = false;
            })
            .await;
            base.with_server(server)
        })
    });
    (h, guard)
}

async fn tool(h: &Harness, call: Value) -> Value {
    let (status, answer) = h.post("/browser-tool", call.clone()).await;
    assert_eq!(status, 200, "{call}: {answer}");
    assert!(
        answer["success"].is_boolean() && answer["message"].is_string(),
        "{answer}"
    );
    answer
}

async fn ok(h: &Harness, call: Value) -> Value {
    let answer = tool(h, call.clone()).await;
    assert_eq!(answer["success"], true, "{call}: {answer}");
    answer
}

fn flatten(elements: &Value, out: &mut Vec<Value>) {
    for e in elements.as_array().into_iter().flatten() {
        out.push(e.clone());
        flatten(&e["children"], out);
    }
}

fn ref_of(snapshot: &Value, role: &str, name: &str) -> String {
    let mut all = Vec::new();
    flatten(&snapshot["data"]["elements"], &mut all);
    all.iter()
        .find(|e| e["role"] == role && e["name"] == name)
        .and_then(|e| e["ref_id"].as_str())
        .unwrap_or_else(|| panic!("no {role} {name:?} in {snapshot}"))
        .to_string()
}

fn image(answer: &Value) -> (Vec<u8>, u64, u64) {
    let data = &answer["data"];
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data["data_base64"].as_str().unwrap())
        .unwrap();
    (
        bytes,
        data["width"].as_u64().unwrap(),
        data["height"].as_u64().unwrap(),
    )
}

#[test]
fn the_whole_action_table_between_start_and_stop() {
    let (h, _g) = harness();
    block_on(async {
        // Whatever another test left running.
        ok(h, json!({"action": "stop"})).await;
        let (_, status) = h.get("/browser/status").await;
        assert_eq!(status["data"]["state"], "stopped", "{status}");
        for call in [
            json!({"action": "list_tabs"}),
            json!({"action": "snapshot", "tab_id": "x"}),
            json!({"action": "open_tab", "url": h.url("/form")}),
        ] {
            let answer = tool(h, call).await;
            assert_eq!(answer, json!({"success": false, "message": NOT_RUNNING}));
        }
        let (status, answer) = h.post("/tabs", json!({})).await;
        assert_eq!(status, 503, "{answer}");
        let stopped = ok(h, json!({"action": "stop"})).await;
        assert_eq!(stopped["message"], "Browser is not running.");

        let started = ok(h, json!({"action": "start", "headless": true})).await;
        assert_eq!(started["message"], "Browser started successfully.");
        assert_eq!(started["data"]["headless"], true);
        assert_eq!(started["data"]["mode"], "auto");
        let again = ok(h, json!({"action": "start"})).await;
        assert_eq!(again["message"], "Browser is already running.");
        let other = tool(h, json!({"action": "start", "headless": false})).await;
        assert_eq!(other["success"], false);
        assert!(
            other["message"]
                .as_str()
                .unwrap()
                .contains("already running"),
            "{other}"
        );

        let opened = ok(h, json!({"action": "open_tab", "url": h.url("/form")})).await;
        let tab = opened["data"]["tab_id"].as_str().unwrap().to_string();
        let tabs = ok(h, json!({"action": "list_tabs"})).await;
        assert!(
            tabs["data"]["tabs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["tab_id"] == tab.as_str()),
            "{tabs}"
        );

        let snapshot = ok(h, json!({"action": "snapshot", "tab_id": tab})).await;
        assert_eq!(snapshot["data"]["page_title"], "Form");
        assert!(
            snapshot["data"]["page_url"]
                .as_str()
                .unwrap()
                .ends_with("/form")
        );
        let email = ref_of(&snapshot, "textbox", "Email");
        let submit = ref_of(&snapshot, "button", "Submit");
        let heading = ref_of(&snapshot, "heading", "Sign up");

        let filled = ok(
            h,
            json!({"action": "fill", "tab_id": tab, "ref_id": email, "text": "a@b.c"}),
        )
        .await;
        assert_eq!(filled["message"], "Filled.");
        assert!(filled["data"]["action_id"].is_string(), "{filled}");
        let typed = ok(
            h,
            json!({"action": "type", "tab_id": tab, "selector": "#name", "text": "!"}),
        )
        .await;
        assert_eq!(typed["message"], "Typed.");
        let value = ok(h, json!({"action": "evaluate", "tab_id": tab, "js": "document.getElementById('name').value"})).await;
        assert_eq!(value["message"], "Ada!");
        assert_eq!(value["data"]["value"], "Ada!");
        let clicked = ok(
            h,
            json!({"action": "click", "tab_id": tab, "ref_id": submit}),
        )
        .await;
        assert_eq!(clicked["message"], "Clicked.");
        let out = ok(h, json!({"action": "evaluate", "tab_id": tab, "js": "document.getElementById('out').textContent"})).await;
        assert_eq!(out["message"], "submitted a@b.c");
        let hovered = ok(
            h,
            json!({"action": "hover", "tab_id": tab, "ref_id": heading}),
        )
        .await;
        assert_eq!(hovered["message"], "Hovered.");
        let scrolled = ok(
            h,
            json!({"action": "scroll", "tab_id": tab, "direction": "down"}),
        )
        .await;
        assert_eq!(scrolled["message"], "Scrolled down.");
        let y = ok(
            h,
            json!({"action": "evaluate", "tab_id": tab, "js": "scrollY"}),
        )
        .await;
        assert_eq!(y["data"]["value"], 300, "{y}");

        // Screenshots: PNG by default, JPEG and WebP on request, the whole page.
        let shot = ok(h, json!({"action": "screenshot", "tab_id": tab})).await;
        let (png, w, hgt) = image(&shot);
        assert_eq!(shot["data"]["format"], "png");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!((w, hgt), (1280, 720));
        let jpeg = ok(
            h,
            json!({"action": "screenshot", "tab_id": tab, "format": "jpeg", "quality": 50}),
        )
        .await;
        assert_eq!(&image(&jpeg).0[..2], b"\xff\xd8");
        let webp = ok(
            h,
            json!({"action": "screenshot", "tab_id": tab, "format": "webp"}),
        )
        .await;
        assert_eq!(&image(&webp).0[8..12], b"WEBP");
        let full = ok(
            h,
            json!({"action": "screenshot", "tab_id": tab, "full_page": true}),
        )
        .await;
        let (_, fw, fh) = image(&full);
        assert_eq!(fw, 1280);
        assert!(fh > 2400, "{fh}");

        // A ref of a page that is gone fails loudly, as a tool answer.
        let navigated = ok(
            h,
            json!({"action": "navigate", "tab_id": tab, "url": h.url("/")}),
        )
        .await;
        assert!(
            navigated["message"]
                .as_str()
                .unwrap()
                .starts_with("Navigated to ")
        );
        let stale = tool(
            h,
            json!({"action": "click", "tab_id": tab, "ref_id": submit}),
        )
        .await;
        assert_eq!(stale["success"], false);
        assert!(
            stale["message"].as_str().unwrap().contains("stale"),
            "{stale}"
        );

        // Calls that are not valid tool calls are the client's error.
        for bad in [
            json!({"action": "fly"}),
            json!({}),
            json!({"action": "click", "tab_id": tab}),
            json!({"action": "open_tab"}),
            json!({"action": "scroll", "tab_id": tab}),
            json!({"action": "screenshot", "tab_id": tab, "format": "bmp"}),
            json!({"action": "evaluate", "tab_id": tab}),
            json!({"action": "list_tabs", "bogus": 1}),
            json!({"action": "screenshot", "tab_id": tab, "quality": 0}),
        ] {
            let (status, answer) = h.post("/browser-tool", bad.clone()).await;
            assert_eq!(status, 400, "{bad}: {answer}");
            assert!(
                answer["error"].as_str().is_some_and(|e| !e.is_empty()),
                "{answer}"
            );
        }

        let (_, unknown) = h
            .post("/browser-tool", json!({"action": "list_tabs", "bogus": 1}))
            .await;
        assert!(
            unknown["error"].as_str().unwrap().contains("bogus"),
            "{unknown}"
        );
        let closed = ok(h, json!({"action": "close_tab", "tab_id": tab})).await;
        assert_eq!(closed["message"], format!("Closed tab {tab}."));
        let stopped = ok(h, json!({"action": "stop"})).await;
        assert_eq!(stopped["message"], "Browser stopped.");
        let after = tool(h, json!({"action": "list_tabs"})).await;
        assert_eq!(after["message"], NOT_RUNNING);
        // A start that can't launch says why, and leaves no browser.
        let failed = tool(h, json!({"action": "start", "mode": "binary"})).await;
        assert_eq!(failed["success"], false);
        assert!(
            failed["message"].as_str().unwrap().contains("\"path\""),
            "{failed}"
        );
        let failed = tool(
            h,
            json!({"action": "start", "mode": "binary", "path": "/nonexistent/chrome"}),
        )
        .await;
        assert_eq!(failed["success"], false);
        assert!(
            failed["message"]
                .as_str()
                .unwrap()
                .contains("/nonexistent/chrome"),
            "{failed}"
        );
        assert_eq!(
            tool(h, json!({"action": "list_tabs"})).await["message"],
            NOT_RUNNING
        );
        let (_, status) = h.get("/browser/status").await;
        assert_eq!(status["data"]["state"], "failed");
        assert!(
            status["data"]["message"]
                .as_str()
                .unwrap()
                .contains("/nonexistent/chrome"),
            "{status}"
        );
    });
}

#[test]
fn launch_modes_binary_connect_and_a_cdp_port() {
    let (h, _g) = harness();
    block_on(async {
        // binary: a named executable, a profile of our own, extra switches;
        // the anti-detection switches are added.
        let shell = [
            "/usr/bin/chromium-headless-shell",
            "/usr/lib/chromium/chromium-headless-shell",
        ]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("chromium-headless-shell");
        ok(h, json!({"action": "stop"})).await;
        let profile = common::temp_dir("tool-profile");
        let started = ok(
            h,
            json!({"action": "start", "mode": "binary", "path": shell, "headless": true,
                   "user_data_dir": profile, "extra_args": ["--user-agent=wabp-tool-test/1.0"]}),
        )
        .await;
        assert_eq!(started["data"]["mode"], "binary");
        let opened = ok(h, json!({"action": "open_tab", "url": h.url("/")})).await;
        let tab = opened["data"]["tab_id"].as_str().unwrap().to_string();
        let webdriver = ok(
            h,
            json!({"action": "evaluate", "tab_id": tab, "js": "navigator.webdriver"}),
        )
        .await;
        assert_eq!(webdriver["data"]["value"], false, "{webdriver}");
        let lang = ok(
            h,
            json!({"action": "evaluate", "tab_id": tab, "js": "navigator.userAgent"}),
        )
        .await;
        assert_eq!(lang["message"], "wabp-tool-test/1.0");
        ok(h, json!({"action": "stop"})).await;
        assert!(
            profile.join("Default").exists()
                || std::fs::read_dir(&profile).unwrap().next().is_some(),
            "the named profile is kept"
        );

        // auto with a cdp_port: other tools can attach to it.
        let port = common::free_port();
        ok(
            h,
            json!({"action": "start", "mode": "auto", "headless": true, "cdp_port": port}),
        )
        .await;
        let version = reqwest::get(format!("http://127.0.0.1:{port}/json/version"))
            .await
            .unwrap();
        assert_eq!(version.status(), 200);
        ok(h, json!({"action": "stop"})).await;

        // connect: a Chromium this test started; stop leaves it running.
        let port = common::free_port();
        let external_profile = common::temp_dir("tool-external");
        let mut chromium = std::process::Command::new(shell)
            .arg(format!("--remote-debugging-port={port}"))
            .arg(format!("--user-data-dir={}", external_profile.display()))
            .args(["--no-sandbox", "--headless", "about:blank"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            // A group of its own, to be stopped whole (see below).
            .process_group(0)
            .spawn()
            .unwrap();
        let up = common::eventually(Duration::from_secs(20), || async move {
            reqwest::get(format!("http://127.0.0.1:{port}/json/version"))
                .await
                .ok()
                .filter(|r| r.status() == 200)
        })
        .await;
        assert!(up.is_some(), "the external Chromium listens on {port}");
        let started = ok(
            h,
            json!({"action": "start", "mode": "connect", "cdp_port": port}),
        )
        .await;
        assert_eq!(started["data"]["mode"], "connect");
        let opened = ok(h, json!({"action": "open_tab", "url": h.url("/form")})).await;
        let tab = opened["data"]["tab_id"].as_str().unwrap().to_string();
        let title = ok(
            h,
            json!({"action": "evaluate", "tab_id": tab, "js": "document.title"}),
        )
        .await;
        assert_eq!(title["message"], "Form");
        ok(h, json!({"action": "stop"})).await;
        assert!(
            chromium.try_wait().unwrap().is_none(),
            "an attached browser is left running"
        );
        // The whole group: the launcher can be a script with the browser
        // (and its zygotes and renderers) under it, which would outlive it.
        let _ = std::process::Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", chromium.id())])
            .status();
        let _ = chromium.kill();
        let _ = chromium.wait();
    });
}

#[test]
fn policies_see_each_action_with_its_own_category() {
    let (base, _g) = common::exclusive();
    block_on(async {
        let policy = common::temp_dir("tool-policy").join("policy.toml");
        std::fs::write(
            &policy,
            "ask = [\"script\"]\n\n[navigation]\ndeny = [\"blocked.invalid\"]\n",
        )
        .unwrap();
        let server = common::start_server_with(common::temp_dir("tool-policy-plugins"), |o| {
            o.policy_file = Some(policy);
        })
        .await;
        let h = base.with_server(server);
        let opened = ok(&h, json!({"action": "open_tab", "url": h.url("/form")})).await;
        let tab = opened["data"]["tab_id"].as_str().unwrap().to_string();
        let denied = tool(
            &h,
            json!({"action": "navigate", "tab_id": tab, "url": "http://blocked.invalid/"}),
        )
        .await;
        assert_eq!(denied["success"], false);
        assert!(
            denied["message"]
                .as_str()
                .unwrap()
                .starts_with("Action denied by approval policy: "),
            "{denied}"
        );
        // Reading needs no approval; script does, and an approval lets the
        // same call through.
        ok(&h, json!({"action": "snapshot", "tab_id": tab})).await;
        let asked = tool(
            &h,
            json!({"action": "evaluate", "tab_id": tab, "js": "1 + 1"}),
        )
        .await;
        assert_eq!(asked["success"], false, "{asked}");
        assert!(
            asked["message"]
                .as_str()
                .unwrap()
                .starts_with("Approval required: "),
            "{asked}"
        );
        assert_eq!(asked["data"]["approval_required"], true);
        let id = asked["data"]["approval_id"].as_str().unwrap().to_string();
        assert!(asked["data"]["prompt"].is_string());
        let (status, decided) = h
            .post(&format!("/approvals/{id}"), json!({"approve": true}))
            .await;
        assert_eq!(status, 200, "{decided}");
        let approved = ok(
            &h,
            json!({"action": "evaluate", "tab_id": tab, "js": "1 + 1", "approval_id": id}),
        )
        .await;
        assert_eq!(approved["data"]["value"], 2);
        h.server.app.shutdown(Duration::from_secs(5)).await;
    });
}
