//! The plugin host under fire, through the running engine: grants, traps,
//! deadlines, memory limits, hot reload and broken reloads. The engine keeps
//! serving through all of them.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{block_on, shared};
use serde_json::{Value, json};

/// Copies a built test plugin (`tests/plugins/<krate>`) into `dest/<folder>`.
fn install(krate: &str, dest: &Path, folder: &str) {
    let src = Path::new(wabp::TEST_PLUGINS_SRC).join(krate);
    let manifest = std::fs::read_to_string(src.join("plugin.toml")).unwrap();
    let component = manifest
        .lines()
        .find_map(|l| {
            l.split_once('=')
                .filter(|(k, _)| k.trim() == "component")
                .map(|(_, v)| v.trim().trim_matches('"').to_string())
        })
        .unwrap_or_else(|| "plugin.wasm".into());
    let built = Path::new(wabp::TEST_PLUGINS_DIR).join(format!("{}.wasm", krate.replace('-', "_")));
    let dir = dest.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    // The component first: the watcher reloads once the manifest is there.
    let staging = dir.join(".incoming");
    std::fs::copy(&built, &staging).unwrap_or_else(|e| panic!("{}: {e}", built.display()));
    std::fs::rename(&staging, dir.join(&component)).unwrap();
    std::fs::write(dir.join("plugin.toml"), manifest).unwrap();
}

fn setup(dir: &Path) {
    for krate in [
        "test-trap",
        "test-loop",
        "test-hog",
        "test-ungranted",
        "test-markup",
        "test-wait",
        "test-pointer",
        "test-counter",
    ] {
        install(krate, dir, krate);
    }
}

fn harness() -> (
    &'static common::Harness,
    std::sync::RwLockReadGuard<'static, ()>,
) {
    let _ = common::PLUGIN_SETUP.set(setup);
    shared()
}

async fn plugin_info(h: &common::Harness, name: &str) -> Option<Value> {
    let (_, list) = h.get("/plugins").await;
    list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .cloned()
}

async fn engine_still_serves(h: &common::Harness, tab: &str) {
    let (status, env) = h
        .post(
            &format!("/tabs/{tab}/click"),
            json!({ "x": 5, "y": 5, "screenshot": { "area": "none" } }),
        )
        .await;
    assert_eq!(status, 200, "engine keeps serving: {env}");
}

#[test]
fn ungranted_capability_is_refused_at_load() {
    let (h, _g) = harness();
    block_on(async {
        let info = plugin_info(h, "test-ungranted")
            .await
            .expect("listed even though refused");
        assert_eq!(info["status"], "failed", "{info}");
        let error = info["last_error"].as_str().unwrap();
        assert!(
            error.contains("wabp:plugin/input") && error.contains("does not grant"),
            "{error}"
        );
        let id = h.tab_on("/second").await;
        let (status, _) = h
            .post(&format!("/tabs/{id}/actions/sneaky_click"), json!({}))
            .await;
        assert_eq!(status, 404, "a refused plugin provides nothing");
    });
}

#[test]
fn a_trap_is_isolated_to_its_call() {
    let (h, _g) = harness();
    block_on(async {
        let id = h.tab_on("/second").await;
        let (status, err) = h
            .post(&format!("/tabs/{id}/actions/trap_now"), json!({}))
            .await;
        assert_eq!(status, 500, "{err}");
        assert_eq!(err["code"], "PLUGIN_FAILED");
        let message = err["error"].as_str().unwrap();
        assert!(
            message.contains("test-trap") && message.contains("trapped"),
            "{message}"
        );
        engine_still_serves(h, &id).await;
        let (status, _) = h
            .post(&format!("/tabs/{id}/actions/trap_now"), json!({}))
            .await;
        assert_eq!(
            status, 500,
            "the plugin stays loaded and fails the same way"
        );
    });
}

