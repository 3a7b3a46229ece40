//! Execution control and every ABP event, against real headless Chromium:
//! frozen pages, virtual time, file choosers, selects, popups, closed tabs,
//! scrolls, downloads, and their endpoints.

mod common;

use std::time::Duration;

use common::{block_on, decode_webp, eventually, exclusive, shared};
use serde_json::{Value, json};

/// Clicks the centre of `selector` and lets the page run `ms` after it;
/// the envelope (asserted 200).
async fn click_and_wait(h: &common::Harness, tab: &str, selector: &str, ms: u64) -> Value {
    let (x, y) = h.center(tab, selector).await;
    let (status, env) = h
        .post(
            &format!("/tabs/{tab}/click"),
            json!({ "x": x, "y": y, "wait_until": { "type": "time", "duration_ms": ms } }),
        )
        .await;
    assert_eq!(status, 200, "{env}");
    env
}

fn event<'a>(envelope: &'a Value, kind: &str) -> Option<&'a Value> {
    envelope["events"]
        .as_array()?
        .iter()
        .find(|e| e["type"] == kind)
}

fn state_numbers(text: &str) -> (i64, i64) {
    let field = |name: &str| {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(-1)
    };
    (field("count"), field("now"))
}

async fn page_state(h: &common::Harness, tab: &str) -> String {
    let (status, body) = h
        .post(
            &format!("/tabs/{tab}/text"),
            json!({ "selector": "#state" }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["text"].as_str().unwrap().to_string()
}

async fn screenshot_bytes(h: &common::Harness, tab: &str) -> Vec<u8> {
    let response = h
        .http
        .get(format!(
            "{}/tabs/{tab}/screenshot?disable_markup=grid",
            h.server.api
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.bytes().await.unwrap().to_vec()
}

/// headless-shell runs the compositor driver by default (site isolation
/// on: Chromium allows no begin-frame control with it) and the
/// deterministic one without site isolation.
#[test]
fn the_driver_follows_the_browser_and_site_isolation() {
    for (harness, isolated) in [(shared(), true), (common::deterministic(), false)] {
        let (h, _g) = harness;
        block_on(async {
            let (_, status) = h.get("/browser/status").await;
            let executable = status["data"]["executable"].as_str().unwrap_or_default();
            let expected = if executable.contains("headless-shell") && !isolated {
                "deterministic"
            } else {
                "compositor"
            };
            assert_eq!(status["data"]["frame_driver"], expected, "{status}");
            assert_eq!(status["data"]["site_isolation"], isolated, "{status}");
            let tab = h.tab_on("/second").await;
            let (code, state) = h.get(&format!("/tabs/{tab}/execution")).await;
            assert_eq!(code, 200, "{state}");
            assert_eq!(state["frame_driver"], expected);
            assert_eq!(state["enabled"], true);
            assert_eq!(state["paused"], true);
            assert!(state["virtual_time_base_ms"].as_f64().unwrap() > 1.6e12);
            h.delete(&format!("/tabs/{tab}")).await;
        });
    }
}

#[test]
fn a_frozen_page_keeps_its_timers_clock_and_frames_still() {
    let (h, _g) = shared();
    block_on(frozen_page_keeps_still(h));
}

#[test]
fn a_frozen_page_keeps_still_on_the_deterministic_driver() {
    let (h, _g) = common::deterministic();
    block_on(frozen_page_keeps_still(h));
}

/// The timer page frozen, then run by a 1000 ms wait: what stood still and
/// what moved.
async fn frozen_page_keeps_still(h: &common::Harness) {
    let tab = h.tab_on("/timer").await;
    // Let it run a little so the state line is drawn.
    h.post(&format!("/tabs/{tab}/wait"), json!({ "ms": 300 }))
        .await;
    let first = page_state(h, &tab).await;
    let shot_a = screenshot_bytes(h, &tab).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let second = page_state(h, &tab).await;
    let shot_b = screenshot_bytes(h, &tab).await;
    assert_eq!(first, second, "timers and Date.now moved while frozen");
    assert!(shot_a == shot_b, "two frozen screenshots 1 s apart differ");

    // A wait lets it run for about the waited virtual time.
    let (status, env) = h
        .post(&format!("/tabs/{tab}/wait"), json!({ "ms": 1000 }))
        .await;
    assert_eq!(status, 200, "{env}");
    let after = page_state(h, &tab).await;
    let (count_a, now_a) = state_numbers(&first);
    let (count_b, now_b) = state_numbers(&after);
    let ticks = count_b - count_a;
    let advanced = now_b - now_a;
    let before_vt = env["screenshot_before"]["virtual_time_ms"]
        .as_f64()
        .unwrap();
    let after_vt = env["screenshot_after"]["virtual_time_ms"].as_f64().unwrap();
    eprintln!(
        "1000 ms wait: {ticks} ticks, page clock +{advanced} ms, envelope +{} ms",
        after_vt - before_vt
    );
    // The page ran for the waited time, even on a loaded machine: the
    // deterministic clock pays out the time it still owes at the freeze
    // (it used to drop it: 500 ms seen in a 1000 ms wait under load), and
    // the compositor's page clock runs on real time. The state line moves
    // in 100 ms ticks.
    assert!(
        (7..=16).contains(&ticks),
        "{ticks} timer ticks in a 1000 ms wait: {first} -> {after}"
    );
    assert!(
        (800..=1600).contains(&advanced),
        "clock advanced {advanced} ms in a 1000 ms wait"
    );
    // The envelope reports the time the page saw.
    assert!(
        (950.0..=1600.0).contains(&(after_vt - before_vt))
            && ((after_vt - before_vt) - advanced as f64).abs() <= 250.0,
        "envelope virtual times {before_vt} -> {after_vt}, page clock +{advanced} ms"
    );
    // While frozen, the next action's before frame is this after frame.
    let (_, next) = h
        .post(&format!("/tabs/{tab}/move"), json!({ "x": 5, "y": 5 }))
        .await;
    assert_eq!(
        next["screenshot_before"]["data"], env["screenshot_after"]["data"],
        "the before frame is reused while the page stayed frozen"
    );
    // The animation moved during the wait: the frame is not stuck.
    let shot_c = screenshot_bytes(h, &tab).await;
    assert!(shot_c != shot_b, "the page did not draw while running");
    let (w, _, _) = decode_webp(&shot_c);
    assert_eq!(w, 1280);
    h.delete(&format!("/tabs/{tab}")).await;
}

#[test]
fn execution_endpoint_pauses_and_resumes() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/timer").await;
        let (status, state) = h
            .post(
                &format!("/tabs/{tab}/execution"),
                json!({ "paused": false }),
            )
            .await;
        assert_eq!(status, 200, "{state}");
        assert_eq!(
            (state["enabled"].clone(), state["paused"].clone()),
            (json!(true), json!(false))
        );
        let running = page_state(h, &tab).await;
        let moved = eventually(Duration::from_secs(3), || async {
            let now = page_state(h, &tab).await;
            (now != running).then_some(now)
        })
        .await;
        assert!(moved.is_some(), "a resumed page runs on its own");

        let (_, state) = h
            .post(&format!("/tabs/{tab}/execution"), json!({ "paused": true }))
            .await;
        assert_eq!(state["paused"], true);
        let held = page_state(h, &tab).await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(page_state(h, &tab).await, held);
        let (_, got) = h.get(&format!("/tabs/{tab}/execution")).await;
        assert_eq!(got["paused"], true);

        let (status, err) = h.post(&format!("/tabs/{tab}/execution"), json!({})).await;
        assert_eq!(status, 400);
        assert!(err["error"].as_str().unwrap().contains("paused"), "{err}");
        let (status, _) = h
            .post(
                &format!("/tabs/{tab}/execution"),
                json!({ "paused": "yes" }),
            )
            .await;
        assert_eq!(status, 400);
        let (status, _) = h
            .post(
                &format!("/tabs/{tab}/execution"),
                json!({ "paused": true, "initial_virtual_time": "soon" }),
            )
            .await;
        assert_eq!(status, 400);
        let (status, err) = h.get("/tabs/tab_nope/execution").await;
        assert_eq!((status, err["code"].clone()), (404, json!("TAB_NOT_FOUND")));
    });
}

#[test]
fn file_chooser_events_and_endpoint() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/events").await;
        let (x, y) = h.center(&tab, "#file").await;
        let (status, env) = h
            .post(&format!("/tabs/{tab}/click"), json!({ "x": x, "y": y }))
            .await;
        assert_eq!(status, 200, "{env}");
        let chooser = event(&env, "file_chooser")
            .expect("file_chooser event")
            .clone();
        let id = chooser["data"]["id"].as_str().unwrap().to_string();
        assert!(id.starts_with("fc_"));
        assert_eq!(chooser["data"]["chooser_type"], "open");
        assert_eq!(chooser["data"]["multiple"], false);
        assert_eq!(chooser["data"]["pending"], true);
        assert_eq!(chooser["data"]["tab_id"], tab.as_str());
        assert_eq!(
            chooser["data"]["accepts"][0]["extensions"],
            json!(["txt", "csv"])
        );

        let (status, err) = h
            .post(
                &format!("/file-chooser/{id}"),
                json!({ "files": ["/nonexistent/x.txt"] }),
            )
            .await;
        assert_eq!(
            (status, err["code"].clone()),
            (400, json!("FILE_NOT_FOUND")),
            "{err}"
        );
        let (status, err) = h
            .post(&format!("/file-chooser/{id}"), json!({ "files": ["/tmp"] }))
            .await;
        assert_eq!(
            (status, err["code"].clone()),
            (400, json!("FILE_NOT_READABLE")),
            "{err}"
        );
        // The engine's own files (history, the browser profile's cookies)
        // are not for upload.
        let (_, data) = h.get("/browser/session-data").await;
        let history = data["data"]["database_path"].as_str().unwrap().to_string();
        let (status, err) = h
            .post(
                &format!("/file-chooser/{id}"),
                json!({ "files": [history] }),
            )
            .await;
        assert_eq!(status, 400, "{err}");
        assert!(
            err["error"].as_str().unwrap().contains("session folder"),
            "{err}"
        );
        let file = common::temp_dir("upload").join("notes.txt");
        std::fs::write(&file, "hello").unwrap();
        let (status, ok) = h
            .post(&format!("/file-chooser/{id}"), json!({ "files": [file] }))
            .await;
        assert_eq!((status, ok["success"].clone()), (200, json!(true)), "{ok}");
        let selected = &ok["events"][0];
        assert_eq!(selected["type"], "file_selected");
        assert_eq!(selected["data"]["id"], id.as_str());
        assert_eq!(selected["data"]["chooser_type"], "open");
        assert!(
            selected["data"]["files"][0]
                .as_str()
                .unwrap()
                .ends_with("notes.txt")
        );
        let log = h.eval(&tab, "window.log.join(',')").await;
        assert!(
            log.as_str().unwrap().contains("change:file:notes.txt"),
            "{log}"
        );
        let (status, err) = h
            .post(&format!("/file-chooser/{id}"), json!({ "files": [file] }))
            .await;
        assert_eq!(
            (status, err["code"].clone()),
            (404, json!("FILE_CHOOSER_NOT_PRESENT"))
        );

        // Multiple, then cancelled.
        let (x, y) = h.center(&tab, "#files").await;
        let (_, env) = h
            .post(&format!("/tabs/{tab}/click"), json!({ "x": x, "y": y }))
            .await;
        let chooser = event(&env, "file_chooser").expect("second chooser");
        assert_eq!(chooser["data"]["chooser_type"], "open_multiple");
        assert_eq!(chooser["data"]["multiple"], true);
        let id = chooser["data"]["id"].as_str().unwrap();
        let (status, ok) = h
            .post(&format!("/file-chooser/{id}"), json!({ "cancel": true }))
            .await;
        assert_eq!(
            (status, ok["cancelled"].clone()),
            (200, json!(true)),
            "{ok}"
        );
        assert_eq!(ok["events"][0]["type"], "file_chooser_cancelled");
        assert_eq!(ok["events"][0]["data"]["chooser_type"], "open_multiple");
    });
}

