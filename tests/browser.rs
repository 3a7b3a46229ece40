//! Every REST route against real headless Chromium and pages on 127.0.0.1.

mod common;

use std::time::Duration;

use common::{block_on, decode_screenshot, decode_webp, exclusive, shared};
use serde_json::{Value, json};

/// Adds a button `#id` at the page's top left whose click runs `onclick`.
async fn add_button(h: &common::Harness, tab: &str, id: &str, onclick: &str) {
    let script = format!(
        "(() => {{ const b = document.createElement('button'); b.id = {id:?}; b.textContent = {id:?}; \
         b.style = 'position:fixed;left:10px;top:10px'; b.onclick = () => {{ {onclick}; }}; \
         document.body.append(b); return true; }})()"
    );
    h.eval(tab, &script).await;
}

/// Whether the envelope has a `navigation` event to a URL ending in `end`.
fn navigated_to(envelope: &Value, end: &str) -> bool {
    envelope["events"].as_array().unwrap().iter().any(|e| {
        e["type"] == "navigation" && e["data"]["url"].as_str().is_some_and(|u| u.ends_with(end))
    })
}

fn event_types(envelope: &Value) -> Vec<String> {
    envelope["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn status_reports_ready_components_and_driver() {
    let (h, _g) = shared();
    block_on(async {
        let (status, body) = h.get("/browser/status").await;
        assert_eq!(status, 200);
        assert_eq!(body["success"], true);
        assert_eq!(body["data"]["ready"], true);
        assert_eq!(body["data"]["state"], "ready");
        for c in ["http_server", "browser_window", "devtools"] {
            assert_eq!(body["data"]["components"][c], true, "{c}");
        }
        assert!(body["data"]["frame_driver"].is_string());
        // Chromium keeps its sandbox unless it can't have it, and says why.
        let sandbox = &body["data"]["sandbox"];
        let root = std::fs::metadata("/proc/self")
            .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
            .unwrap();
        if root {
            assert_eq!(sandbox["on"], false, "{sandbox}");
            assert!(
                sandbox["note"].as_str().unwrap().contains("root"),
                "{sandbox}"
            );
        } else {
            assert!(
                sandbox["on"] == true
                    || sandbox["note"]
                        .as_str()
                        .is_some_and(|n| n.contains("sandbox")),
                "{sandbox}"
            );
        }
        let (_, data) = h.get("/browser/session-data").await;
        let database = data["data"]["database_path"].as_str().unwrap();
        assert!(database.ends_with("history.db"));
        // The session folder is private to the engine's user.
        let session = std::path::Path::new(database).parent().unwrap();
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(session).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o700, "{}", session.display());
    });
}

#[test]
fn tab_lifecycle_create_list_get_activate_stop_close() {
    let (h, _g) = shared();
    block_on(async {
        let (status, created) = h.post("/tabs", json!({ "url": h.url("/second") })).await;
        assert_eq!(status, 201, "{created}");
        let id = created["id"].as_str().unwrap().to_string();
        assert!(id.starts_with("tab_"));
        assert_eq!(created["url"], h.url("/second"));

        let (_, list) = h.get("/tabs").await;
        let entry = list
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id.as_str())
            .expect("new tab listed")
            .clone();
        assert_eq!(entry["active"], true);

        let info = common::eventually(Duration::from_secs(5), || async {
            let (_, info) = h.get(&format!("/tabs/{id}")).await;
            (info["title"] == "Second").then_some(info)
        })
        .await
        .expect("tab loads /second");
        assert_eq!(info["loading"], false);

        let (status, activated) = h.post(&format!("/tabs/{id}/activate"), json!({})).await;
        assert_eq!(status, 200);
        assert_eq!(activated["status"], "activated");
        assert_eq!(activated["tab_id"], id.as_str());
        assert!(activated["index"].is_u64());

        let (status, stopped) = h.post(&format!("/tabs/{id}/stop"), json!({})).await;
        assert_eq!((status, stopped["status"].as_str()), (200, Some("stopped")));

        let (status, closed) = h.delete(&format!("/tabs/{id}")).await;
        assert_eq!((status, closed), (200, json!({})));
        let (status, gone) = h.get(&format!("/tabs/{id}")).await;
        assert_eq!(status, 404);
        assert_eq!(gone["code"], "TAB_NOT_FOUND");
        assert!(gone["error"].as_str().unwrap().contains(&id));
    });
}

#[test]
fn navigate_returns_full_envelope_with_screenshots_and_navigation_event() {
    let (h, _g) = shared();
    block_on(async {
        let (_, tab) = h.post("/tabs", json!({})).await;
        let id = tab["id"].as_str().unwrap();
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/navigate"),
                json!({ "url": h.url("/"), "referrer": "http://referrer.test/" }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(
            env["result"],
            json!({ "status": "navigated", "url": h.url("/") })
        );
        for key in ["screenshot_before", "screenshot_after"] {
            let shot = &env[key];
            assert_eq!(shot["format"], "webp");
            assert_eq!(
                (shot["width"].as_u64(), shot["height"].as_u64()),
                (Some(1280), Some(720))
            );
            assert!(shot["virtual_time_ms"].as_f64().unwrap() > 1.6e12);
            let (w, h, _) = decode_screenshot(shot);
            assert_eq!((w, h), (1280, 720));
        }
        let nav = env["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["type"] == "navigation")
            .expect("navigation event");
        assert_eq!(nav["data"]["url"], h.url("/"));
        assert_eq!(nav["data"]["tab_id"], id);
        for key in [
            "horizontal_percent",
            "vertical_percent",
            "horizontal_px",
            "vertical_px",
            "page_width",
            "page_height",
            "viewport_width",
            "viewport_height",
        ] {
            assert!(env["scroll"][key].is_number(), "scroll.{key}");
        }
        assert_eq!(env["scroll"]["viewport_width"], 1280.0);
        assert!(env["scroll"]["page_height"].as_f64().unwrap() >= 2400.0);
        for key in [
            "action_started_ms",
            "action_completed_ms",
            "wait_completed_ms",
            "duration_ms",
        ] {
            assert!(env["timing"][key].is_number(), "timing.{key}");
        }
        let referrer = h.eval(id, "document.referrer").await;
        assert_eq!(referrer, "http://referrer.test/");
        assert!(env.get("network").is_none(), "network only when requested");
    });
}

/// A server that sends nothing holds a navigation no longer than the
/// action's timeout: it is stopped, and the tab stays on its page, working
/// (the page being left answers nothing while the navigation waits).
#[test]
fn a_navigation_to_a_silent_server_stops_at_the_action_timeout() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/").await;
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/navigate"),
                json!({ "url": h.url("/api/slow?ms=5000"), "wait_until": { "timeout_ms": 1000 } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        // Not stopped, the server's answer at 5 s would have loaded.
        assert_eq!(env["result"]["status"], "failed", "{}", env["result"]);
        assert!(
            env["result"]["error"]
                .as_str()
                .is_some_and(|e| e.contains("the navigation was stopped")),
            "{}",
            env["result"]
        );
        let types = event_types(&env);
        assert!(
            types.contains(&"navigation_failed".to_string()),
            "{types:?}"
        );
        assert!(
            !types
                .iter()
                .any(|t| t == "renderer_unresponsive" || t == "tab_recovered"),
            "{types:?}"
        );
        assert!(env["screenshot_after"].is_object(), "the page it stayed on");
        assert_eq!(h.eval(&id, "location.pathname").await, "/");
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/navigate"),
                json!({ "url": h.url("/second") }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(h.eval(&id, "location.pathname").await, "/second");
        let (status, _) = h.post(&format!("/tabs/{id}/back"), json!({})).await;
        assert_eq!(status, 200, "its history is kept");
        assert_eq!(h.eval(&id, "location.pathname").await, "/");
    });
}

#[test]
fn back_forward_reload_follow_history() {
    let (h, _g) = shared();
    block_on(async {
        let (_, tab) = h.post("/tabs", json!({})).await;
        let id = tab["id"].as_str().unwrap().to_string();
        let (status, err) = h.post(&format!("/tabs/{id}/back"), json!({})).await;
        assert_eq!(status, 400, "{err}");
        assert!(err["error"].as_str().unwrap().contains("back"));
        let (status, _) = h.post(&format!("/tabs/{id}/forward"), json!({})).await;
        assert_eq!(status, 400);

        h.post(
            &format!("/tabs/{id}/navigate"),
            json!({ "url": h.url("/") }),
        )
        .await;
        h.post(
            &format!("/tabs/{id}/navigate"),
            json!({ "url": h.url("/second") }),
        )
        .await;
        let (status, env) = h.post(&format!("/tabs/{id}/back"), json!({})).await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(h.eval(&id, "location.pathname").await, "/");
        let nav = env["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["type"] == "navigation")
            .expect("navigation on back");
        assert_eq!(nav["data"]["navigation_type"], "back_forward");

        let (status, _) = h.post(&format!("/tabs/{id}/forward"), json!({})).await;
        assert_eq!(status, 200);
        assert_eq!(h.eval(&id, "location.pathname").await, "/second");

        h.eval(&id, "window.marker = 1").await;
        let (status, env) = h.post(&format!("/tabs/{id}/reload"), json!({})).await;
        assert_eq!(status, 200);
        assert_eq!(h.eval(&id, "typeof window.marker").await, "undefined");
        assert!(event_types(&env).contains(&"navigation".to_string()));
    });
}

#[test]
fn click_with_button_count_and_modifiers_reaches_the_page() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/").await;
        let (x, y) = h.center(&id, "#btn").await;
        let (status, env) = h
            .post(&format!("/tabs/{id}/click"), json!({ "x": x, "y": y }))
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["result"], json!({ "status": "clicked" }));
        assert_eq!(
            h.eval(&id, "document.getElementById('out').textContent")
                .await,
            "clicked 1"
        );

        h.post(
            &format!("/tabs/{id}/click"),
            json!({ "x": x, "y": y, "click_count": 2 }),
        )
        .await;
        h.post(
            &format!("/tabs/{id}/click"),
            json!({ "x": x, "y": y, "button": "right" }),
        )
        .await;
        h.post(
            &format!("/tabs/{id}/click"),
            json!({ "x": x, "y": y, "modifiers": ["Shift"] }),
        )
        .await;
        let events = h.eval(&id, "window.events").await;
        let types: Vec<&str> = events
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert!(types.contains(&"dblclick"), "{events}");
        assert!(types.contains(&"contextmenu"), "{events}");
        assert_eq!(
            events.as_array().unwrap().last().unwrap()["shift"],
            true,
            "{events}"
        );

        let (status, err) = h
            .post(&format!("/tabs/{id}/click"), json!({ "y": 10 }))
            .await;
        assert_eq!(status, 400);
        assert!(err["error"].as_str().unwrap().contains("x"), "{err}");
        let (status, err) = h
            .post(
                &format!("/tabs/{id}/click"),
                json!({ "x": 1, "y": 1, "button": "fourth" }),
            )
            .await;
        assert_eq!(status, 400, "{err}");
    });
}