#[test]
fn an_endless_loop_is_stopped_by_the_deadline() {
    let (h, _g) = harness();
    block_on(async {
        let id = h.tab_on("/second").await;
        let started = Instant::now();
        let (status, err) = h
            .post(&format!("/tabs/{id}/actions/spin_forever"), json!({}))
            .await;
        assert_eq!(status, 500, "{err}");
        assert!(
            err["error"].as_str().unwrap().contains("300 ms deadline"),
            "{err}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        engine_still_serves(h, &id).await;
    });
}

#[test]
fn a_memory_hog_is_stopped_by_the_limit() {
    let (h, _g) = harness();
    block_on(async {
        let id = h.tab_on("/second").await;
        let (status, err) = h
            .post(&format!("/tabs/{id}/actions/eat_memory"), json!({}))
            .await;
        assert_eq!(status, 500, "{err}");
        assert!(
            err["error"]
                .as_str()
                .unwrap()
                .contains("32 MiB memory limit"),
            "{err}"
        );
        engine_still_serves(h, &id).await;
    });
}

/// Calls share a warm instance (a global survives between them) until one
/// traps; the next call gets a fresh instance, and `GET /plugins` says so.
#[test]
fn instances_are_reused_until_a_call_traps() {
    let (h, _g) = harness();
    block_on(async {
        let id = h.tab_on("/second").await;
        let count = |action: &'static str| {
            let path = format!("/tabs/{id}/actions/{action}");
            async move {
                let (status, env) = h
                    .post(&path, json!({ "screenshot": { "area": "none" } }))
                    .await;
                (status, env)
            }
        };
        let (status, first) = count("count").await;
        assert_eq!(status, 200, "{first}");
        let first = first["result"]["calls"].as_u64().unwrap();
        let (_, second) = count("count").await;
        assert_eq!(
            second["result"]["calls"].as_u64().unwrap(),
            first + 1,
            "the second call ran on the first call's instance: {second}"
        );
        let (status, err) = count("count_then_trap").await;
        assert_eq!(status, 500, "{err}");
        let (_, after) = count("count").await;
        assert_eq!(
            after["result"]["calls"], 1,
            "a fresh instance after the trap: {after}"
        );
        let info = plugin_info(h, "test-counter").await.unwrap();
        let instances = &info["instances"];
        assert!(instances["reused"].as_u64().unwrap() >= 2, "{info}");
        assert!(instances["discarded"].as_u64().unwrap() >= 1, "{info}");
        assert!(instances["created"].as_u64().unwrap() >= 2, "{info}");
        assert_eq!(instances["idle"], 1, "warm_instances = 1: {info}");
    });
}