/// Answering a `<select>` runs the page's handlers on a frozen page: what
/// was read from the page as it froze no longer stands for it.
#[test]
fn a_select_answered_on_a_frozen_page_drops_what_was_read_before() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/events").await;
        h.eval(
            &tab,
            "document.body.style.minHeight = '3000px'; \
             document.getElementById('single').addEventListener('change', () => scrollTo(0, 400)); 0",
        )
        .await;
        let (x, y) = h.center(&tab, "#single").await;
        let none = json!({ "area": "none" });
        let (_, env) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": x, "y": y, "screenshot": none }),
            )
            .await;
        let open = event(&env, "select_open").expect("select_open event");
        let id = open["data"]["id"].as_str().unwrap().to_string();
        let (status, ok) = h
            .post(&format!("/select/{id}"), json!({ "indices": [2] }))
            .await;
        assert_eq!(status, 200, "{ok}");
        // An action that moves nothing: it starts where the handler left
        // the page, so it reports no scroll of its own.
        let (status, env) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": 5, "y": 5, "screenshot": none }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        assert!(event(&env, "scroll").is_none(), "{}", env["events"]);
        assert_eq!(env["scroll"]["vertical_px"], 400.0, "{}", env["scroll"]);
    });
}

#[test]
fn select_popups_are_intercepted_and_answered() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/events").await;
        let (x, y) = h.center(&tab, "#single").await;
        let (status, env) = h
            .post(&format!("/tabs/{tab}/click"), json!({ "x": x, "y": y }))
            .await;
        assert_eq!(status, 200, "{env}");
        let open = event(&env, "select_open")
            .expect("select_open event")
            .clone();
        let id = open["data"]["id"].as_str().unwrap().to_string();
        assert!(id.starts_with("sp_"));
        assert_eq!(open["data"]["multiple"], false);
        assert_eq!(
            open["data"]["options"][1],
            json!({ "index": 1, "label": "Banana", "selected": false, "disabled": false })
        );
        assert_eq!(open["data"]["options"][0]["selected"], true);

        let (status, err) = h
            .post(&format!("/select/{id}"), json!({ "indices": [7] }))
            .await;
        assert_eq!(status, 400, "{err}");
        let (status, err) = h
            .post(&format!("/select/{id}"), json!({ "indices": [0, 1] }))
            .await;
        assert_eq!(status, 400, "{err}");
        let (status, ok) = h
            .post(&format!("/select/{id}"), json!({ "indices": [2] }))
            .await;
        assert_eq!(status, 200, "{ok}");
        assert_eq!(ok["success"], true);
        assert_eq!(
            h.eval(&tab, "document.getElementById('single').value")
                .await,
            "Cherry"
        );
        let log = h.eval(&tab, "window.log.join(',')").await;
        assert!(
            log.as_str().unwrap().contains("input:single:Cherry")
                && log.as_str().unwrap().contains("change:single:Cherry"),
            "{log}"
        );
        let (status, err) = h
            .post(&format!("/select/{id}"), json!({ "indices": [1] }))
            .await;
        assert_eq!(status, 404, "{err}");
        assert!(
            err["error"]
                .as_str()
                .unwrap()
                .contains("not found or already closed")
        );

        // A multiple select is a list box in the page, as in a desktop
        // browser: its options take clicks there (Control adds one), and
        // no popup opens.
        let (x, y) = h.center(&tab, "#multi option:first-child").await;
        let (_, env) = h
            .post(&format!("/tabs/{tab}/click"), json!({ "x": x, "y": y }))
            .await;
        assert!(event(&env, "select_open").is_none(), "{}", env["events"]);
        let (x, y) = h.center(&tab, "#multi option:last-child").await;
        let (status, _) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": x, "y": y, "modifiers": ["Control"] }),
            )
            .await;
        assert_eq!(status, 200);
        let picked = h
            .eval(&tab, "Array.from(document.getElementById('multi').selectedOptions).map(o => o.text).join('|')")
            .await;
        assert_eq!(picked, "Red|Blue");
        let (status, _) = h
            .post("/select/sp_missing", json!({ "cancel": true }))
            .await;
        assert_eq!(status, 404);
    });
}