#[test]
fn type_and_keyboard_press_down_up() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/").await;
        let (x, y) = h.center(&id, "#name").await;
        h.post(&format!("/tabs/{id}/click"), json!({ "x": x, "y": y }))
            .await;
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/type"),
                json!({ "text": "Hello, World!" }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["result"]["text"], "Hello, World!");
        assert_eq!(
            h.eval(&id, "document.getElementById('name').value").await,
            "Hello, World!"
        );

        let (status, _) = h
            .post(
                &format!("/tabs/{id}/keyboard/press"),
                json!({ "key": "a", "modifiers": ["Control"] }),
            )
            .await;
        assert_eq!(status, 200);
        let selected = h.eval(&id, "(() => { const i = document.getElementById('name'); return [i.selectionStart, i.selectionEnd]; })()").await;
        assert_eq!(selected, json!([0, 13]), "Ctrl+A selects all");
        h.post(
            &format!("/tabs/{id}/keyboard/press"),
            json!({ "key": "Backspace" }),
        )
        .await;
        assert_eq!(
            h.eval(&id, "document.getElementById('name').value").await,
            ""
        );

        let (status, _) = h
            .post(
                &format!("/tabs/{id}/keyboard/down"),
                json!({ "key": "Shift" }),
            )
            .await;
        assert_eq!(status, 200);
        let (status, _) = h
            .post(
                &format!("/tabs/{id}/keyboard/up"),
                json!({ "key": "Shift" }),
            )
            .await;
        assert_eq!(status, 200);
        let keys = h
            .eval(
                &id,
                "window.events.filter(e => e.type === 'keydown').map(e => e.key)",
            )
            .await;
        assert!(
            keys.as_array().unwrap().iter().any(|k| k == "Shift"),
            "{keys}"
        );

        let (status, err) = h
            .post(
                &format!("/tabs/{id}/keyboard/press"),
                json!({ "key": "NoSuchKey" }),
            )
            .await;
        assert_eq!(status, 400, "{err}");
        let (status, err) = h.post(&format!("/tabs/{id}/type"), json!({})).await;
        assert_eq!(status, 400);
        assert!(err["error"].as_str().unwrap().contains("text"), "{err}");
    });
}

/// A click's move goes ahead of its answer, and a drag's moves stay events
/// of their own: the page sees each, in order, at its point.
#[test]
fn pointer_moves_reach_the_page_in_order_and_uncoalesced() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/").await;
        h.eval(
            &id,
            "(() => { window.pointer = []; for (const t of ['mousemove', 'mousedown', 'mouseup', 'click']) \
             document.addEventListener(t, e => window.pointer.push(t + ' ' + e.clientX + ',' + e.clientY), true); \
             return true; })()",
        )
        .await;
        let none = json!({ "area": "none" });
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/click"),
                json!({ "x": 150, "y": 120, "screenshot": none }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/drag"),
                json!({ "start_x": 700, "start_y": 600, "end_x": 760, "end_y": 660, "steps": 6, "screenshot": none }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        let seen = h.eval(&id, "window.pointer").await;
        let mut expected: Vec<String> = [
            "mousemove 150,120",
            "mousedown 150,120",
            "mouseup 150,120",
            "click 150,120",
            "mousemove 700,600",
            "mousedown 700,600",
        ]
        .map(String::from)
        .to_vec();
        expected.extend((1..=6).map(|i| format!("mousemove {},{}", 700 + 10 * i, 600 + 10 * i)));
        expected.extend(["mouseup 760,660".to_string(), "click 760,660".to_string()]);
        assert_eq!(seen, json!(expected));
    });
}

/// `type`'s 2 ms between keystrokes is page time: the page's clock shows
/// the gap, and a timer a keystroke sets for 1 ms runs before the next one,
/// even in the first frame after the thaw, when the page's clock would
/// otherwise still stand.
#[test]
fn typed_keystrokes_are_two_ms_apart_on_the_page_clock() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/").await;
        h.eval(
            &id,
            "(() => { window.typed = []; const i = document.getElementById('name'); i.focus(); \
             i.addEventListener('keydown', e => { window.typed.push({ key: e.key, at: performance.now() }); \
             setTimeout(() => window.typed.push({ timer: e.key }), 1); }); return true; })()",
        )
        .await;
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/type"),
                json!({ "text": "abcdef", "screenshot": { "area": "none" } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        let typed = h.eval(&id, "window.typed").await;
        let typed = typed.as_array().unwrap();
        let keys: Vec<&Value> = typed.iter().filter(|e| e.get("key").is_some()).collect();
        assert_eq!(keys.len(), 6, "{typed:?}");
        for pair in keys.windows(2) {
            let gap = pair[1]["at"].as_f64().unwrap() - pair[0]["at"].as_f64().unwrap();
            assert!(
                gap >= 1.9,
                "keystrokes {gap} ms apart on the page's clock: {typed:?}"
            );
        }
        // Each keystroke's timer, before the next keystroke.
        let order: Vec<String> = typed
            .iter()
            .map(|e| match (e.get("key"), e.get("timer")) {
                (Some(k), _) => format!("key {}", k.as_str().unwrap()),
                (_, Some(t)) => format!("timer {}", t.as_str().unwrap()),
                _ => unreachable!(),
            })
            .collect();
        let expected: Vec<String> = "abcdef"
            .chars()
            .flat_map(|c| [format!("key {c}"), format!("timer {c}")])
            .collect();
        assert_eq!(order, expected);
    });
}

#[test]
fn scroll_and_move_update_page_and_envelope() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/").await;
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/scroll"),
                json!({ "x": 640, "y": 600, "delta_y": 500 }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        let scrolled = common::eventually(Duration::from_secs(3), || async {
            let y = h.eval(&id, "scrollY").await.as_f64().unwrap();
            (y > 0.0).then_some(y)
        })
        .await
        .expect("page scrolls");
        assert!(scrolled > 0.0);
        let (status, err) = h
            .post(&format!("/tabs/{id}/scroll"), json!({ "x": 1, "y": 1 }))
            .await;
        assert_eq!(status, 400, "{err}");

        let (status, env) = h
            .post(&format!("/tabs/{id}/move"), json!({ "x": 321, "y": 123 }))
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(h.eval(&id, "window.lastMove").await, json!([321, 123]));
    });
}