#[test]
fn markup_and_wait_plugins_extend_screenshots_and_waits() {
    let (h, _g) = harness();
    block_on(async {
        let id = h.tab_on("/markup").await;
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/screenshot"),
                json!({ "screenshot": { "markup": ["test-box"], "cursor": false } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        let (w, _, px) = common::decode_screenshot(&env["screenshot_after"]);
        let i = ((20 * w + 20) * 4) as usize;
        assert!(
            px[i] > 200 && px[i + 1] < 60 && px[i + 2] < 60,
            "test-box draws red at 20,20: {:?}",
            &px[i..i + 3]
        );

        let (status, env) = h
            .post(
                &format!("/tabs/{id}/click"),
                json!({ "x": 1, "y": 1, "wait_until": { "type": "test_three_polls" } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["timing"]["wait_reason"], "third_poll");
    });
}

/// A mouse move goes ahead of its answer (the renderer answers it only at
/// its next frame); a plugin's next call to the page still comes after the
/// page handled the move.
#[test]
fn a_page_call_after_a_mouse_move_sees_the_move() {
    let (h, _g) = harness();
    block_on(async {
        let id = h.tab_on("/").await;
        for (x, y) in [(310, 420), (520, 260), (130, 610)] {
            let (status, body) = h
                .post(
                    &format!("/tabs/{id}/actions/move_then_read"),
                    json!({ "x": x, "y": y, "screenshot": { "area": "none" } }),
                )
                .await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["result"]["seen"], json!([x, y]), "{body}");
        }
    });
}

#[test]
fn hot_reload_swaps_versions_and_a_broken_update_keeps_the_old_one() {
    let (h, _g) = harness();
    block_on(async {
        let dir = &h.server.plugin_dir;
        let id = h.tab_on("/second").await;
        let call = |h: &'static common::Harness, id: String| async move {
            let (status, body) = h
                .post(
                    &format!("/tabs/{id}/actions/echo_version"),
                    json!({ "hello": "there", "screenshot": { "area": "none" } }),
                )
                .await;
            (status == 200).then(|| body["result"].clone())
        };
        install("test-echo-v1", dir, "test-echo");
        let v1 = common::eventually(Duration::from_secs(15), || call(h, id.clone()))
            .await
            .expect("v1 becomes callable without a restart");
        assert_eq!(v1["version"], 1);
        assert_eq!(v1["params"]["hello"], "there");

        install("test-echo-v2", dir, "test-echo");
        let v2 = common::eventually(Duration::from_secs(15), || async {
            call(h, id.clone()).await.filter(|r| r["version"] == 2)
        })
        .await
        .expect("v2 replaces v1");
        assert_eq!(v2["version"], 2);

        std::fs::write(dir.join("test-echo").join("plugin.wasm"), b"\0asm broken").unwrap();
        let info = common::eventually(Duration::from_secs(15), || async {
            plugin_info(h, "test-echo")
                .await
                .filter(|p| p["status"] == "reload_failed")
        })
        .await
        .expect("the failed reload shows in GET /plugins");
        assert!(
            info["last_error"]
                .as_str()
                .unwrap()
                .contains("not a valid component"),
            "{info}"
        );
        assert_eq!(
            call(h, id.clone()).await.expect("old version still serves")["version"],
            2
        );
    });
}

fn assert_policy_denied(status: u16, body: &Value) {
    assert_eq!(
        (status, &body["code"]),
        (403, &json!("POLICY_DENIED")),
        "{body}"
    );
}

/// An engine of its own with `policy` as its `--policy` file.
async fn engine_with_policy(h: &common::Harness, policy: &str) -> common::Harness {
    let file = common::temp_dir("policy").join("policy.toml");
    std::fs::write(&file, policy).unwrap();
    let server = common::start_server_with(common::temp_dir("policy-plugins"), |o| {
        o.policy_file = Some(file);
    })
    .await;
    h.with_server(server)
}

#[test]
fn the_policy_file_denies_asks_and_approvals_decide() {
    let (h, _g) = harness();
    block_on(async {
        let h = engine_with_policy(
            h,
            r#"
read_only_users = ["viewer"]
ask = ["script", "lifecycle"]

[navigation]
allow = ["127.0.0.1"]
deny = ["blocked.invalid"]
"#,
        )
        .await;
        let tab = h.tab_on("/").await;

        // Denied: a host off the allowed list, and one on the denied list.
        // (The backslash form is read as the browser reads it: host localhost.)
        for url in [
            "http://localhost:1/",
            "http://blocked.invalid/",
            "http://localhost:1\\127.0.0.1/",
            "http://0x7f.2:1/",
        ] {
            let (status, body) = h
                .post(&format!("/tabs/{tab}/navigate"), json!({ "url": url }))
                .await;
            assert_policy_denied(status, &body);
            assert!(
                body["error"]
                    .as_str()
                    .unwrap()
                    .starts_with("Action denied by approval policy: "),
                "{body}"
            );
        }
        let (status, body) = h
            .post("/tabs", json!({ "url": "http://localhost:1/" }))
            .await;
        assert_eq!(status, 403, "a new tab goes through the same door: {body}");

        // The page's own way there (a redirect from an allowed page, a
        // script's navigation) is fenced too: the request fails, the tab
        // stays where it was.
        let (status, envelope) = h
            .post(
                &format!("/tabs/{tab}/navigate"),
                json!({ "url": h.url("/redirect-to?url=http://blocked.invalid/") }),
            )
            .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(envelope["result"]["status"], "failed", "{envelope}");
        assert!(
            envelope.to_string().contains("net::ERR_BLOCKED_BY_CLIENT"),
            "{envelope}"
        );
        // A page on the allowed host that links to a denied one
        // (`localhost`: the same server, so a request that got through
        // would load its page).
        let denied_page = h.url("/second").replace("127.0.0.1", "localhost");
        let links = h.url(&format!("/links-to?url={denied_page}"));
        let (status, _) = h
            .post(&format!("/tabs/{tab}/navigate"), json!({ "url": links }))
            .await;
        assert_eq!(status, 200);
        // A link the page follows: blocked before it leaves (the tab shows
        // the browser's error page for it).
        let (status, envelope) = h
            .post(&format!("/tabs/{tab}/click"), json!({ "x": 50, "y": 100 }))
            .await;
        assert_eq!(status, 200, "{envelope}");
        assert!(
            envelope.to_string().contains("net::ERR_BLOCKED_BY_CLIENT"),
            "{envelope}"
        );
        let (_, info) = h.get(&format!("/tabs/{tab}")).await;
        assert_ne!(
            info["title"], "Second",
            "the denied page was fetched: {info}"
        );
        // A popup it opens: its first request is blocked too.
        h.post(&format!("/tabs/{tab}/navigate"), json!({ "url": links }))
            .await;
        let (status, envelope) = h
            .post(&format!("/tabs/{tab}/click"), json!({ "x": 50, "y": 400 }))
            .await;
        assert_eq!(status, 200, "{envelope}");
        let popup = envelope["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["type"] == "popup")
            .map(|e| e["data"]["new_tab_id"].as_str().unwrap().to_string())
            .expect("a popup event");
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (_, info) = h.get(&format!("/tabs/{popup}")).await;
        assert_ne!(
            info["title"], "Second",
            "the popup's page was fetched: {info}"
        );
        h.delete(&format!("/tabs/{popup}")).await;

        // A read-only user reads, and may not click (a plugin action).
        let (status, viewer_tab) = h
            .post("/tabs", json!({ "userId": "viewer", "url": h.url("/") }))
            .await;
        assert_eq!(status, 201, "a read-only user browses: {viewer_tab}");
        let (status, _) = h.get("/tabs?userId=viewer").await;
        assert_eq!(status, 200);
        let (status, body) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "userId": "viewer", "x": 5, "y": 5 }),
            )
            .await;
        assert_policy_denied(status, &body);
        assert!(
            body["error"].as_str().unwrap().contains("may only read"),
            "{body}"
        );

        // Ask: the script waits for an approval, runs once when approved.
        let script = json!({ "script": "6 * 7" });
        let (status, asked) = h
            .post(&format!("/tabs/{tab}/execute"), script.clone())
            .await;
        assert_eq!(
            (status, &asked["code"]),
            (403, &json!("APPROVAL_REQUIRED")),
            "{asked}"
        );
        assert_eq!(asked["approval_required"], true);
        assert!(
            asked["prompt"].as_str().unwrap().contains("execute"),
            "{asked}"
        );
        assert!(
            asked["error"]
                .as_str()
                .unwrap()
                .starts_with("Approval required: ")
        );
        let id = asked["approval_id"].as_str().unwrap().to_string();
        let (status, waiting) = h.get("/approvals").await;
        assert_eq!(status, 200, "{waiting}");
        assert_eq!(
            waiting["approvals"][0]["approval_id"],
            id.as_str(),
            "{waiting}"
        );
        assert_eq!(waiting["approvals"][0]["operation"], "execute");
        let retry = json!({ "script": "6 * 7", "approval_id": id });
        let (status, still) = h.post(&format!("/tabs/{tab}/execute"), retry.clone()).await;
        assert_eq!(
            (status, &still["approval_id"]),
            (403, &json!(id)),
            "undecided: {still}"
        );
        let (status, body) = h
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "script": "1", "approval_id": id }),
            )
            .await;
        assert_policy_denied(status, &body);
        let (status, decided) = h
            .post(&format!("/approvals/{id}"), json!({ "approve": true }))
            .await;
        assert_eq!(
            (status, &decided["approved"]),
            (200, &json!(true)),
            "{decided}"
        );
        let (status, body) = h
            .post(
                &format!("/approvals/{id}"),
                json!({ "approve": true, "userId": "viewer" }),
            )
            .await;
        assert_eq!(status, 403, "deciding is for admins: {body}");
        let (status, ran) = h.post(&format!("/tabs/{tab}/execute"), retry.clone()).await;
        assert_eq!(
            (status, &ran["result"]["value"]),
            (200, &json!(42)),
            "{ran}"
        );
        let (status, _) = h.post(&format!("/tabs/{tab}/execute"), retry).await;
        assert_eq!(status, 404, "an approval runs once");

        // Approved, then revoked before the retry: denied.
        let (_, asked) = h
            .post(&format!("/tabs/{tab}/execute"), script.clone())
            .await;
        let id = asked["approval_id"].as_str().unwrap().to_string();
        h.post(&format!("/approvals/{id}"), json!({ "approve": true }))
            .await;
        let (_, waiting) = h.get("/approvals").await;
        assert!(waiting.to_string().contains("\"approved\""), "{waiting}");
        let (status, _) = h
            .post(&format!("/approvals/{id}"), json!({ "approve": false }))
            .await;
        assert_eq!(status, 200);
        let (status, body) = h
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "script": "6 * 7", "approval_id": id }),
            )
            .await;
        assert_policy_denied(status, &body);

        // Rejected: the retry is denied.
        let (_, asked) = h
            .post(&format!("/tabs/{tab}/execute"), script.clone())
            .await;
        let id = asked["approval_id"].as_str().unwrap().to_string();
        let (status, _) = h
            .post(&format!("/approvals/{id}"), json!({ "approve": false }))
            .await;
        assert_eq!(status, 200);
        let (status, body) = h
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "script": "6 * 7", "approval_id": id }),
            )
            .await;
        assert_policy_denied(status, &body);
        let (status, _) = h
            .post("/approvals/apr_unknown", json!({ "approve": true }))
            .await;
        assert_eq!(status, 404);
        h.server.app.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn a_policy_plugin_that_traps_denies_and_says_so() {
    let (h, _g) = harness();
    block_on(async {
        let plugins = common::temp_dir("trap-policy-plugins");
        install("test-policy", &plugins, "test-policy");
        let server = common::start_server(plugins, None).await;
        let h = h.with_server(server);
        let tab = h.tab_on("/").await;
        let (status, body) = h
            .post(&format!("/tabs/{tab}/execute"), json!({ "script": "1" }))
            .await;
        assert_policy_denied(status, &body);
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("policy test-policy failed"),
            "{body}"
        );
        // Other operations pass; the failure shows in the plugin list.
        let (status, plugins) = h.get("/plugins").await;
        assert_eq!(status, 200);
        let policy = plugins["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "test-policy")
            .cloned()
            .unwrap_or_else(|| panic!("{plugins}"));
        assert_eq!(policy["kind"], "policy");
        assert!(
            policy["last_failure"]
                .as_str()
                .is_some_and(|f| !f.is_empty()),
            "{policy}"
        );
        h.server.app.shutdown(Duration::from_secs(5)).await;
    });
}