#[test]
fn popups_become_tabs_and_a_script_close_is_reported() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/events").await;
        let env = click_and_wait(&h, &tab, "#openwin", 800).await;
        let popup = event(&env, "popup").expect("popup event").clone();
        assert_eq!(popup["data"]["source_tab_id"], tab.as_str());
        assert_eq!(popup["data"]["popup_type"], "window");
        assert!(
            popup["data"]["url"]
                .as_str()
                .is_some_and(|u| u.ends_with("/closer")),
            "{popup}"
        );
        let new_tab = popup["data"]["new_tab_id"].as_str().unwrap().to_string();
        let (_, tabs) = h.get("/tabs").await;
        assert!(
            tabs.as_array()
                .unwrap()
                .iter()
                .any(|t| t["id"] == new_tab.as_str()),
            "{tabs}"
        );

        // The popup is a tab like any other; its script closes it.
        let listed = eventually(Duration::from_secs(5), || async {
            let (_, info) = h.get(&format!("/tabs/{new_tab}")).await;
            info["url"]
                .as_str()
                .filter(|u| u.ends_with("/closer"))
                .map(str::to_string)
        })
        .await;
        assert!(listed.is_some(), "popup loaded /closer");
        let (x, y) = h.center(&new_tab, "#close").await;
        let (status, env) = h
            .post(
                &format!("/tabs/{new_tab}/click"),
                json!({ "x": x, "y": y, "wait_until": { "timeout_ms": 5000 } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        let closed = event(&env, "tab_closed").expect("tab_closed event");
        assert_eq!(closed["data"]["reason"], "script");
        assert_eq!(env["timing"]["wait_reason"], "tab_closed");
        let (status, _) = h.get(&format!("/tabs/{new_tab}")).await;
        assert_eq!(status, 404);

        let (x, y) = h.center(&tab, "#newtab").await;
        let (_, env) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": x, "y": y, "wait_until": { "type": "time", "duration_ms": 800 } }),
            )
            .await;
        let popup = event(&env, "popup").expect("target=_blank popup");
        assert_eq!(popup["data"]["popup_type"], "tab");
        assert!(
            popup["data"]["url"]
                .as_str()
                .is_some_and(|u| u.ends_with("/second")),
            "{popup}"
        );
    });
}