#[test]
fn execute_returns_value_and_type_and_awaits_promises() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/second").await;
        let (_, r) = h
            .post(
                &format!("/tabs/{id}/execute"),
                json!({ "script": "1 + 41" }),
            )
            .await;
        assert_eq!(
            r,
            json!({ "result": { "value": 42, "type": "number" }, "events": [] })
        );
        let (_, r) = h
            .post(
                &format!("/tabs/{id}/execute"),
                json!({ "script": "document.title" }),
            )
            .await;
        assert_eq!(r["result"], json!({ "value": "Second", "type": "string" }));
        let (_, r) = h
            .post(
                &format!("/tabs/{id}/execute"),
                json!({ "script": "new Promise(r => setTimeout(() => r({a: [1, 2]}), 50))" }),
            )
            .await;
        assert_eq!(
            r["result"],
            json!({ "value": { "a": [1, 2] }, "type": "object" })
        );
        let (_, r) = h
            .post(
                &format!("/tabs/{id}/execute"),
                json!({ "expression": "undefined" }),
            )
            .await;
        assert_eq!(r["result"]["type"], "undefined");
        let (status, err) = h
            .post(
                &format!("/tabs/{id}/execute"),
                json!({ "script": "throw new Error('boom')" }),
            )
            .await;
        assert_eq!(status, 400);
        assert_eq!(err["code"], "EVALUATION_ERROR");
        assert!(err["error"].as_str().unwrap().contains("boom"));
    });
}

#[test]
fn text_of_body_selector_and_no_match() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/second").await;
        let (_, r) = h.post(&format!("/tabs/{id}/text"), json!({})).await;
        assert!(
            r["text"]
                .as_str()
                .unwrap()
                .contains("Hello from the second page")
        );
        let (_, r) = h
            .post(&format!("/tabs/{id}/text"), json!({ "selector": ".note" }))
            .await;
        assert_eq!(r["text"], "Hello from the second page");
        let (_, r) = h
            .post(
                &format!("/tabs/{id}/text"),
                json!({ "selector": ".missing" }),
            )
            .await;
        assert_eq!(r, json!({ "text": null }));
        let (status, _) = h
            .post(&format!("/tabs/{id}/text"), json!({ "selector": "[[[" }))
            .await;
        assert_eq!(status, 400);
    });
}

#[test]
fn wait_runs_for_the_duration_and_validates_ms() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/second").await;
        let started = std::time::Instant::now();
        let (status, env) = h
            .post(&format!("/tabs/{id}/wait"), json!({ "ms": 300 }))
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["result"], json!({ "status": "waited", "ms": 300 }));
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(env["timing"]["wait_reason"], "time_elapsed");
        let (status, _) = h
            .post(&format!("/tabs/{id}/wait"), json!({ "ms": 60001 }))
            .await;
        assert_eq!(status, 400);
        let (status, err) = h.post(&format!("/tabs/{id}/wait"), json!({})).await;
        assert_eq!(status, 400);
        assert!(err["error"].as_str().unwrap().contains("ms"));
    });
}

#[test]
fn action_complete_waits_for_same_site_fetch() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/").await;
        let (x, y) = h.center(&id, "#fetch").await;
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/click"),
                json!({ "x": x, "y": y, "network": { "types": ["Fetch"] } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["timing"]["wait_reason"], "settled", "{}", env["timing"]);
        assert!(env["timing"]["duration_ms"].as_f64().unwrap() >= 400.0);
        assert_eq!(
            h.eval(&id, "document.getElementById('data').textContent")
                .await,
            "slow data arrived"
        );
        assert_eq!(env["network"]["total"], 1, "{}", env["network"]);
        assert_eq!(env["network"]["completed"], 1);
        assert_eq!(env["network"]["pending"], 0);

        // immediate returns before the fetch finishes.
        h.post(
            &format!("/tabs/{id}/navigate"),
            json!({ "url": h.url("/") }),
        )
        .await;
        let (_, env) = h
            .post(
                &format!("/tabs/{id}/click"),
                json!({ "x": x, "y": y, "wait_until": { "type": "immediate" } }),
            )
            .await;
        assert_eq!(env["timing"]["wait_reason"], "immediate");
        let (status, err) = h
            .post(
                &format!("/tabs/{id}/click"),
                json!({ "x": x, "y": y, "wait_until": { "type": "forever" } }),
            )
            .await;
        assert_eq!(status, 400);
        assert!(err["error"].as_str().unwrap().contains("forever"));
    });
}

/// A request started from a task the click handler queued (a
/// MessageChannel message, as React's scheduler posts them) is the click's
/// too: the wait sees it and waits for it.
#[test]
fn action_complete_waits_for_a_fetch_started_by_a_posted_task() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/").await;
        h.eval(
            &id,
            "(() => { document.getElementById('btn').addEventListener('click', () => { \
             const c = new MessageChannel(); c.port1.onmessage = () => fetch('/api/slow?ms=300') \
             .then(r => r.json()).then(d => { document.getElementById('data').textContent = 'via a task: ' + d.message; }); \
             c.port2.postMessage(0); }); return true; })()",
        )
        .await;
        let (status, env) = h.click_on(&id, "#btn").await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["timing"]["wait_reason"], "settled", "{}", env["timing"]);
        assert_eq!(
            h.eval(&id, "document.getElementById('data').textContent")
                .await,
            "via a task: slow data arrived"
        );
    });
}

/// A form submits from a task of its own, after the click's answer: the
/// action's envelope still has its navigation, whether the form submits by
/// a click on its button, by Enter in its field or by `form.submit()` (which
/// fires no `submit` event).
#[test]
fn a_form_submission_belongs_to_the_action_that_submitted_it() {
    let (h, _g) = shared();
    block_on(async {
        let form = "(() => { const f = document.createElement('form'); f.action = '/second'; \
                    f.method = 'get'; f.style = 'position:fixed;left:10px;top:10px'; \
                    f.innerHTML = '<input name=q value=x><button id=go>Go</button>\
                    <button type=button id=js>By script</button>'; document.body.append(f); \
                    document.getElementById('js').onclick = () => f.submit(); return true; })()";
        for way in ["click", "Enter", "submit()", "click", "Enter", "submit()"] {
            let id = h.tab_on("/").await;
            h.eval(&id, form).await;
            let (path, body) = match way {
                "Enter" => {
                    h.eval(&id, "document.querySelector('input[name=q]').focus()")
                        .await;
                    ("keyboard/press", json!({ "key": "Enter" }))
                }
                _ => {
                    let (x, y) = h
                        .center(&id, if way == "click" { "#go" } else { "#js" })
                        .await;
                    ("click", json!({ "x": x, "y": y }))
                }
            };
            let (status, env) = h.post(&format!("/tabs/{id}/{path}"), body).await;
            assert_eq!(status, 200, "{env}");
            assert!(
                navigated_to(&env, "/second?q=x"),
                "{way}: no navigation in {}",
                env["events"]
            );
            assert_eq!(h.eval(&id, "location.search").await, "?q=x", "{way}");
            h.delete(&format!("/tabs/{id}")).await;
        }
    });
}