#[test]
fn scrolling_reports_delta_position_and_source() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/events").await;
        let (status, env) = h
            .post(
                &format!("/tabs/{tab}/scroll"),
                json!({ "x": 640, "y": 600, "delta_y": 300 }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        let scroll = event(&env, "scroll").unwrap_or_else(|| panic!("scroll event: {env}"));
        assert_eq!(scroll["data"]["source"], "wheel");
        assert_eq!(scroll["data"]["delta"]["direction"], "down");
        assert_eq!(scroll["data"]["delta"]["y"], 300.0);
        assert_eq!(scroll["data"]["position"]["vertical_px"], 300.0);
        assert_eq!(env["scroll"]["vertical_px"], 300.0);

        let (_, env) = h
            .post(
                &format!("/tabs/{tab}/keyboard/press"),
                json!({ "key": "Home" }),
            )
            .await;
        let scroll = event(&env, "scroll").expect("keyboard scroll event");
        assert_eq!(scroll["data"]["source"], "keyboard");
        assert_eq!(scroll["data"]["delta"]["direction"], "up");
        assert_eq!(env["scroll"]["vertical_px"], 0.0);

        // Nothing moved: no scroll event.
        let (_, env) = h
            .post(&format!("/tabs/{tab}/move"), json!({ "x": 10, "y": 10 }))
            .await;
        assert!(event(&env, "scroll").is_none(), "{}", env["events"]);
    });
}

#[test]
fn downloads_are_saved_listed_and_cancellable() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/events").await;
        let env = click_and_wait(&h, &tab, "#download", 1500).await;
        let started = event(&env, "download_started")
            .expect("download_started")
            .clone();
        assert_eq!(started["data"]["filename"], "report.txt");
        assert_eq!(started["data"]["mime_type"], "text/plain");
        let id = started["data"]["download_id"].as_str().unwrap().to_string();
        let done = eventually(Duration::from_secs(5), || async {
            let (_, d) = h.get(&format!("/downloads/{id}")).await;
            (d["state"] == "completed").then_some(d)
        })
        .await
        .expect("download completes");
        assert_eq!(done["percent_complete"], 100.0);
        assert_eq!(done["bytes_received"], 18);
        let path = done["path"].as_str().unwrap();
        assert!(path.ends_with("report.txt"), "{path}");
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            "quarterly numbers\n"
        );
        if let Some(completed) = event(&env, "download_completed") {
            assert_eq!(completed["data"]["path"], path);
        }

        let (_, list) = h.get("/downloads?state=completed&limit=10").await;
        assert!(
            list["downloads"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["id"] == id.as_str())
        );
        let (status, _) = h.get("/downloads?state=sideways").await;
        assert_eq!(status, 400);
        let (status, err) = h.get("/downloads/dl_nope").await;
        assert_eq!(
            (status, err["code"].clone()),
            (404, json!("DOWNLOAD_NOT_FOUND"))
        );
        let (status, _) = h.post(&format!("/downloads/{id}/cancel"), json!({})).await;
        assert_eq!(status, 400, "a completed download can't be cancelled");

        let (x, y) = h.center(&tab, "#slowdl").await;
        let (_, env) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": x, "y": y, "wait_until": { "type": "time", "duration_ms": 1000 } }),
            )
            .await;
        let slow = event(&env, "download_started").expect("slow download started");
        let slow_id = slow["data"]["download_id"].as_str().unwrap().to_string();
        let (_, d) = h.get(&format!("/downloads/{slow_id}")).await;
        assert_eq!(d["state"], "in_progress", "{d}");
        assert!(d["percent_complete"].as_f64().unwrap() < 100.0);
        let (status, ok) = h
            .post(&format!("/downloads/{slow_id}/cancel"), json!({}))
            .await;
        assert_eq!((status, ok["success"].clone()), (200, json!(true)), "{ok}");
        let (_, d) = h.get(&format!("/downloads/{slow_id}")).await;
        assert_eq!(d["state"], "cancelled");
        let (_, list) = h.get("/downloads?state=cancelled").await;
        assert!(
            list["downloads"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["id"] == slow_id.as_str())
        );
    });
}

#[test]
fn human_mode_blocks_the_new_endpoints_too() {
    let (h, _g) = exclusive();
    block_on(async {
        let tab = h.tab_on("/timer").await;
        let (status, _) = h
            .post("/browser/input-mode", json!({ "input_mode": "human" }))
            .await;
        assert_eq!(status, 200);
        // A person uses the page: it runs.
        let first = page_state(h, &tab).await;
        let moved = eventually(Duration::from_secs(3), || async {
            let now = page_state(h, &tab).await;
            (now != first).then_some(())
        })
        .await;
        for (path, body) in [
            (format!("/tabs/{tab}/execution"), json!({ "paused": true })),
            ("/select/sp_x".to_string(), json!({ "cancel": true })),
            ("/file-chooser/fc_x".to_string(), json!({ "cancel": true })),
        ] {
            let (status, err) = h.post(&path, body).await;
            assert_eq!(status, 409, "{path}: {err}");
        }
        let (status, _) = h.get(&format!("/tabs/{tab}/execution")).await;
        assert_eq!(status, 200);
        let (status, _) = h
            .post("/browser/input-mode", json!({ "input_mode": "agent" }))
            .await;
        assert_eq!(status, 200);
        assert!(moved.is_some(), "the page ran in human mode");
        let (_, state) = h.get(&format!("/tabs/{tab}/execution")).await;
        assert_eq!(state["paused"], true, "agent mode freezes it again");
    });
}

/// Full Chromium (what `--headed` and `--connect` get) runs the compositor
/// driver: frozen by the page clock instead of virtual time, in every frame,
/// with captures and input that don't wait for a frame.
#[test]
fn the_compositor_driver_freezes_full_chromium_too() {
    let chromium = std::path::Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        panic!("this test needs Debian's chromium (apt-get install chromium)");
    }
    // Its own browser: alone, so the shared engine's timing tests keep their CPU.
    let (shared_harness, _g) = exclusive();
    block_on(async {
        let server = common::start_server_with(common::temp_dir("plugins-compositor"), |o| {
            o.launch = wabp_core::browser::LaunchMode::Binary(chromium.into());
        })
        .await;
        let h = shared_harness.with_server(server);
        let (_, status) = h.get("/browser/status").await;
        assert_eq!(status["data"]["frame_driver"], "compositor", "{status}");
        let tab = h.tab_on("/timer").await;
        let (_, state) = h.get(&format!("/tabs/{tab}/execution")).await;
        assert_eq!(state["frame_driver"], "compositor");
        assert_eq!(state["paused"], true);

        h.post(&format!("/tabs/{tab}/wait"), json!({ "ms": 300 }))
            .await;
        let first = page_state(&h, &tab).await;
        let shot_a = screenshot_bytes(&h, &tab).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(
            page_state(&h, &tab).await,
            first,
            "timers and Date.now moved while frozen"
        );
        // rAF (the sliding box) and the CSS animation held too.
        assert!(
            screenshot_bytes(&h, &tab).await == shot_a,
            "two frozen screenshots 1 s apart differ"
        );

        let (status, env) = h
            .post(&format!("/tabs/{tab}/wait"), json!({ "ms": 1000 }))
            .await;
        assert_eq!(status, 200, "{env}");
        let after = page_state(&h, &tab).await;
        let (count_a, now_a) = state_numbers(&first);
        let (count_b, now_b) = state_numbers(&after);
        // The page clock runs on real time while thawed: a 1000 ms wait is
        // about 1000 ms of page time, and the frozen second is not in it.
        assert!(
            (5..=16).contains(&(count_b - count_a)),
            "{} timer ticks in a 1000 ms wait: {first} -> {after}",
            count_b - count_a
        );
        assert!(
            (700..=1600).contains(&(now_b - now_a)),
            "page clock advanced {} ms in a 1000 ms wait",
            now_b - now_a
        );
        let vt = env["screenshot_after"]["virtual_time_ms"].as_f64().unwrap()
            - env["screenshot_before"]["virtual_time_ms"]
                .as_f64()
                .unwrap();
        assert!(
            (700.0..=1600.0).contains(&vt),
            "envelope virtual times moved {vt} ms in a 1000 ms wait"
        );
        assert!(
            screenshot_bytes(&h, &tab).await != shot_a,
            "the page did not draw while running"
        );
        let held = page_state(&h, &tab).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(
            page_state(&h, &tab).await,
            held,
            "frozen again after the wait"
        );

        let (x, y) = h.center(&tab, "#spin").await;
        let (status, env) = h
            .post(&format!("/tabs/{tab}/click"), json!({ "x": x, "y": y }))
            .await;
        assert_eq!(status, 200, "{env}");
        assert!(env["screenshot_after"]["data"].is_string());
        // Neither input nor the capture waited out a stalled frame.
        assert!(
            env["wait_reason"] != "timeout",
            "the click waited out its timeout: {}",
            env["timing"]
        );

        // Frames freeze with their page, a cross-site one (out of process)
        // included.
        let frames_tab = frames_freeze_with_their_page(&h).await;
        assert_eq!(h.out_of_process_frames(&frames_tab), 1);

        // A document that starts while the tab is frozen starts frozen.
        h.eval(&frames_tab, "location.href = '/timer'; 0").await;
        let loaded = eventually(Duration::from_secs(5), || async {
            let (_, body) = h
                .post(
                    &format!("/tabs/{frames_tab}/text"),
                    json!({ "selector": "#state" }),
                )
                .await;
            body["text"].as_str().map(str::to_string)
        })
        .await;
        assert_eq!(
            loaded.as_deref(),
            Some("count=0"),
            "the new document's timers ran while the tab was frozen"
        );
        h.server.app.shutdown(Duration::from_secs(5)).await;
    });
}