#[test]
fn screenshots_binary_and_envelope_with_markup_and_cursor() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/markup").await;
        let url = format!("{}/tabs/{id}/screenshot", h.server.api);
        let plain = h
            .http
            .get(format!(
                "{url}?disable_markup=clickable,typeable,scrollable,grid,selected&cursor=false"
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(plain.headers()["content-type"], "image/webp");
        let (w, _, plain) = decode_webp(&plain.bytes().await.unwrap());
        let marked = h
            .http
            .get(format!("{url}?disable_markup=grid"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let (_, _, marked) = decode_webp(&marked);
        // The button's left edge at x=300, y=340: white without markup, green with it.
        let px = |img: &[u8], x: u32, y: u32| {
            let i = ((y * w + x) * 4) as usize;
            (img[i], img[i + 1], img[i + 2])
        };
        let (r, g, b) = px(&plain, 300, 340);
        assert!(
            r > 200 && g > 200 && b > 200,
            "no markup: white, got {:?}",
            (r, g, b)
        );
        let (r, g, b) = px(&marked, 300, 340);
        assert!(
            g > r + 30 && g > b + 20 && g < 220,
            "clickable outline is green, got {:?}",
            (r, g, b)
        );

        let (status, err) = h
            .get(&format!("/tabs/{id}/screenshot?disable_markup=sparkles"))
            .await;
        assert_eq!(status, 400, "{err}");

        let (status, env) = h
            .post(
                &format!("/tabs/{id}/screenshot"),
                json!({ "screenshot": { "disable_markup": ["grid"] } }),
            )
            .await;
        assert_eq!(status, 200);
        assert!(
            env["screenshot_before"]["data"].is_string()
                && env["screenshot_after"]["data"].is_string()
        );
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/screenshot"),
                json!({ "screenshot": { "area": "none" } }),
            )
            .await;
        assert_eq!(status, 200);
        assert!(env.get("screenshot_after").is_none() && env.get("screenshot_before").is_none());

        // The virtual cursor is drawn where the pointer was left.
        h.post(
            &format!("/tabs/{id}/move"),
            json!({ "x": 100, "y": 100, "screenshot": { "area": "none" } }),
        )
        .await;
        let none = "clickable,typeable,scrollable,grid,selected";
        let with = h
            .http
            .get(format!("{url}?disable_markup={none}"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let without = h
            .http
            .get(format!("{url}?disable_markup={none}&cursor=false"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let (_, _, with) = decode_webp(&with);
        let (_, _, without) = decode_webp(&without);
        let dark = |img: &[u8]| {
            (100..112)
                .flat_map(|x| (100..118).map(move |y| (x, y)))
                .filter(|&(x, y)| px(img, x, y).0 < 100)
                .count()
        };
        assert!(
            dark(&with) > 5 && dark(&without) == 0,
            "cursor outline drawn only with cursor=true"
        );
    });
}

#[test]
fn dialog_returns_pending_event_and_does_not_block_other_tabs() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/dialog").await;
        let other = h.tab_on("/second").await;
        let (x, y) = h.center(&id, "#alert").await;
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/click"),
                json!({ "x": x, "y": y, "wait_until": { "timeout_ms": 10000 } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        let dialog = env["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["type"] == "dialog")
            .expect("dialog event");
        assert_eq!(dialog["data"]["dialog_type"], "alert");
        assert_eq!(dialog["data"]["message"], "Hello there");
        assert_eq!(dialog["data"]["pending"], true);
        assert_eq!(env["timing"]["wait_reason"], "dialog");

        let (_, pending) = h.get(&format!("/tabs/{id}/dialog")).await;
        assert_eq!(pending["present"], true);
        assert_eq!(pending["dialog_type"], "alert");
        // Another tab works while the dialog is open.
        let (status, _) = h
            .post(
                &format!("/tabs/{other}/navigate"),
                json!({ "url": h.url("/") }),
            )
            .await;
        assert_eq!(status, 200);
        let (_, tabs) = h.get("/tabs").await;
        assert!(tabs.as_array().unwrap().len() >= 2);

        let (status, ok) = h
            .post(&format!("/tabs/{id}/dialog/accept"), json!({}))
            .await;
        assert_eq!((status, ok), (200, json!({ "success": true })));
        let (_, none) = h.get(&format!("/tabs/{id}/dialog")).await;
        assert_eq!(none, json!({ "present": false }));
        let (status, err) = h
            .post(&format!("/tabs/{id}/dialog/dismiss"), json!({}))
            .await;
        assert_eq!(status, 400);
        assert_eq!(err["code"], "DIALOG_NOT_PRESENT");

        let (x, y) = h.center(&id, "#confirm").await;
        h.post(&format!("/tabs/{id}/click"), json!({ "x": x, "y": y }))
            .await;
        h.post(&format!("/tabs/{id}/dialog/dismiss"), json!({}))
            .await;
        assert_eq!(h.eval(&id, "window.answer").await, false);
    });
}

/// A dialog raised by a click's own mousedown or mousemove handler holds the
/// page before the click is done: the click still answers with its envelope
/// and the dialog in it, and, once the dialog is answered, the next click is
/// an ordinary one (no button counted as held).
#[test]
fn a_dialog_raised_inside_a_click_is_in_its_envelope() {
    let (h, _g) = shared();
    block_on(async {
        for handler in ["onmousedown", "onmousemove"] {
            let id = h.tab_on("/").await;
            h.eval(
                &id,
                &format!(
                    "(() => {{ const d = document.createElement('div'); d.id = 'trap'; \
                     d.style = 'position:fixed;left:0;top:0;width:200px;height:200px;background:#fcc'; \
                     window.raised = 0; window.downs = []; \
                     d.{handler} = () => {{ if (!window.raised++) alert('from ' + '{handler}'); }}; \
                     document.addEventListener('mousedown', e => downs.push(e.buttons), true); \
                     document.body.append(d); return true; }})()"
                ),
            )
            .await;
            let (status, env) = h
                .post(
                    &format!("/tabs/{id}/click"),
                    json!({ "x": 100, "y": 100, "screenshot": { "area": "none" } }),
                )
                .await;
            assert_eq!(status, 200, "{handler}: {env}");
            assert_eq!(
                env["result"]["status"], "interrupted_by_dialog",
                "{handler}: {}",
                env["result"]
            );
            let dialog = env["events"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["type"] == "dialog");
            assert!(
                dialog.is_some_and(|d| d["data"]["message"] == format!("from {handler}")),
                "{handler}: {}",
                env["events"]
            );
            assert_eq!(env["timing"]["wait_reason"], "dialog", "{handler}");
            let (status, _) = h
                .post(&format!("/tabs/{id}/dialog/accept"), json!({}))
                .await;
            assert_eq!(status, 200);
            // A press with no button held before it: buttons == 1 (left).
            let (status, env) = h
                .post(
                    &format!("/tabs/{id}/click"),
                    json!({ "x": 300, "y": 300, "screenshot": { "area": "none" } }),
                )
                .await;
            assert_eq!(status, 200, "{handler}: {env}");
            assert_eq!(env["result"]["status"], "clicked");
            let downs = h.eval(&id, "downs").await;
            assert_eq!(
                downs.as_array().unwrap().last(),
                Some(&json!(1)),
                "{handler}: {downs}"
            );
            h.delete(&format!("/tabs/{id}")).await;
        }
    });
}

/// A navigation that happens while no action runs (here: the script a
/// confirm held goes on once the dialog is accepted) is in the next action's
/// envelope.
#[test]
fn a_navigation_between_actions_is_in_the_next_envelope() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/").await;
        add_button(
            &h,
            &id,
            "leave",
            "if (confirm('Leave?')) location.href = '/second'",
        )
        .await;
        let (status, env) = h.click_on(&id, "#leave").await;
        assert_eq!(status, 200, "{env}");
        assert!(event_types(&env).contains(&"dialog".to_string()), "{env}");
        let (status, _) = h
            .post(&format!("/tabs/{id}/dialog/accept"), json!({}))
            .await;
        assert_eq!(status, 200);
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/wait"),
                json!({ "ms": 200, "screenshot": { "area": "none" } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        assert!(navigated_to(&env, "/second"), "{}", env["events"]);
        assert_eq!(h.eval(&id, "location.pathname").await, "/second");
        h.delete(&format!("/tabs/{id}")).await;
    });
}

/// `pushState` changes the URL and loads nothing (Chromium signals a start
/// and a stop of loading and no load event): the click settles at once on
/// the page's clock, reports the new URL, and so does a back to the old one.
#[test]
fn a_push_state_click_settles_and_reports_its_url() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/").await;
        add_button(&h, &id, "push", "history.pushState({}, '', '/spa/page')").await;
        let before = h.eval(&id, "Date.now()").await.as_f64().unwrap();
        let (status, env) = h.click_on(&id, "#push").await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["timing"]["wait_reason"], "settled", "{}", env["timing"]);
        let after = h.eval(&id, "Date.now()").await.as_f64().unwrap();
        assert!(
            after - before < 1000.0,
            "the page's clock moved {} ms",
            after - before
        );
        assert!(navigated_to(&env, "/spa/page"), "{}", env["events"]);
        assert_eq!(h.eval(&id, "location.pathname").await, "/spa/page");
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/back"),
                json!({ "screenshot": { "area": "none" } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(env["timing"]["wait_reason"], "settled", "{}", env["timing"]);
        assert!(navigated_to(&env, "/"), "{}", env["events"]);
        assert_eq!(h.eval(&id, "location.pathname").await, "/");
        h.delete(&format!("/tabs/{id}")).await;
    });
}

#[test]
fn bad_requests_get_clear_4xx() {
    let (h, _g) = shared();
    block_on(async {
        let id = h.tab_on("/second").await;
        let response = h
            .http
            .post(format!("{}/tabs/{id}/navigate", h.server.api))
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        let body: Value = response.json().await.unwrap();
        assert!(
            body["error"].as_str().unwrap().contains("malformed JSON"),
            "{body}"
        );
        assert_eq!(body["code"], "INVALID_REQUEST");

        let (status, err) = h.post(&format!("/tabs/{id}/navigate"), json!({})).await;
        assert_eq!(status, 400);
        assert!(err["error"].as_str().unwrap().contains("\"url\""), "{err}");
        let (status, err) = h
            .post(
                &format!("/tabs/{id}/navigate"),
                json!({ "url": "example.com" }),
            )
            .await;
        assert_eq!(status, 400, "{err}");
        let (status, err) = h
            .post("/tabs/tab_nope/click", json!({ "x": 1, "y": 1 }))
            .await;
        assert_eq!((status, err["code"].as_str()), (404, Some("TAB_NOT_FOUND")));
        let (status, err) = h
            .post(&format!("/tabs/{id}/actions/no_such_action"), json!({}))
            .await;
        assert_eq!(status, 404, "{err}");
        let (status, _) = h.get("/no/such/route").await;
        assert_eq!(status, 404);
        let (status, err) = h
            .post(
                &format!("/tabs/{id}/click"),
                json!({ "x": 1, "y": 1, "wait_until": { "timeout_ms": "soon" } }),
            )
            .await;
        assert_eq!(status, 400);
        assert!(err["error"].as_str().unwrap().contains("timeout_ms"));
    });
}

#[test]
fn plugin_actions_are_reachable_by_name_and_listed() {
    let (h, _g) = shared();
    block_on(async {
        let (_, plugins) = h.get("/plugins").await;
        let names: Vec<&str> = plugins["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        for builtin in ["core-actions", "abp-markup", "standard-waits"] {
            assert!(names.contains(&builtin), "{names:?}");
        }
        let click = plugins["actions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == "click")
            .expect("click listed");
        assert_eq!(click["params_schema"]["type"], "object");
        let id = h.tab_on("/").await;
        let (x, y) = h.center(&id, "#btn").await;
        let (status, env) = h
            .post(
                &format!("/tabs/{id}/actions/click"),
                json!({ "action_params": { "x": x, "y": y } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(
            h.eval(&id, "document.getElementById('out').textContent")
                .await,
            "clicked 1"
        );
    });
}

#[test]
fn human_input_mode_blocks_actions_but_not_reads() {
    let (h, _g) = exclusive();
    block_on(async {
        let id = h.tab_on("/second").await;
        let (status, mode) = h
            .post("/browser/input-mode", json!({ "input_mode": "human" }))
            .await;
        assert_eq!((status, mode), (200, json!({ "input_mode": "human" })));
        let (_, mode) = h.get("/browser/input-mode").await;
        assert_eq!(mode["input_mode"], "human");
        let (status, err) = h
            .post(&format!("/tabs/{id}/click"), json!({ "x": 1, "y": 1 }))
            .await;
        assert_eq!(status, 409, "{err}");
        assert!(err["error"].as_str().unwrap().contains("human"));
        let (status, _) = h
            .post(&format!("/tabs/{id}/execute"), json!({ "script": "1" }))
            .await;
        assert_eq!(status, 409);
        let (status, _) = h.get("/tabs").await;
        assert_eq!(status, 200);
        let (status, _) = h.post(&format!("/tabs/{id}/text"), json!({})).await;
        assert_eq!(status, 200);
        let (status, _) = h
            .post("/browser/input-mode", json!({ "input_mode": "robot" }))
            .await;
        assert_eq!(status, 400);
        h.post("/browser/input-mode", json!({ "input_mode": "agent" }))
            .await;
        let (status, _) = h
            .post(&format!("/tabs/{id}/execute"), json!({ "script": "1" }))
            .await;
        assert_eq!(status, 200);
    });
}

#[test]
fn auth_token_guards_the_api_and_shutdown_stops_the_browser() {
    let (_h, _g) = shared();
    block_on(async {
        let server = common::start_server(
            common::temp_dir("auth-plugins"),
            Some("s3cret-0123456789ab".into()),
        )
        .await;
        let http = reqwest::Client::new();
        let status_url = format!("{}/browser/status", server.api);
        let (status, err) =
            common::send(&http, reqwest::Method::GET, &status_url, None, None).await;
        assert_eq!(status, 401);
        assert_eq!(err["code"], "UNAUTHORIZED");
        let (status, _) = common::send(
            &http,
            reqwest::Method::GET,
            &status_url,
            None,
            Some("wrong"),
        )
        .await;
        assert_eq!(status, 401);
        let (status, body) = common::send(
            &http,
            reqwest::Method::GET,
            &status_url,
            None,
            Some("s3cret-0123456789ab"),
        )
        .await;
        assert_eq!((status, body["data"]["ready"].as_bool()), (200, Some(true)));
        let (status, body) = common::send(
            &http,
            reqwest::Method::POST,
            &format!("{}/browser/shutdown", server.api),
            Some(json!({ "timeout_ms": 3000 })),
            Some("s3cret-0123456789ab"),
        )
        .await;
        assert_eq!((status, body), (200, json!({ "success": true })));
        assert!(!server.app.status().ready);
    });
}

/// `examples/rest_walkthrough.py` runs end to end against the engine.
#[test]
fn the_rest_walkthrough_example_runs() {
    let (h, _g) = shared();
    let dir = common::temp_dir("walkthrough");
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/rest_walkthrough.py");
    let output = std::process::Command::new("python3")
        .arg(&example)
        .arg(&h.server.api)
        .arg(h.url("/"))
        .current_dir(&dir)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("title: Fixture"), "{stdout}");
    assert!(stdout.contains("clicked at"), "{stdout}");
    let shot = std::fs::read(dir.join("walkthrough.webp")).unwrap();
    let (w, _, _) = decode_webp(&shot);
    assert_eq!(w, 1280);
}

// ---- doors: only clients drive the engine ----

#[test]
fn pages_the_engine_shows_cannot_drive_it() {
    let (h, _g) = shared();
    block_on(async {
        let victim = h.tab_on("/second").await;
        let attacker = h.tab_on("/second").await;
        let url = format!(
            "{}?engine={}&victim={victim}",
            h.url("/attack"),
            h.server.api
        );
        let (status, body) = h
            .post(&format!("/tabs/{attacker}/navigate"), json!({ "url": url }))
            .await;
        assert_eq!(status, 200, "{body}");
        // Let the page run until its requests have come back.
        let mut answered = Value::Null;
        for _ in 0..40 {
            h.post(&format!("/tabs/{attacker}/wait"), json!({ "ms": 250 }))
                .await;
            answered = h
                .eval(&attacker, "[window.sent, window.formAnswered === true]")
                .await;
            if answered == json!([3, true]) {
                break;
            }
        }
        assert_eq!(answered, json!([3, true]), "the page's requests came back");
        let (_, info) = h.get(&format!("/tabs/{victim}")).await;
        assert_eq!(info["title"], "Second", "no script ran in the other tab");
        let (status, list) = h.get("/tabs?userId=attack-probe").await;
        assert_eq!(status, 200, "{list}");
        assert_eq!(list, json!([]), "no tab was opened by the page");
        let (_, all) = h.get("/tabs").await;
        assert!(
            all.as_array()
                .unwrap()
                .iter()
                .all(|t| t["title"] != "pwned"),
            "{all}"
        );
        // A tab can't be sent to the engine itself (it would be the engine's
        // own origin, and its web UI's): refused before the browser sees it...
        let (status, body) = h
            .post(
                &format!("/tabs/{attacker}/navigate"),
                json!({ "url": format!("{}/tabs?userId=attack-probe", h.server.api) }),
            )
            .await;
        assert_eq!(status, 400, "{body}");
        assert!(
            body["error"].as_str().unwrap().contains("own address"),
            "{body}"
        );
        // ...and a page that sends itself there is stopped by the browser.
        let engine_origin = h.server.api.trim_end_matches("/api/v1").to_string();
        // The browser refuses the page's requests to the engine outright.
        let (_, fetched) = h
            .post(
                &format!("/tabs/{attacker}/execute"),
                json!({ "script": format!("fetch('{engine_origin}/healthz', {{mode: 'no-cors'}}).then(r => 'got ' + r.type).catch(e => 'refused')"), "await_promise": true }),
            )
            .await;
        assert_eq!(fetched["result"]["value"], json!("refused"), "{fetched}");
        let (status, body) = h
            .post(
                &format!("/tabs/{attacker}/execute"),
                json!({ "script": format!("location.href = '{engine_origin}/ui/'; true") }),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        h.post(&format!("/tabs/{attacker}/wait"), json!({ "ms": 500 }))
            .await;
        // It lands on the guard's refusal, sandboxed: not the engine's origin.
        let landed = h
            .eval(&attacker, "[window.origin, document.body.innerText]")
            .await;
        assert_eq!(landed[0], json!("null"), "{landed}");
        assert!(
            landed[1].as_str().unwrap().contains("only its own pages"),
            "{landed}"
        );
        let (status, body) = h
            .post(
                &format!("/tabs/{attacker}/execute"),
                json!({ "script": format!("fetch('/api/v1/tabs/{victim}/execute', {{ method: 'POST', headers: {{ 'Content-Type': 'application/json' }}, body: JSON.stringify({{ script: \"document.title = 'pwned'\" }}) }}).then(r => r.status).catch(() => 'refused')"), "await_promise": true }),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_ne!(body["result"]["value"], json!(200), "{body}");
        let (_, info) = h.get(&format!("/tabs/{victim}")).await;
        assert_eq!(info["title"], "Second");
        for tab in [victim, attacker] {
            h.delete(&format!("/tabs/{tab}")).await;
        }
    });
}

/// One raw request: method, path under the server's origin, headers, body.
async fn raw(
    h: &common::Harness,
    method: reqwest::Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, Value) {
    let mut request = h.http.request(method, url).timeout(Duration::from_secs(10));
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    if let Some(body) = body {
        request = request.body(body.to_string());
    }
    let response = request.send().await.expect("request failed");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[test]
fn foreign_origins_hosts_and_non_json_bodies_are_refused() {
    let (h, _g) = shared();
    block_on(async {
        let api = &h.server.api;
        let origin = api.trim_end_matches("/api/v1").to_string();
        let mcp = format!("{origin}/mcp");
        let port = origin.rsplit(':').next().unwrap().to_string();
        let json_ct = ("content-type", "application/json");
        let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let accept = ("accept", "application/json, text/event-stream");
        let evil_host = format!("evil.example:{port}");
        let site = h.site.clone();
        let cases: Vec<(
            reqwest::Method,
            String,
            Vec<(&str, &str)>,
            Option<&str>,
            u16,
            &str,
        )> = vec![
            (
                reqwest::Method::POST,
                format!("{api}/tabs"),
                vec![json_ct, ("origin", site.as_str())],
                Some("{}"),
                403,
                "FORBIDDEN",
            ),
            (
                reqwest::Method::POST,
                format!("{api}/tabs"),
                vec![json_ct, ("origin", "null")],
                Some("{}"),
                403,
                "FORBIDDEN",
            ),
            (
                reqwest::Method::GET,
                format!("{api}/tabs"),
                vec![("host", evil_host.as_str())],
                None,
                403,
                "FORBIDDEN",
            ),
            (
                reqwest::Method::GET,
                format!("{api}/tabs"),
                vec![("sec-fetch-site", "same-site")],
                None,
                403,
                "FORBIDDEN",
            ),
            (
                reqwest::Method::POST,
                format!("{api}/tabs"),
                vec![("content-type", "text/plain")],
                Some("{}"),
                415,
                "UNSUPPORTED_MEDIA_TYPE",
            ),
            (
                reqwest::Method::POST,
                format!("{api}/tabs"),
                vec![],
                Some("{}"),
                415,
                "UNSUPPORTED_MEDIA_TYPE",
            ),
            (
                reqwest::Method::POST,
                format!("{api}/tabs"),
                vec![("content-type", "application/x-www-form-urlencoded")],
                Some("{}"),
                415,
                "UNSUPPORTED_MEDIA_TYPE",
            ),
            (
                reqwest::Method::POST,
                mcp.clone(),
                vec![json_ct, accept, ("origin", "https://evil.example")],
                Some(initialize),
                403,
                "FORBIDDEN",
            ),
            (
                reqwest::Method::POST,
                mcp.clone(),
                vec![json_ct, accept, ("host", evil_host.as_str())],
                Some(initialize),
                403,
                "FORBIDDEN",
            ),
            (
                reqwest::Method::POST,
                mcp.clone(),
                vec![("content-type", "text/plain"), accept],
                Some(initialize),
                415,
                "UNSUPPORTED_MEDIA_TYPE",
            ),
        ];
        for (method, url, headers, body, status, code) in cases {
            let (got, answer) = raw(h, method.clone(), &url, &headers, body).await;
            assert_eq!(got, status, "{method} {url} {headers:?}: {answer}");
            assert_eq!(answer["code"], code, "{answer}");
            assert!(answer["error"].as_str().unwrap().len() > 10, "{answer}");
        }
        // The engine serves no page: its own origin is a tab sent to it.
        let (status, body) = raw(
            h,
            reqwest::Method::GET,
            &format!("{api}/tabs"),
            &[("origin", origin.as_str())],
            None,
        )
        .await;
        assert_eq!(status, 403, "{body}");
        // What clients send passes: loopback names with or without the port,
        // an empty body without a type.
        for host in [
            format!("localhost:{port}"),
            "127.0.0.1".to_string(),
            format!("[::1]:{port}"),
        ] {
            let (status, body) = raw(
                h,
                reqwest::Method::GET,
                &format!("{api}/tabs"),
                &[("host", host.as_str())],
                None,
            )
            .await;
            assert_eq!(status, 200, "{host}: {body}");
        }
        let (status, body) = raw(
            h,
            reqwest::Method::POST,
            &format!("{api}/browser/input-mode"),
            &[],
            None,
        )
        .await;
        assert_ne!(status, 415, "{body}");
        let (status, body) = raw(
            h,
            reqwest::Method::POST,
            &mcp,
            &[json_ct, accept],
            Some(initialize),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    });
}

#[test]
fn an_allowed_origin_may_call_the_engine() {
    let (h, _g) = shared();
    block_on(async {
        let server = common::start_server_with(common::temp_dir("plugins"), |o| {
            o.allowed_origins = vec!["https://dash.example".into()];
        })
        .await;
        let other = h.with_server(server);
        let url = format!("{}/tabs", other.server.api);
        let (status, body) = raw(
            &other,
            reqwest::Method::GET,
            &url,
            &[
                ("origin", "https://dash.example"),
                ("sec-fetch-site", "cross-site"),
            ],
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let (status, _) = raw(
            &other,
            reqwest::Method::GET,
            &url,
            &[("origin", "https://dash.example.evil")],
            None,
        )
        .await;
        assert_eq!(status, 403);
        other.server.app.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn only_web_urls_open_and_others_answer_400_at_once() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/second").await;
        for url in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "chrome://settings",
            "about:version",
            "view-source:http://127.0.0.1/",
        ] {
            let started = std::time::Instant::now();
            let (status, body) = h.post("/tabs", json!({ "url": url })).await;
            assert_eq!(status, 400, "POST /tabs {url}: {body}");
            assert!(
                body["error"].as_str().unwrap().contains("not allowed"),
                "{body}"
            );
            let (status, body) = h
                .post(&format!("/tabs/{tab}/navigate"), json!({ "url": url }))
                .await;
            assert_eq!(status, 400, "navigate {url}: {body}");
            // Refused before the browser sees it, not after a timeout.
            assert!(started.elapsed() < Duration::from_secs(10), "{url}");
        }
        let (_, info) = h.get(&format!("/tabs/{tab}")).await;
        assert_eq!(info["title"], "Second");
        let (status, body) = h
            .post(
                &format!("/tabs/{tab}/navigate"),
                json!({ "url": "data:text/html,<title>D</title>" }),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

// ---- the OpenAPI document ----

/// Expands the README's route shorthand: `A|B` methods, `{a,b}` choices,
/// `[x|y]` optional choices (nested).
fn expand(pattern: &str) -> Vec<String> {
    fn alternatives(s: &str) -> Vec<String> {
        // Split on top-level `|` or `,` (the caller says which).
        let mut out = vec![String::new()];
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '[' | '{' => {
                    let close = if c == '[' { ']' } else { '}' };
                    let mut depth = 1;
                    let mut inner = String::new();
                    for d in chars.by_ref() {
                        if d == c {
                            depth += 1;
                        } else if d == close {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        inner.push(d);
                    }
                    let choices: Vec<String> = if c == '{' && !inner.contains(',') {
                        vec![format!("{{{inner}}}")] // a path parameter
                    } else {
                        let sep = if c == '[' { '|' } else { ',' };
                        let mut parts = vec![String::new()];
                        let mut depth = 0;
                        for d in inner.chars() {
                            match d {
                                '[' | '{' => depth += 1,
                                ']' | '}' => depth -= 1,
                                _ => {}
                            }
                            if d == sep && depth == 0 {
                                parts.push(String::new());
                            } else {
                                parts.last_mut().unwrap().push(d);
                            }
                        }
                        let mut expanded: Vec<String> =
                            parts.iter().flat_map(|p| alternatives(p)).collect();
                        if c == '[' {
                            expanded.push(String::new());
                        }
                        expanded
                    };
                    out = out
                        .iter()
                        .flat_map(|prefix| choices.iter().map(move |ch| format!("{prefix}{ch}")))
                        .collect();
                }
                _ => out.iter_mut().for_each(|p| p.push(c)),
            }
        }
        out
    }
    let (methods, path) = pattern.split_once(' ').unwrap();
    methods
        .split('|')
        .flat_map(|m| {
            alternatives(path)
                .into_iter()
                .map(move |p| format!("{m} {p}"))
        })
        .collect()
}

/// `{anything}` as `{}`: parameter names differ between the README and the document.
fn shape(path: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for c in path.chars() {
        match c {
            '{' => {
                skipping = true;
                out.push('{');
            }
            '}' => {
                skipping = false;
                out.push('}');
            }
            _ if skipping => {}
            _ => out.push(c),
        }
    }
    out
}

/// The input strings under `schema` (references followed, once) that state
/// no `maxLength` (a pattern or an enum bounds one too).
fn unbounded_strings(doc: &Value, schema: &Value, at: &str, out: &mut Vec<String>) {
    fn walk(doc: &Value, schema: &Value, at: &str, out: &mut Vec<String>, depth: usize) {
        if depth > 12 {
            return;
        }
        if let Some(reference) = schema["$ref"].as_str() {
            let mut target = doc;
            for part in reference.trim_start_matches("#/").split('/') {
                target = &target[part];
            }
            return walk(doc, target, at, out, depth + 1);
        }
        let is_string = schema["type"] == "string"
            || schema["type"]
                .as_array()
                .is_some_and(|types| types.iter().any(|t| t == "string"));
        let bounded = schema.get("maxLength").is_some()
            || schema.get("enum").is_some()
            || schema.get("const").is_some()
            || schema.get("format").is_some_and(|f| f == "binary");
        if is_string && !bounded {
            out.push(at.to_string());
        }
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            walk(doc, property, &format!("{at}.{name}"), out, depth + 1);
        }
        for key in ["items", "additionalProperties"] {
            if schema[key].is_object() {
                walk(doc, &schema[key], &format!("{at}[]"), out, depth + 1);
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            for option in schema[key].as_array().into_iter().flatten() {
                walk(doc, option, at, out, depth + 1);
            }
        }
    }
    walk(doc, schema, at, out, 0)
}

#[test]
fn the_openapi_document_validates_and_lists_every_route_the_readme_names() {
    let (h, _g) = shared();
    block_on(async {
        let (status, doc) = h.get("/openapi.json").await;
        assert_eq!(status, 200, "{doc}");
        assert_eq!(doc["openapi"], "3.1.0");

        // A real validator (openapi-spec-validator, in the test venv).
        let file = common::temp_dir("openapi").join("openapi.json");
        std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
        let python = std::env::var_os("WABP_TEST_PYTHON")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-venv/bin/python")
            });
        assert!(
            python.is_file(),
            "run `bash scripts/test-python.sh` (scripts/test.sh does)"
        );
        let checked = std::process::Command::new(&python)
            .args([
                "-c",
                "import json, sys; from openapi_spec_validator import validate; validate(json.load(open(sys.argv[1]))); print('valid')",
            ])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            checked.status.success(),
            "the document does not validate: {}",
            String::from_utf8_lossy(&checked.stderr)
        );

        // Every route the README names is in it.
        let readme = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"),
        )
        .unwrap();
        let start = readme
            .find("Endpoints:")
            .expect("README lists its endpoints");
        let listing = &readme[start..start + readme[start..].find("\n\n").unwrap()];
        let documented: std::collections::HashSet<String> = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(path, methods)| {
                methods
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(move |m| format!("{} {}", m.to_uppercase(), shape(path)))
            })
            .collect();
        let mut named = 0;
        for part in listing.split('`').skip(1).step_by(2) {
            if !part.starts_with(|c: char| c.is_ascii_uppercase()) || !part.contains(" /") {
                continue;
            }
            for route in expand(part) {
                named += 1;
                assert!(
                    documented.contains(&shape(&route)),
                    "{route} is in the README but not in the OpenAPI document"
                );
            }
        }
        assert!(named > 60, "only {named} routes read from the README");

        // A plugin action is there with the schema its manifest declares.
        let click = &doc["paths"]["/tabs/{tab_id}/click"]["post"];
        let properties =
            &click["requestBody"]["content"]["application/json"]["schema"]["properties"];
        for field in ["x", "y", "wait_until", "screenshot"] {
            assert!(properties.get(field).is_some(), "click's {field}: {click}");
        }
        assert_eq!(click["x-mcp-tool"], "browser_click");
        assert_eq!(
            doc["paths"]["/tabs/{tab_id}/navigate"]["post"]["x-mcp-tool"],
            "browser_navigate"
        );
        // Every answer is typed: no success schema is left empty.
        let mut untyped = Vec::new();
        for (path, methods) in doc["paths"].as_object().unwrap() {
            for (method, op) in methods.as_object().unwrap() {
                for (status, response) in op["responses"].as_object().unwrap() {
                    if !status.starts_with('2') {
                        continue;
                    }
                    for (mime, content) in response["content"].as_object().unwrap() {
                        let schema = &content["schema"];
                        if schema.as_object().is_none_or(|o| o.is_empty()) {
                            untyped.push(format!("{method} {path} {mime}"));
                        }
                    }
                }
            }
        }
        assert!(untyped.is_empty(), "answers without a schema: {untyped:#?}");
        // Every string an input takes is bounded, and says its bound.
        let mut unbounded = Vec::new();
        for (path, methods) in doc["paths"].as_object().unwrap() {
            for (method, op) in methods.as_object().unwrap() {
                let body = &op["requestBody"]["content"]["application/json"]["schema"];
                unbounded_strings(&doc, body, &format!("{method} {path}"), &mut unbounded);
                for parameter in op["parameters"].as_array().into_iter().flatten() {
                    let name = format!("{method} {path} ?{}", parameter["name"]);
                    unbounded_strings(&doc, &parameter["schema"], &name, &mut unbounded);
                }
            }
        }
        assert!(
            unbounded.is_empty(),
            "strings without a maxLength: {unbounded:#?}"
        );
        // Answers are typed too.
        let created = &doc["paths"]["/tabs"]["post"]["responses"]["201"]["content"]["application/json"]
            ["schema"];
        assert!(created["properties"]["id"].is_object(), "{created}");
        let executed = &doc["paths"]["/tabs/{tab_id}/execute"]["post"]["responses"]["200"]["content"]
            ["application/json"]["schema"];
        assert!(
            executed["properties"]["result"]["properties"]["type"].is_object(),
            "{executed}"
        );
        // The envelope's events are typed: every event type is in the schema.
        let envelope =
            doc["paths"]["/tabs/{tab_id}/navigate"]["post"]["responses"]["200"].to_string();
        for kind in [
            "navigation",
            "dialog",
            "file_chooser",
            "select_open",
            "popup",
            "download_completed",
            "scroll",
            "tab_closed",
        ] {
            assert!(
                envelope.contains(&format!("\\\"{kind}\\\""))
                    || envelope.contains(&format!("\"{kind}\"")),
                "{kind} in the envelope schema"
            );
        }
    });
}

#[test]
fn bad_inputs_answer_400_naming_the_field() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/second").await;
        let cases = [
            (
                format!("/tabs/{tab}/navigate"),
                json!({ "url": 5 }),
                "\"url\"",
            ),
            (
                format!("/tabs/{tab}/navigate"),
                json!({}),
                "missing field \"url\"",
            ),
            (format!("/tabs/{tab}/wait"), json!({ "ms": -1 }), "\"ms\""),
            (format!("/tabs/{tab}/execute"), json!({}), "\"script\""),
            (
                format!("/tabs/{tab}/click"),
                json!({ "x": "left" }),
                "\"x\"",
            ),
            (
                "/tabs".to_string(),
                json!({ "index": "first" }),
                "\"index\"",
            ),
            (
                "/browser/input-mode".to_string(),
                json!({ "input_mode": "robot" }),
                "\"input_mode\"",
            ),
            (
                format!("/tabs/{tab}/navigate"),
                json!({ "url": "https://x", "wait_until": 3 }),
                "wait_until",
            ),
            // One key press per character: a page's worth is refused up
            // front, not cut off by the plugin's deadline.
            (
                format!("/tabs/{tab}/type"),
                json!({ "text": "a".repeat(5_001) }),
                "use fill",
            ),
        ];
        for (path, body, expected) in cases {
            let (status, answer) = h.post(&path, body.clone()).await;
            assert_eq!(status, 400, "{path} {body}: {answer}");
            assert_eq!(answer["code"], "INVALID_REQUEST", "{answer}");
            let message = answer["error"].as_str().unwrap();
            assert!(message.contains(expected), "{path} {body}: {message}");
        }
        // A point far out of range is refused, and the tab's input still works.
        let (status, err) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": 1e308, "y": 10 }),
            )
            .await;
        assert_eq!(status, 400, "{err}");
        assert!(
            err["error"].as_str().unwrap().contains("coordinates"),
            "{err}"
        );
        let (status, err) = h
            .post(
                &format!("/tabs/{tab}/scroll"),
                json!({ "x": 10, "y": 10, "delta_y": -1e308 }),
            )
            .await;
        assert_eq!(status, 400, "{err}");
        let (status, env) = h
            .post(&format!("/tabs/{tab}/click"), json!({ "x": 10, "y": 10 }))
            .await;
        assert_eq!(status, 200, "{env}");
        // The caller's id must be unambiguous.
        let (status, err) = h.get(&format!("/tabs/{tab}?userId=a&userId=b")).await;
        assert_eq!(status, 400, "{err}");
        let (status, err) = h
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "script": "1", "userId": 5 }),
            )
            .await;
        assert_eq!(status, 400, "{err}");
        for path in [
            format!("/tabs/{tab}/snapshot?offset=many"),
            format!("/tabs/{tab}/snapshot?format=xml"),
            "/history/actions?limit=lots".to_string(),
            "/tabs/%FF/state".to_string(),
        ] {
            let (status, answer) = h.get(&path).await;
            assert_eq!(status, 400, "{path}: {answer}");
            assert!(answer["error"].is_string(), "{path}: {answer}");
        }
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn engine_wide_operations_are_refused_to_a_user() {
    let (h, _g) = shared();
    block_on(async {
        let (status, body) = h.post("/browser/shutdown?userId=mallory", json!({})).await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(body["code"], "FORBIDDEN");
        let (status, body) = h
            .post(
                "/browser/input-mode",
                json!({ "input_mode": "human", "userId": "mallory" }),
            )
            .await;
        assert_eq!(status, 403, "{body}");
        let (_, mode) = h.get("/browser/input-mode").await;
        assert_eq!(mode["input_mode"], "agent");
        let (_, status) = h.get("/browser/status").await;
        assert_eq!(status["data"]["ready"], true, "still serving");
    });
}

/// A token file for alice (read, act; clear token) and bob (read, act,
/// script; stored as its SHA-256), next to an admin token.
pub fn write_token_file(dir: &std::path::Path) -> std::path::PathBuf {
    use sha2::Digest;
    let bob: String = sha2::Sha256::digest(b"bob-token-0123456789")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let path = dir.join("tokens.toml");
    std::fs::write(
        &path,
        format!(
            "[[token]]\ntoken = \"alice-token-0123456789\"\nuser = \"alice\"\nscopes = [\"read\", \"act\"]\n\n\
             [[token]]\nsha256 = \"{bob}\"\nuser = \"bob\"\nscopes = [\"read\", \"act\", \"script\"]\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn per_user_tokens_act_as_their_user_within_their_scopes() {
    let (h, _g) = shared();
    block_on(async {
        let dir = common::temp_dir("tokens");
        let tokens = write_token_file(&dir);
        let server = common::start_server_with(common::temp_dir("tokens-plugins"), |o| {
            o.auth_token = Some("admin-token-0123456789".into());
            o.auth_tokens_file = Some(tokens);
        })
        .await;
        let http = reqwest::Client::new();
        let api = server.api.clone();
        let call = |method: reqwest::Method, path: &str, body: Option<Value>, token: &str| {
            let (http, url, token) = (http.clone(), format!("{api}{path}"), token.to_string());
            async move { common::send(&http, method, &url, body, Some(&token)).await }
        };
        const ALICE: &str = "alice-token-0123456789";
        const BOB: &str = "bob-token-0123456789";
        const ADMIN: &str = "admin-token-0123456789";
        use reqwest::Method;

        // Unknown tokens: 401, whatever the path.
        for token in ["", "alice-token-012345678", "nobody-token-0123456789"] {
            let (status, body) = call(Method::GET, "/tabs", None, token).await;
            assert_eq!(
                (status, &body["code"]),
                (401, &json!("UNAUTHORIZED")),
                "{token}"
            );
        }

        // Alice acts as alice without saying so; her tab is hers.
        let (status, tab) = call(
            Method::POST,
            "/tabs",
            Some(json!({ "url": h.url("/") })),
            ALICE,
        )
        .await;
        assert_eq!(status, 201, "{tab}");
        let tab = tab["id"].as_str().unwrap().to_string();
        let (status, _) = call(
            Method::POST,
            &format!("/tabs/{tab}/navigate"),
            Some(json!({ "url": h.url("/second"), "screenshot": { "area": "none" } })),
            ALICE,
        )
        .await;
        assert_eq!(status, 200);
        let (_, tabs) = call(Method::GET, "/tabs", None, ALICE).await;
        assert!(tabs.to_string().contains(&tab), "{tabs}");
        // Naming someone else: 403, in the query or the body.
        let (status, body) = call(Method::GET, "/tabs?userId=bob", None, ALICE).await;
        assert_eq!(status, 403, "{body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("acts as user \"alice\""),
            "{body}"
        );
        let (status, _) = call(
            Method::POST,
            "/tabs",
            Some(json!({ "userId": "bob" })),
            ALICE,
        )
        .await;
        assert_eq!(status, 403);
        let (status, _) = call(Method::GET, "/tabs?userId=alice", None, ALICE).await;
        assert_eq!(status, 200);

        // Her scopes: no script, no admin.
        let (status, body) = call(
            Method::POST,
            &format!("/tabs/{tab}/execute"),
            Some(json!({ "script": "1" })),
            ALICE,
        )
        .await;
        assert_eq!(
            (status, &body["code"]),
            (403, &json!("FORBIDDEN")),
            "{body}"
        );
        assert!(
            body["error"].as_str().unwrap().contains("`script` scope"),
            "{body}"
        );
        let (status, _) = call(
            Method::POST,
            &format!("/tabs/{tab}/curl"),
            Some(json!({ "url": h.url("/api/data") })),
            ALICE,
        )
        .await;
        assert_eq!(status, 403);
        for (method, path, body) in [
            (Method::POST, "/browser/shutdown", json!({})),
            (
                Method::POST,
                "/browser/input-mode",
                json!({ "input_mode": "human" }),
            ),
        ] {
            let (status, answer) = call(method, path, Some(body), ALICE).await;
            assert_eq!(status, 403, "{path}: {answer}");
            assert!(
                answer["error"].as_str().unwrap().contains("`admin` scope"),
                "{answer}"
            );
        }

        // Bob sees none of alice's things: tab, history, network.
        let (_, tabs) = call(Method::GET, "/tabs", None, BOB).await;
        assert!(!tabs.to_string().contains(&tab), "{tabs}");
        let (status, _) = call(Method::GET, &format!("/tabs/{tab}"), None, BOB).await;
        assert_eq!(status, 404);
        let (status, _) = call(
            Method::POST,
            &format!("/tabs/{tab}/navigate"),
            Some(json!({ "url": h.url("/") })),
            BOB,
        )
        .await;
        assert_eq!(status, 404);
        let (_, alice_history) = call(Method::GET, "/history/actions", None, ALICE).await;
        assert!(alice_history.to_string().contains(&tab), "{alice_history}");
        let (_, bob_history) = call(Method::GET, "/history/actions", None, BOB).await;
        assert!(!bob_history.to_string().contains(&tab), "{bob_history}");
        let (_, bob_network) = call(Method::GET, "/network", None, BOB).await;
        assert!(
            !bob_network.to_string().contains("/second"),
            "{bob_network}"
        );
        // Bob's token (kept as a hash) may run script in his own tab.
        let (status, bob_tab) = call(Method::POST, "/tabs", Some(json!({})), BOB).await;
        assert_eq!(status, 201);
        let bob_tab = bob_tab["id"].as_str().unwrap();
        let (status, body) = call(
            Method::POST,
            &format!("/tabs/{bob_tab}/execute"),
            Some(json!({ "script": "6 * 7" })),
            BOB,
        )
        .await;
        assert_eq!(
            (status, &body["result"]["value"]),
            (200, &json!(42)),
            "{body}"
        );

        // The admin token may name any user, and act engine-wide.
        let (_, tabs) = call(Method::GET, "/tabs?userId=alice", None, ADMIN).await;
        assert!(tabs.to_string().contains(&tab), "{tabs}");
        let (status, _) = call(Method::GET, "/browser/input-mode", None, ADMIN).await;
        assert_eq!(status, 200);
        let (status, body) = call(
            Method::POST,
            "/browser/shutdown",
            Some(json!({ "timeout_ms": 3000 })),
            ADMIN,
        )
        .await;
        assert_eq!((status, body), (200, json!({ "success": true })));
    });
}

#[test]
fn off_loopback_without_a_token_the_engine_refuses_to_start() {
    let dir = common::temp_dir("off-loopback");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_wabp"))
        .args(["serve", "--host", "0.0.0.0", "--port", "0", "--session-dir"])
        .arg(&dir)
        .env_remove("WABP_AUTH_TOKEN")
        .env_remove("WABP_AUTH_TOKENS")
        .output()
        .expect("wabp runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0 without a token"),
        "{stderr}"
    );
    // A bad token file is refused too, naming the table and not the token.
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[[token]]\ntoken = \"abc-secret-0123456789\"\nscopes = [\"read\"]\n",
    )
    .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_wabp"))
        .args(["serve", "--port", "0", "--auth-tokens"])
        .arg(&bad)
        .arg("--session-dir")
        .arg(&dir)
        .output()
        .expect("wabp runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("[[token]] number 1: user is missing"),
        "{stderr}"
    );
    assert!(!stderr.contains("abc-secret"), "{stderr}");
}