/// `--no-pause`: pages run between actions until a client turns execution
/// control on, which takes `initial_virtual_time` the first time.
#[test]
fn no_pause_runs_freely_until_execution_control_is_enabled() {
    // Its own browser: alone, so the shared engine's timing tests keep their CPU.
    let (shared_harness, _g) = exclusive();
    block_on(async {
        let server = common::start_server_with(common::temp_dir("plugins-nopause"), |o| {
            o.pause = false;
        })
        .await;
        let h = shared_harness.with_server(server);
        let (_, status) = h.get("/browser/status").await;
        assert_eq!(status["data"]["frame_driver"], "free-running", "{status}");
        let tab = h.tab_on("/timer").await;
        let (_, state) = h.get(&format!("/tabs/{tab}/execution")).await;
        assert_eq!(
            (state["enabled"].clone(), state["paused"].clone()),
            (json!(false), json!(false))
        );
        let first = page_state(&h, &tab).await;
        let moved = eventually(Duration::from_secs(3), || async {
            let now = page_state(&h, &tab).await;
            (now != first).then_some(())
        })
        .await;
        assert!(
            moved.is_some(),
            "a page runs between actions with --no-pause"
        );

        let (status, state) = h
            .post(
                &format!("/tabs/{tab}/execution"),
                json!({ "paused": true, "initial_virtual_time": 1700000000.0 }),
            )
            .await;
        assert_eq!(status, 200, "{state}");
        assert_eq!(state["enabled"], true);
        assert_eq!(state["paused"], true);
        assert_eq!(state["virtual_time_base_ms"], 1700000000000.0);
        assert_eq!(state["frame_driver"], "compositor");
        let clock = h.eval(&tab, "Date.now()").await.as_f64().unwrap();
        assert!(
            (1.7e12..1.7e12 + 60_000.0).contains(&clock),
            "page clock {clock}"
        );
        let held = page_state(&h, &tab).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(page_state(&h, &tab).await, held, "frozen once enabled");
        h.server.app.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn file_choosers_upload_only_from_the_upload_folders() {
    let (h, _g) = shared();
    block_on(async {
        let allowed = common::temp_dir("upload-root");
        let outside = common::temp_dir("upload-outside");
        let server = common::start_server_with(common::temp_dir("upload-plugins"), |o| {
            o.upload_dirs = vec![allowed.clone()];
        })
        .await;
        let h = h.with_server(server);
        let tab = h.tab_on("/events").await;
        let (x, y) = h.center(&tab, "#file").await;
        let (status, env) = h
            .post(&format!("/tabs/{tab}/click"), json!({ "x": x, "y": y }))
            .await;
        assert_eq!(status, 200, "{env}");
        let id = event(&env, "file_chooser").expect("file_chooser event")["data"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let secret = outside.join("secret.txt");
        std::fs::write(&secret, "no").unwrap();
        // Outside, existing or not, or reached by `..` from inside: the
        // same 403, which says nothing of the file.
        let escape = format!(
            "{}/../{}/secret.txt",
            allowed.display(),
            outside.file_name().unwrap().to_string_lossy()
        );
        let mut answers = Vec::new();
        for file in [
            secret.display().to_string(),
            outside.join("missing.txt").display().to_string(),
            "/etc/passwd".to_string(),
            escape,
        ] {
            let (status, err) = h
                .post(&format!("/file-chooser/{id}"), json!({ "files": [file] }))
                .await;
            assert_eq!(
                (status, &err["code"]),
                (403, &json!("FORBIDDEN")),
                "{file}: {err}"
            );
            let said = err["error"].as_str().unwrap().replace(&file, "FILE");
            assert!(said.contains("not under an upload folder"), "{said}");
            answers.push(said);
        }
        assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
        // Inside: a missing file may say so; a present one is uploaded.
        let (status, err) = h
            .post(
                &format!("/file-chooser/{id}"),
                json!({ "files": [allowed.join("missing.txt")] }),
            )
            .await;
        assert_eq!(
            (status, &err["code"]),
            (400, &json!("FILE_NOT_FOUND")),
            "{err}"
        );
        let notes = allowed.join("notes.txt");
        std::fs::write(&notes, "hello").unwrap();
        let (status, ok) = h
            .post(&format!("/file-chooser/{id}"), json!({ "files": [notes] }))
            .await;
        assert_eq!((status, &ok["success"]), (200, &json!(true)), "{ok}");

        // A user uploads from their own folder under the session's uploads/,
        // not from another user's.
        let (_, data) = h.get("/browser/session-data").await;
        let session = std::path::Path::new(data["data"]["database_path"].as_str().unwrap())
            .parent()
            .unwrap()
            .to_path_buf();
        let (status, tab) = h
            .post("/tabs", json!({ "userId": "ula", "url": h.url("/events") }))
            .await;
        assert_eq!(status, 201, "{tab}");
        let tab = tab["id"].as_str().unwrap().to_string();
        let (_, at) = h
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "userId": "ula", "script": "(() => { const r = document.querySelector('#file').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()" }),
            )
            .await;
        let (x, y) = (&at["result"]["value"][0], &at["result"]["value"][1]);
        let (_, env) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "userId": "ula", "x": x, "y": y }),
            )
            .await;
        let id = event(&env, "file_chooser").expect("file_chooser event")["data"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let theirs = session.join("uploads/other-user");
        std::fs::create_dir_all(&theirs).unwrap();
        std::fs::write(theirs.join("secret.txt"), "no").unwrap();
        let (status, err) = h
            .post(
                &format!("/file-chooser/{id}"),
                json!({ "userId": "ula", "files": [theirs.join("secret.txt")] }),
            )
            .await;
        assert_eq!(status, 403, "{err}");
        let own = session.join("uploads/ula/cv.txt");
        std::fs::write(&own, "mine").unwrap();
        let (status, ok) = h
            .post(
                &format!("/file-chooser/{id}"),
                json!({ "userId": "ula", "files": [own] }),
            )
            .await;
        assert_eq!((status, &ok["success"]), (200, &json!(true)), "{ok}");
        h.server
            .app
            .shutdown(std::time::Duration::from_secs(5))
            .await;
    });
}

#[test]
fn a_download_past_the_size_limit_is_stopped() {
    let (h, _g) = shared();
    block_on(async {
        let server = common::start_server_with(common::temp_dir("dl-limit-plugins"), |o| {
            o.max_download_mb = 1;
        })
        .await;
        let h = h.with_server(server);
        let tab = h.tab_on("/events").await;
        // 6.4 MB, announced by its Content-Length.
        click_and_wait(&h, &tab, "#slowdl", 1000).await;
        let stopped = eventually(Duration::from_secs(10), || async {
            let (_, list) = h.get("/downloads").await;
            list["downloads"]
                .as_array()?
                .iter()
                .find(|d| d["filename"] == "slow.bin" && d["state"] == "failed")
                .cloned()
        })
        .await
        .expect("the download is stopped");
        assert!(
            stopped["error"]
                .as_str()
                .unwrap()
                .contains("1 MB download limit"),
            "{stopped}"
        );
        assert!(
            stopped["bytes_received"].as_u64().unwrap() < 6_553_600,
            "{stopped}"
        );
        let partial = std::path::Path::new(stopped["path"].as_str().unwrap());
        let gone = eventually(Duration::from_secs(5), || async {
            (!partial.exists()).then_some(())
        })
        .await;
        assert!(
            gone.is_some(),
            "the partial file is removed: {}",
            partial.display()
        );
        h.server.app.shutdown(Duration::from_secs(5)).await;
    });
}

/// Opens the frame-timers page (a same-site and a cross-site frame posting
/// ticks) and checks both frames ran, then stayed still while frozen; the
/// tab.
async fn frames_freeze_with_their_page(h: &common::Harness) -> String {
    let frames_tab = h.tab_on("/frame-timers").await;
    h.post(&format!("/tabs/{frames_tab}/wait"), json!({ "ms": 500 }))
        .await;
    // A cross-site frame takes its order by message: let it arrive.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let ticks = || async {
        let (_, body) = h
            .post(
                &format!("/tabs/{frames_tab}/text"),
                json!({ "selector": "#ticks" }),
            )
            .await;
        body["text"].as_str().unwrap_or_default().to_string()
    };
    let held = ticks().await;
    let parsed: Value = serde_json::from_str(&held).unwrap_or_default();
    assert!(
        parsed["same"].as_i64().unwrap_or(0) >= 3 && parsed["cross"].as_i64().unwrap_or(0) >= 3,
        "both frames ran before the freeze: {held}"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(ticks().await, held, "a frame's timers moved while frozen");
    frames_tab
}

/// With site isolation (the default) the cross-site frame runs in a
/// renderer of its own; the freezes, thaws and grants reach it too.
#[test]
fn out_of_process_frames_freeze_with_their_page() {
    let (h, _g) = shared();
    block_on(async {
        let tab = frames_freeze_with_their_page(h).await;
        assert_eq!(
            h.out_of_process_frames(&tab),
            1,
            "the cross-site frame is out of process"
        );
        // Thawed by a wait, it runs again.
        let (_, before) = h
            .post(
                &format!("/tabs/{tab}/text"),
                json!({ "selector": "#ticks" }),
            )
            .await;
        h.post(&format!("/tabs/{tab}/wait"), json!({ "ms": 500 }))
            .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (_, after) = h
            .post(
                &format!("/tabs/{tab}/text"),
                json!({ "selector": "#ticks" }),
            )
            .await;
        let count = |v: &Value| {
            serde_json::from_str::<Value>(v["text"].as_str().unwrap_or("{}"))
                .unwrap_or_default()["cross"]
                .as_i64()
                .unwrap_or(0)
        };
        assert!(count(&after) > count(&before), "{before} then {after}");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

/// Without site isolation the frames share their page's renderer, on the
/// deterministic driver.
#[test]
fn in_process_frames_freeze_with_their_page() {
    let (h, _g) = common::deterministic();
    block_on(async {
        let tab = frames_freeze_with_their_page(h).await;
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

/// Clicks `selector` with `options` merged into the request; the envelope
/// (asserted 200) and the wall time the call took.
async fn click_with(
    h: &common::Harness,
    tab: &str,
    selector: &str,
    options: Value,
) -> (Value, Duration) {
    let (x, y) = h.center(tab, selector).await;
    let mut body = json!({ "x": x, "y": y });
    for (key, value) in options.as_object().unwrap() {
        body[key] = value.clone();
    }
    let started = std::time::Instant::now();
    let (status, env) = h.post(&format!("/tabs/{tab}/click"), body).await;
    assert_eq!(status, 200, "{env}");
    (env, started.elapsed())
}

/// `action_complete` settles on the page's clock (the default engine): the
/// quiet stretches of its windows are fast-forwarded on the page, and what
/// the page sets off meanwhile is still waited for.
#[test]
fn the_settle_is_fast_forwarded_on_the_page_clock() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/settle").await;
        // A timer 100 ms after the click starts an 800 ms request.
        let (env, _) = click_with(
            h,
            &tab,
            "#fetch-later",
            json!({ "network": { "types": ["Fetch"] }, "screenshot": { "area": "none" } }),
        )
        .await;
        assert_eq!(env["timing"]["wait_reason"], "settled", "{}", env["timing"]);
        assert_eq!(env["network"]["total"], 1, "{}", env["network"]);
        assert_eq!(env["network"]["completed"], 1, "{}", env["network"]);
        let (_, out) = h
            .post(&format!("/tabs/{tab}/text"), json!({ "selector": "#out" }))
            .await;
        assert_eq!(out["text"], "slow data arrived");

        // A timer 100 ms after the click navigates; a link navigates at once.
        for button in ["#go-later", "#link"] {
            h.post(
                &format!("/tabs/{tab}/navigate"),
                json!({ "url": h.url("/settle"), "screenshot": { "area": "none" } }),
            )
            .await;
            let (env, _) =
                click_with(h, &tab, button, json!({ "screenshot": { "area": "none" } })).await;
            let navigation = event(&env, "navigation")
                .unwrap_or_else(|| panic!("{button}: no navigation in {}", env["events"]));
            assert!(
                navigation["data"]["url"]
                    .as_str()
                    .is_some_and(|u| u.ends_with("/second")),
                "{navigation}"
            );
        }

        // A 5 s settle is page time: a timer 4 s away runs within it, and
        // the page's clock runs ahead of the wall clock (on the wall clock
        // the page can only run behind it: it is frozen around the action).
        h.post(
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url("/settle"), "screenshot": { "area": "none" } }),
        )
        .await;
        let (env, wall) = click_with(
            h,
            &tab,
            "#far",
            json!({ "wait_until": { "type": "action_complete", "settle_ms": 5000 }, "screenshot": { "area": "none" } }),
        )
        .await;
        assert_eq!(env["timing"]["wait_reason"], "settled");
        let times = h.eval(&tab, "[window.t0, window.t1]").await;
        let page_ms = times[1].as_f64().expect("the 4 s timer ran") - times[0].as_f64().unwrap();
        assert!(page_ms >= 4000.0, "{times}");
        assert!(
            page_ms > wall.as_secs_f64() * 1000.0,
            "the page saw {page_ms} ms in a click that took {wall:?}"
        );

        // CSS transitions skip along with the clock: the 400 ms fade is
        // over in the after frame of a click that settles for 500 ms.
        let (env, _) = click_with(
            h,
            &tab,
            "#fade-on",
            json!({ "wait_until": { "type": "action_complete", "settle_ms": 500 }, "screenshot": { "markup": [] } }),
        )
        .await;
        let (width, _, rgba) = common::decode_screenshot(&env["screenshot_after"]);
        let at = ((70 * width + 350) * 4) as usize;
        assert!(
            rgba[at] > 200 && rgba[at + 2] < 60,
            "the faded box is {:?}",
            &rgba[at..at + 3]
        );

        // A timer that raises an alert during a fast-forward: the wait
        // ends on the dialog, which is answered; the page goes on.
        let (env, _) = click_with(
            h,
            &tab,
            "#alert-later",
            json!({ "screenshot": { "area": "none" } }),
        )
        .await;
        assert_eq!(env["timing"]["wait_reason"], "dialog", "{}", env["timing"]);
        let dialog = event(&env, "dialog").unwrap_or_else(|| panic!("{}", env["events"]));
        assert_eq!(dialog["data"]["message"], "later");
        let (status, answer) = h
            .post(&format!("/tabs/{tab}/dialog/accept"), json!({}))
            .await;
        assert_eq!(status, 200, "{answer}");
        let (_, out) = h
            .post(&format!("/tabs/{tab}/text"), json!({ "selector": "#out" }))
            .await;
        assert_eq!(out["text"], "alert answered");

        // On the wall clock the page runs at its own pace for the whole
        // window.
        let (env, wall) = click_with(
            h,
            &tab,
            "#far",
            json!({ "wait_until": { "type": "action_complete", "settle_ms": 1000, "clock": "wall" }, "screenshot": { "area": "none" } }),
        )
        .await;
        assert_eq!(env["timing"]["wait_reason"], "settled");
        assert!(wall >= Duration::from_millis(1000), "{wall:?}");
        let (x, y) = h.center(&tab, "#far").await;
        let (status, err) = h
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": x, "y": y, "wait_until": { "clock": "sundial" } }),
            )
            .await;
        assert_eq!(status, 400);
        assert!(
            err["error"].as_str().unwrap().contains("wait_until.clock"),
            "{err}"
        );
        h.delete(&format!("/tabs/{tab}")).await;
    });
}
