//! The rest of ABP's surface: drags, held buttons, shortcuts, inserted text,
//! hover delays and the other rows of the spec's status table, each proven
//! by what the page shows. Real headless Chromium against pages served on
//! 127.0.0.1.

mod common;

use common::{Harness, block_on, shared};
use serde_json::{Value, json};

/// POSTs an action and expects its envelope.
async fn act(h: &Harness, tab: &str, path: &str, body: Value) -> Value {
    let (status, envelope) = h.post(&format!("/tabs/{tab}/{path}"), body).await;
    assert_eq!(status, 200, "{path}: {envelope}");
    assert!(
        envelope["screenshot_after"].is_object(),
        "{path}: the action's envelope: {} {} {}",
        envelope["result"],
        envelope["events"],
        envelope["timing"]
    );
    envelope
}

async fn page_log(h: &Harness, tab: &str) -> Vec<String> {
    h.eval(tab, "window.log")
        .await
        .as_array()
        .map(|l| {
            l.iter()
                .filter_map(|e| e.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn drag_moves_html5_draggables_pointer_boxes_and_sliders() {
    let (h, _g) = shared();
    block_on(drags(h));
}

#[test]
fn drag_moves_html5_draggables_pointer_boxes_and_sliders_deterministic() {
    let (h, _g) = common::deterministic();
    block_on(drags(h));
}

async fn drags(h: &Harness) {
    let tab = h.tab_on("/input-lab").await;
    // HTML5 drag and drop, element to element.
    let envelope = act(
        h,
        &tab,
        "drag",
        json!({ "start_selector": "#src", "end_selector": "#dst", "steps": 12 }),
    )
    .await;
    assert_eq!(envelope["result"]["status"], "dragged", "{envelope}");
    let log = page_log(h, &tab).await;
    for expected in ["dragstart", "drop:payload", "dragend"] {
        assert!(log.iter().any(|e| e == expected), "{expected}: {log:?}");
    }

    // A box that follows pointer events, by coordinates.
    act(
        h,
        &tab,
        "drag",
        json!({ "start_x": 530, "start_y": 50, "end_x": 630, "end_y": 150 }),
    )
    .await;
    let moved = h.eval(&tab, "[box.offsetLeft, box.offsetTop]").await;
    assert_eq!(moved, json!([600, 120]), "the box followed the pointer");

    // A slider: its thumb from the left end to the middle.
    act(
        h,
        &tab,
        "drag",
        json!({ "start_x": 24, "start_y": 188, "end_x": 120, "end_y": 188, "steps": 5 }),
    )
    .await;
    let value: f64 = h
        .eval(&tab, "document.getElementById('range').value")
        .await
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (35.0..=65.0).contains(&value),
        "the slider moved to {value}"
    );

    // Either end must be named, and both well.
    let (status, body) = h
        .post(
            &format!("/tabs/{tab}/drag"),
            json!({ "end_x": 10, "end_y": 10 }),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("start_x"),
        "{body}"
    );
    let (status, body) = h
        .post(
            &format!("/tabs/{tab}/drag"),
            json!({ "start_x": 1, "start_y": 1, "end_selector": "#nothing-here" }),
        )
        .await;
    assert!(status == 400 || status == 404, "{status} {body}");
    assert!(body["error"].as_str().unwrap().contains("end"), "{body}");
    h.delete(&format!("/tabs/{tab}")).await;
}

#[test]
fn mouse_down_move_up_select_text_over_three_actions() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/input-lab").await;
        let line = h
            .eval(
                &tab,
                "(() => { const r = document.getElementById('para').getBoundingClientRect(); return [r.left, r.right, (r.top + r.bottom) / 2]; })()",
            )
            .await;
        let (left, right, y) = (
            line[0].as_f64().unwrap(),
            line[1].as_f64().unwrap(),
            line[2].as_f64().unwrap(),
        );
        let envelope = act(
            h,
            &tab,
            "mouse/down",
            json!({ "x": left + 1.0, "y": y, "button": "left" }),
        )
        .await;
        assert_eq!(envelope["result"]["status"], "mouse_down");
        act(h, &tab, "move", json!({ "x": right - 1.0, "y": y })).await;
        // Released where the pointer is.
        act(h, &tab, "mouse/up", json!({})).await;
        let selected = h.eval(&tab, "getSelection().toString()").await;
        assert_eq!(
            selected,
            json!("select some text here"),
            "down, move and up selected the line"
        );
        // A move after the release carries no button: nothing more selected.
        act(h, &tab, "move", json!({ "x": 5, "y": 600 })).await;
        assert_eq!(
            h.eval(&tab, "getSelection().toString()").await,
            json!("select some text here")
        );
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn shortcuts_edit_like_a_keyboard_and_insert_types_in_one_step() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/input-lab").await;
        act(h, &tab, "click", json!({ "selector": "#field" })).await;
        let envelope = act(
            h,
            &tab,
            "keyboard/shortcut",
            json!({ "keys": ["Control", "a"] }),
        )
        .await;
        assert_eq!(envelope["result"]["keys"], json!(["Control", "a"]));
        let selection = h
            .eval(
                &tab,
                "(() => { const f = document.getElementById('field'); return [f.selectionStart, f.selectionEnd]; })()",
            )
            .await;
        assert_eq!(
            selection,
            json!([0, 11]),
            "Ctrl+A selected the field's text"
        );
        assert!(
            page_log(h, &tab)
                .await
                .contains(&"keydown:a+ctrl".to_string()),
            "the page's key handler saw the combination"
        );
        // Inserted text replaces the selection, without key events.
        let before = page_log(h, &tab).await.len();
        act(h, &tab, "keyboard/insert", json!({ "text": "replaced" })).await;
        assert_eq!(
            h.eval(&tab, "document.getElementById('field').value").await,
            json!("replaced")
        );
        assert_eq!(page_log(h, &tab).await.len(), before, "no key events");

        // A 100 KB, many-line text lands in a textarea in one step.
        act(h, &tab, "click", json!({ "selector": "#area" })).await;
        let text: String = (0..2000)
            .map(|i| format!("line {i:04} of the long text, padded out to fifty chars\n"))
            .collect();
        assert!(text.len() >= 100_000);
        let envelope = act(h, &tab, "keyboard/insert", json!({ "text": text })).await;
        assert_eq!(envelope["result"]["length"], text.chars().count());
        let value = h.eval(&tab, "document.getElementById('area').value").await;
        assert_eq!(
            value.as_str().unwrap(),
            text,
            "the whole text, newlines kept"
        );
        assert!(!page_log(h, &tab).await.contains(&"area-key".to_string()));

        for (body, field) in [
            (json!({ "keys": ["a", "b"] }), "\"a\" is not a modifier"),
            (json!({ "keys": [] }), "\"keys\""),
        ] {
            let (status, answer) = h
                .post(&format!("/tabs/{tab}/keyboard/shortcut"), body)
                .await;
            assert_eq!(status, 400, "{answer}");
            assert!(
                answer["error"].as_str().unwrap().contains(field),
                "{answer}"
            );
        }
        let (status, answer) = h
            .post(&format!("/tabs/{tab}/keyboard/insert"), json!({}))
            .await;
        assert_eq!(status, 400, "{answer}");
        assert!(
            answer["error"].as_str().unwrap().contains("text"),
            "{answer}"
        );
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn a_hover_that_lasts_shows_a_delayed_tooltip() {
    let (h, _g) = shared();
    block_on(hover_delay(h));
}

#[test]
fn a_hover_that_lasts_shows_a_delayed_tooltip_deterministic() {
    let (h, _g) = common::deterministic();
    block_on(hover_delay(h));
}

async fn hover_delay(h: &Harness) {
    let tab = h.tab_on("/input-lab").await;
    let shown = "getComputedStyle(document.getElementById('tip')).display";
    assert_eq!(h.eval(&tab, shown).await, json!("none"));
    let envelope = act(
        h,
        &tab,
        "hover",
        json!({ "selector": "#tip-btn", "duration_ms": 450 }),
    )
    .await;
    assert_eq!(envelope["result"]["duration_ms"], 450);
    assert_eq!(
        h.eval(&tab, shown).await,
        json!("block"),
        "the tooltip's 300 ms delay ran while the pointer stayed"
    );
    let (status, answer) = h
        .post(
            &format!("/tabs/{tab}/hover"),
            json!({ "selector": "#tip-btn", "duration_ms": 60000 }),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("duration_ms"),
        "{answer}"
    );
    h.delete(&format!("/tabs/{tab}")).await;
}

/// A tab of `user` on `path`; its id.
async fn user_tab(h: &Harness, user: &str, path: &str) -> String {
    let (status, tab) = h
        .post("/tabs", json!({ "url": h.url(path), "userId": user }))
        .await;
    assert_eq!(status, 201, "{tab}");
    tab["id"].as_str().unwrap().to_string()
}

/// Evaluates `script` in `user`'s tab.
async fn eval_as(h: &Harness, user: &str, tab: &str, script: &str) -> Value {
    let (status, body) = h
        .post(
            &format!("/tabs/{tab}/execute"),
            json!({ "script": script, "userId": user }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["result"]["value"].clone()
}

async fn tab_ids(h: &Harness, user: &str) -> Vec<String> {
    let (status, tabs) = h.get(&format!("/tabs?userId={user}")).await;
    assert_eq!(status, 200, "{tabs}");
    tabs.as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn tabs_pin_mute_duplicate_and_reorder() {
    let (h, _g) = shared();
    block_on(async {
        let user = "tab-strip";
        let a = user_tab(h, user, "/second").await;
        let b = user_tab(h, user, "/surface").await;
        let c = user_tab(h, user, "/second").await;
        assert_eq!(tab_ids(h, user).await, [a.clone(), b.clone(), c.clone()]);

        // Pinned tabs lead the list.
        let (status, pinned) = h
            .post(&format!("/tabs/{c}/pin"), json!({ "userId": user }))
            .await;
        assert_eq!(status, 200, "{pinned}");
        assert_eq!(pinned["index"], 0);
        assert_eq!(pinned["pinned"], true);
        assert_eq!(tab_ids(h, user).await, [c.clone(), a.clone(), b.clone()]);
        let (_, tabs) = h.get(&format!("/tabs?userId={user}")).await;
        assert_eq!(tabs[0]["pinned"], true);
        assert_eq!(tabs[1]["pinned"], false);

        // Moved, and kept behind the pinned one.
        let (status, moved) = h
            .post(
                &format!("/tabs/{a}/reorder"),
                json!({ "index": 2, "userId": user }),
            )
            .await;
        assert_eq!(status, 200, "{moved}");
        assert_eq!(tab_ids(h, user).await, [c.clone(), b.clone(), a.clone()]);
        let (_, moved) = h
            .post(
                &format!("/tabs/{a}/reorder"),
                json!({ "index": 0, "userId": user }),
            )
            .await;
        assert_eq!(moved["index"], 1, "{moved}");
        assert_eq!(tab_ids(h, user).await, [c.clone(), a.clone(), b.clone()]);
        let (status, answer) = h
            .post(&format!("/tabs/{a}/reorder"), json!({ "userId": user }))
            .await;
        assert_eq!(status, 400, "{answer}");
        assert!(answer["error"].as_str().unwrap().contains("index"));

        // Muted: its media play silently, here and in documents after.
        let video = "document.getElementById('video').muted";
        let detached =
            "(() => { const a = new Audio(); a.play().catch(() => {}); return a.muted; })()";
        assert_eq!(eval_as(h, user, &b, video).await, json!(false));
        let (status, muted) = h
            .post(&format!("/tabs/{b}/mute"), json!({ "userId": user }))
            .await;
        assert_eq!(status, 200, "{muted}");
        assert_eq!(muted["muted"], true);
        assert_eq!(eval_as(h, user, &b, video).await, json!(true));
        assert_eq!(eval_as(h, user, &b, detached).await, json!(true));
        // A page can't take the sound back (its volumechange re-mutes).
        eval_as(
            h,
            user,
            &b,
            "document.getElementById('video').muted = false",
        )
        .await;
        assert_eq!(eval_as(h, user, &b, video).await, json!(true));
        let (_, info) = h.get(&format!("/tabs/{b}?userId={user}")).await;
        assert_eq!(info["muted"], true, "{info}");
        let (status, _) = h
            .post(
                &format!("/tabs/{b}/reload"),
                json!({ "userId": user, "screenshot": { "area": "none" } }),
            )
            .await;
        assert_eq!(status, 200);
        assert_eq!(
            eval_as(h, user, &b, video).await,
            json!(true),
            "after a reload too"
        );

        // A duplicate: same URL, same user, right after it, muted too.
        let (status, copy) = h
            .post(&format!("/tabs/{b}/duplicate"), json!({ "userId": user }))
            .await;
        assert_eq!(status, 201, "{copy}");
        let copy = copy["id"].as_str().unwrap().to_string();
        assert_eq!(
            tab_ids(h, user).await,
            [c.clone(), a.clone(), b.clone(), copy.clone()]
        );
        let (_, info) = h.get(&format!("/tabs/{copy}?userId={user}")).await;
        assert!(
            info["url"].as_str().unwrap().ends_with("/surface"),
            "{info}"
        );
        assert_eq!(info["muted"], true);
        assert_eq!(eval_as(h, user, &copy, video).await, json!(true));
        // Another user sees none of it.
        let (status, _) = h.post(&format!("/tabs/{b}/pin"), json!({})).await;
        assert_eq!(status, 404);

        let (_, unmuted) = h
            .post(
                &format!("/tabs/{b}/mute"),
                json!({ "muted": false, "userId": user }),
            )
            .await;
        assert_eq!(unmuted["muted"], false);
        assert_eq!(eval_as(h, user, &b, video).await, json!(false));
        for tab in [a, b, c, copy] {
            h.delete(&format!("/tabs/{tab}?userId={user}")).await;
        }
    });
}

#[test]
fn cookies_are_set_read_and_deleted_for_their_user_only() {
    let (h, _g) = shared();
    block_on(async {
        let user = "cookie-jar";
        let (status, set) = h
            .post(
                "/cookies",
                json!({ "userId": user, "cookies": [
                    { "name": "token", "value": "abc123", "url": h.url("/") },
                    { "name": "pref", "value": "dark", "domain": "127.0.0.1", "path": "/", "httpOnly": true, "sameSite": "lax" }
                ] }),
            )
            .await;
        assert_eq!(status, 200, "{set}");
        assert_eq!(set["set"], 2);
        let (status, read) = h
            .get(&format!(
                "/cookies?userId={user}&url={}",
                h.url("/api/whoami")
            ))
            .await;
        assert_eq!(status, 200, "{read}");
        let cookies = read["cookies"].as_array().unwrap();
        assert_eq!(cookies.len(), 2, "{read}");
        let pref = cookies.iter().find(|c| c["name"] == "pref").unwrap();
        assert_eq!(pref["httpOnly"], true);
        assert_eq!(pref["sameSite"], "Lax");

        // The user's pages send them.
        let tab = user_tab(h, user, "/second").await;
        let seen = eval_as(
            h,
            user,
            &tab,
            "fetch('/api/whoami').then(r => r.json()).then(j => j.cookie)",
        )
        .await;
        let seen = seen.as_str().unwrap();
        assert!(
            seen.contains("token=abc123") && seen.contains("pref=dark"),
            "{seen}"
        );
        // Nobody else has them.
        let (_, others) = h.get("/cookies?userId=someone-else").await;
        assert_eq!(others["cookies"], json!([]), "{others}");
        let (_, anonymous) = h.get(&format!("/cookies?url={}", h.url("/"))).await;
        assert!(!anonymous.to_string().contains("abc123"), "{anonymous}");

        let (status, deleted) = h
            .delete(&format!("/cookies?userId={user}&name=token"))
            .await;
        assert_eq!(status, 200, "{deleted}");
        assert_eq!(deleted["deleted"], 1);
        let (_, left) = h.get(&format!("/cookies?userId={user}")).await;
        let names: Vec<&str> = left["cookies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["pref"]);
        let (_, deleted) = h.delete(&format!("/cookies?userId={user}")).await;
        assert_eq!(deleted["deleted"], 1);
        let (_, left) = h.get(&format!("/cookies?userId={user}")).await;
        assert_eq!(left["cookies"], json!([]));

        for (body, field) in [
            (json!({ "cookies": [{ "name": "x", "value": "y" }] }), "url"),
            (json!({ "cookies": [] }), "at least one"),
            (json!({}), "cookies"),
            (
                json!({ "cookies": [{ "name": "x", "value": "y", "url": "ftp://x/" }] }),
                "http",
            ),
        ] {
            let (status, answer) = h.post("/cookies", body).await;
            assert_eq!(status, 400, "{answer}");
            assert!(
                answer["error"].as_str().unwrap().contains(field),
                "{field}: {answer}"
            );
        }
        h.delete(&format!("/tabs/{tab}?userId={user}")).await;
    });
}

#[test]
fn browser_info_and_the_window_of_a_tab() {
    let (h, _g) = shared();
    block_on(async {
        let (status, info) = h.get("/browser/info").await;
        assert_eq!(status, 200, "{info}");
        assert!(
            info["product"].as_str().unwrap().contains("Chrome"),
            "{info}"
        );
        assert!(!info["version"].as_str().unwrap().is_empty());
        assert!(info["user_agent"].as_str().unwrap().contains("Mozilla"));
        assert!(!info["protocol_version"].as_str().unwrap().is_empty());
        assert!(info["frame_driver"].is_string());
        assert_eq!(info["engine_version"], env!("CARGO_PKG_VERSION"));

        let tab = h.tab_on("/second").await;
        let (status, window) = h.get(&format!("/window?tab_id={tab}")).await;
        assert_eq!(status, 200, "{window}");
        assert!(window["width"].as_i64().unwrap() > 0, "{window}");
        let (status, resized) = h
            .post(
                "/window/bounds",
                json!({ "tab_id": tab, "width": 900, "height": 700 }),
            )
            .await;
        assert_eq!(status, 200, "{resized}");
        assert_eq!(resized["width"], 900, "{resized}");
        assert_eq!(resized["height"], 700);
        assert_eq!(
            h.eval(&tab, "[innerWidth, innerHeight]").await,
            json!([900, 700])
        );
        let (status, shot) = h.post(&format!("/tabs/{tab}/screenshot"), json!({})).await;
        assert_eq!(status, 200);
        assert_eq!(
            shot["screenshot_after"]["width"], 900,
            "the capture follows"
        );
        let (status, answer) = h
            .post("/window/bounds", json!({ "tab_id": tab, "width": 5 }))
            .await;
        assert_eq!(status, 400, "{answer}");
        assert!(answer["error"].as_str().unwrap().contains("width"));
        let (status, answer) = h
            .post(
                "/window/state",
                json!({ "tab_id": tab, "state": "sideways" }),
            )
            .await;
        assert_eq!(status, 400, "{answer}");
        let (status, normal) = h
            .post("/window/state", json!({ "tab_id": tab, "state": "normal" }))
            .await;
        assert_eq!(status, 200, "{normal}");
        assert_eq!(normal["state"], "normal");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

/// The pixel at (x, y) of an RGBA image `width` wide.
fn pixel(rgba: &[u8], width: u32, x: u32, y: u32) -> [u8; 3] {
    let i = ((y * width + x) * 4) as usize;
    [rgba[i], rgba[i + 1], rgba[i + 2]]
}

fn near(color: [u8; 3], expected: [u8; 3]) -> bool {
    color
        .iter()
        .zip(expected)
        .all(|(a, b)| (i16::from(*a) - i16::from(b)).abs() < 40)
}

#[test]
fn full_page_and_region_screenshots() {
    let (h, _g) = shared();
    block_on(page_and_region_captures(h));
}

#[test]
fn full_page_and_region_screenshots_deterministic() {
    let (h, _g) = common::deterministic();
    block_on(page_and_region_captures(h));
}

async fn page_and_region_captures(h: &Harness) {
    let tab = h.tab_on("/surface").await;
    h.eval(&tab, "scrollTo(0, 1000), 0").await;
    let (status, envelope) = h
        .post(
            &format!("/tabs/{tab}/screenshot"),
            json!({ "screenshot": { "area": "full_page" } }),
        )
        .await;
    assert_eq!(status, 200, "{envelope}");
    let shot = &envelope["screenshot_after"];
    assert_eq!(
        (shot["width"].as_u64(), shot["height"].as_u64()),
        (Some(1280), Some(6000))
    );
    let (width, height, rgba) = common::decode_screenshot(shot);
    assert_eq!((width, height), (1280, 6000));
    assert!(
        near(pixel(&rgba, width, 640, 50), [255, 0, 0]),
        "the top band"
    );
    assert!(
        near(pixel(&rgba, width, 640, 5950), [0, 0, 255]),
        "the bottom band"
    );
    assert_eq!(envelope["data"], shot["data"], "ABP's top-level data");
    assert_eq!(
        h.eval(&tab, "[scrollY, innerWidth, innerHeight]").await,
        json!([1000, 1280, 720]),
        "scroll position and viewport unchanged"
    );
    let answer = h
        .http
        .get(format!(
            "{}/tabs/{tab}/screenshot?area=full_page",
            h.server.api
        ))
        .send()
        .await
        .unwrap();
    let status = answer.status();
    let bytes = answer.bytes().await.unwrap();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    let (width, height, _) = common::decode_webp(&bytes);
    assert_eq!((width, height), (1280, 6000));

    // A region: exactly that box of the viewport.
    h.eval(&tab, "scrollTo(0, 0), 0").await;
    let (status, envelope) = h
        .post(
            &format!("/tabs/{tab}/screenshot"),
            json!({ "screenshot": { "area": "region", "cursor": false, "markup": [],
                "region": { "x": 400, "y": 150, "width": 60, "height": 60 } } }),
        )
        .await;
    assert_eq!(status, 200, "{envelope}");
    let (width, height, rgba) = common::decode_screenshot(&envelope["screenshot_after"]);
    assert_eq!((width, height), (60, 60));
    for (x, y) in [(2, 2), (30, 30), (57, 57)] {
        assert!(
            near(pixel(&rgba, width, x, y), [0, 255, 0]),
            "({x}, {y}) is green"
        );
    }
    for (body, field) in [
        (
            json!({ "screenshot": { "area": "region", "region": { "x": 1200, "y": 0, "width": 200, "height": 10 } } }),
            "outside",
        ),
        (
            json!({ "screenshot": { "area": "region" } }),
            "screenshot.region",
        ),
        (
            json!({ "screenshot": { "area": "region", "region": { "x": 0, "y": 0, "width": 0, "height": 10 } } }),
            "width",
        ),
    ] {
        let (status, answer) = h.post(&format!("/tabs/{tab}/screenshot"), body).await;
        assert_eq!(status, 400, "{answer}");
        assert!(
            answer["error"].as_str().unwrap().contains(field),
            "{field}: {answer}"
        );
    }
    // Actions capture the viewport (or a region of it), not the page.
    let (status, answer) = h
        .post(
            &format!("/tabs/{tab}/move"),
            json!({ "x": 5, "y": 5, "screenshot": { "area": "full_page" } }),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("full_page"));
    // Past WebP's size, a clear error.
    h.eval(&tab, "document.body.style.height = '40000px', 0")
        .await;
    let (status, answer) = h
        .post(
            &format!("/tabs/{tab}/screenshot"),
            json!({ "screenshot": { "area": "full_page" } }),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("regions"),
        "{answer}"
    );
    h.delete(&format!("/tabs/{tab}")).await;
}

#[test]
fn waits_for_a_navigation_and_an_idle_network() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/surface").await;
        // The click's own wait ends before the page's timer navigates.
        act(
            h,
            &tab,
            "click",
            json!({ "selector": "#later", "wait_until": { "type": "immediate" } }),
        )
        .await;
        let (status, envelope) = h
            .post(
                &format!("/tabs/{tab}/wait/navigation"),
                json!({ "timeout_ms": 10000 }),
            )
            .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(envelope["timing"]["wait_reason"], "navigation_loaded");
        assert_eq!(h.eval(&tab, "location.pathname").await, json!("/second"));
        // Nothing navigates: 408 at the timeout.
        let (status, answer) = h
            .post(
                &format!("/tabs/{tab}/wait/navigation"),
                json!({ "timeout_ms": 500 }),
            )
            .await;
        assert_eq!(status, 408, "{answer}");
        assert_eq!(answer["code"], "WAIT_TIMEOUT");
        assert!(
            answer["error"].as_str().unwrap().contains("500 ms"),
            "{answer}"
        );

        // Requests a timer starts after the click: the wait sees them through.
        h.post(
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url("/surface"), "screenshot": { "area": "none" } }),
        )
        .await;
        act(
            h,
            &tab,
            "click",
            json!({ "selector": "#load", "wait_until": { "type": "immediate" } }),
        )
        .await;
        let (status, envelope) = h
            .post(
                &format!("/tabs/{tab}/wait/network-idle"),
                json!({ "idle_ms": 300, "timeout_ms": 10000 }),
            )
            .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(envelope["timing"]["wait_reason"], "network_idle");
        assert_eq!(h.eval(&tab, "document.title").await, json!("loaded"));

        // The same wait on an action.
        h.post(
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url("/surface"), "screenshot": { "area": "none" } }),
        )
        .await;
        let envelope = act(
            h,
            &tab,
            "click",
            json!({ "selector": "#load", "wait_until": { "type": "network_idle", "idle_ms": 300 } }),
        )
        .await;
        assert_eq!(envelope["timing"]["wait_reason"], "network_idle");
        assert_eq!(h.eval(&tab, "document.title").await, json!("loaded"));
        let (status, answer) = h
            .post(
                &format!("/tabs/{tab}/wait/network-idle"),
                json!({ "idle_ms": 70000 }),
            )
            .await;
        assert_eq!(status, 400, "{answer}");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn interception_rules_fulfill_abort_and_continue_requests() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/second").await;
        let rule = |body: Value| {
            let mut body = body;
            body["tab_id"] = json!(tab);
            h.post("/network/intercept", body)
        };
        let (status, mock) = rule(json!({
            "url_pattern": "*/api/data*", "action": "fulfill", "status": 200,
            "headers": { "content-type": "application/json" }, "body": "{\"name\": \"mocked\"}"
        }))
        .await;
        assert_eq!(status, 201, "{mock}");
        let (status, _) = rule(json!({
            "url_pattern": "*/api/whoami?h=1", "action": "continue",
            "headers": { "x-wabp-test": "added" }
        }))
        .await;
        assert_eq!(status, 201);
        let (status, _) = rule(json!({ "url_pattern": "*/api/whoami", "action": "abort" })).await;
        assert_eq!(status, 201);

        let fetched = |path: &str| {
            format!(
                "fetch('{path}').then(r => r.json()).then(j => JSON.stringify(j), e => 'failed: ' + e)"
            )
        };
        let answer = h.eval(&tab, &fetched("/api/data")).await;
        assert!(answer.as_str().unwrap().contains("mocked"), "{answer}");
        let answer = h.eval(&tab, &fetched("/api/whoami?h=1")).await;
        assert!(
            answer
                .as_str()
                .unwrap()
                .contains("\"x_wabp_test\":\"added\""),
            "{answer}"
        );
        let answer = h.eval(&tab, &fetched("/api/whoami")).await;
        assert!(answer.as_str().unwrap().starts_with("failed"), "{answer}");

        let (_, rules) = h.get("/network/intercept").await;
        let mine: Vec<&Value> = rules["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["tab_id"] == json!(tab))
            .collect();
        assert_eq!(mine.len(), 3, "{rules}");
        assert!(
            mine.iter().all(|r| r["hits"].as_u64().unwrap() >= 1),
            "{rules}"
        );
        let mock_id = mock["id"].as_str().unwrap();
        let live = common::eventually(std::time::Duration::from_secs(5), || async {
            let (_, live) = h.get(&format!("/tabs/{tab}/network")).await;
            live.to_string()
                .contains(&format!("{mock_id}:fulfill"))
                .then_some(live)
        })
        .await;
        assert!(live.is_some(), "the mocked call names its rule");
        // Saved, it still does.
        let (status, saved) = h
            .post(
                "/network/save",
                json!({ "tab_id": tab, "tag": "intercepted-calls" }),
            )
            .await;
        assert_eq!(status, 200, "{saved}");
        let (_, saved) = h.get("/network?tag=^intercepted-calls$").await;
        assert!(
            saved.to_string().contains(&format!("{mock_id}:fulfill")),
            "{saved}"
        );

        // Bad rules say what is wrong.
        for (body, field) in [
            (json!({ "action": "abort" }), "url_pattern"),
            (json!({ "url_pattern": "*" }), "action"),
            (
                json!({ "url_pattern": "*", "action": "abort", "status": 200 }),
                "status",
            ),
            (
                json!({ "url_pattern": "*", "action": "fulfill", "status": 700 }),
                "status",
            ),
        ] {
            let (status, answer) = rule(body).await;
            assert_eq!(status, 400, "{answer}");
            assert!(
                answer["error"].as_str().unwrap().contains(field),
                "{field}: {answer}"
            );
        }

        let (status, removed) = h.delete(&format!("/network/intercept?tab_id={tab}")).await;
        assert_eq!(status, 200, "{removed}");
        assert_eq!(removed["removed"], 3);
        let answer = h.eval(&tab, &fetched("/api/data")).await;
        assert!(answer.as_str().unwrap().contains("widget"), "{answer}");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn file_choosers_are_listed_and_answered_as_they_open() {
    let (h, _g) = shared();
    block_on(async {
        let user = "chooser";
        let file = common::temp_dir("chooser").join("notes.txt");
        std::fs::write(&file, "hello").unwrap();
        let tab = user_tab(h, user, "/events").await;
        let envelope = act(
            h,
            &tab,
            "click",
            json!({ "selector": "#file", "userId": user }),
        )
        .await;
        let opened = envelope["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["type"] == "file_chooser")
            .cloned()
            .expect("a file_chooser event");
        let (status, pending) = h.get(&format!("/file-chooser/pending?userId={user}")).await;
        assert_eq!(status, 200, "{pending}");
        let listed = &pending["file_choosers"][0];
        assert_eq!(listed["id"], opened["data"]["id"], "{pending}");
        assert_eq!(listed["tab_id"], json!(tab));
        assert_eq!(listed["multiple"], false);
        assert!(listed["accepts"].to_string().contains("txt"), "{pending}");
        let (_, others) = h.get("/file-chooser/pending?userId=not-the-chooser").await;
        assert_eq!(others["file_choosers"], json!([]));
        let (status, _) = h
            .post(
                &format!("/file-chooser/{}", listed["id"].as_str().unwrap()),
                json!({ "cancel": true, "userId": user }),
            )
            .await;
        assert_eq!(status, 200);

        let (status, config) = h
            .post(
                "/file-chooser/configure",
                json!({ "default_files": [file], "userId": user }),
            )
            .await;
        assert_eq!(status, 200, "{config}");
        assert_eq!(config["auto_select"], true);
        let envelope = act(
            h,
            &tab,
            "click",
            json!({ "selector": "#file", "userId": user }),
        )
        .await;
        let types: Vec<&str> = envelope["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["type"].as_str())
            .collect();
        assert!(types.contains(&"file_selected"), "{types:?}");
        let chooser = envelope["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["type"] == "file_chooser")
            .unwrap();
        assert_eq!(chooser["data"]["pending"], false);
        assert_eq!(
            eval_as(
                h,
                user,
                &tab,
                "document.getElementById('file').files[0].name"
            )
            .await,
            json!("notes.txt")
        );
        let (_, pending) = h.get(&format!("/file-chooser/pending?userId={user}")).await;
        assert_eq!(pending["file_choosers"], json!([]));

        let (status, answer) = h
            .post(
                "/file-chooser/configure",
                json!({ "default_files": ["/no/such/file.txt"], "userId": user }),
            )
            .await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(answer["code"], "FILE_NOT_FOUND");
        let (status, config) = h
            .post(
                "/file-chooser/configure",
                json!({ "auto_select": false, "userId": user }),
            )
            .await;
        assert_eq!(status, 200);
        assert_eq!(config["auto_select"], false);
        h.delete(&format!("/tabs/{tab}?userId={user}")).await;
    });
}

#[test]
fn downloads_go_to_their_folder_and_can_be_waited_for() {
    let (h, _g) = shared();
    block_on(async {
        let user = "downloader";
        let folder = common::temp_dir("configured-downloads").join("reports");
        let (status, config) = h
            .post(
                "/downloads/configure",
                json!({ "download_path": folder, "userId": user }),
            )
            .await;
        assert_eq!(status, 200, "{config}");
        assert!(folder.is_dir(), "created");
        let tab = user_tab(h, user, "/events").await;
        act(
            h,
            &tab,
            "click",
            json!({ "selector": "#download", "userId": user }),
        )
        .await;
        let id = common::eventually(std::time::Duration::from_secs(10), || async {
            let (_, list) = h.get(&format!("/downloads?userId={user}")).await;
            list["downloads"][0]["id"].as_str().map(str::to_string)
        })
        .await
        .expect("the download is listed");
        let (status, done) = h
            .post(
                &format!("/downloads/{id}/wait"),
                json!({ "timeout_ms": 10000, "userId": user }),
            )
            .await;
        assert_eq!(status, 200, "{done}");
        assert_eq!(done["state"], "completed", "{done}");
        assert_eq!(done["timed_out"], false);
        let path = std::path::PathBuf::from(done["path"].as_str().unwrap());
        assert!(
            path.starts_with(std::fs::canonicalize(&folder).unwrap()),
            "{path:?} is in the configured folder"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "quarterly numbers\n"
        );

        // A slow one: the wait gives up at its timeout and says so.
        act(
            h,
            &tab,
            "click",
            json!({ "selector": "#slowdl", "userId": user }),
        )
        .await;
        let slow = common::eventually(std::time::Duration::from_secs(10), || async {
            let (_, list) = h
                .get(&format!("/downloads?userId={user}&state=in_progress"))
                .await;
            list["downloads"][0]["id"].as_str().map(str::to_string)
        })
        .await
        .expect("the slow download is listed");
        let (status, waited) = h
            .post(
                &format!("/downloads/{slow}/wait"),
                json!({ "timeout_ms": 300, "userId": user }),
            )
            .await;
        assert_eq!(status, 200, "{waited}");
        assert_eq!(waited["timed_out"], true);
        assert_eq!(waited["state"], "in_progress");
        let (status, _) = h
            .post(
                &format!("/downloads/{slow}/cancel"),
                json!({ "userId": user }),
            )
            .await;
        assert_eq!(status, 200);
        // Started again under the same id, then stopped for good.
        let (status, resumed) = h
            .post(
                &format!("/downloads/{slow}/resume"),
                json!({ "userId": user }),
            )
            .await;
        assert_eq!(status, 200, "{resumed}");
        assert_eq!(resumed["id"], json!(slow));
        assert_eq!(resumed["state"], "in_progress");
        let (_, list) = h.get(&format!("/downloads?userId={user}")).await;
        assert_eq!(list["downloads"].as_array().unwrap().len(), 2, "{list}");
        let (status, answer) = h
            .post(
                &format!("/downloads/{id}/resume"),
                json!({ "userId": user }),
            )
            .await;
        assert_eq!(status, 400, "a completed download: {answer}");
        h.post(
            &format!("/downloads/{slow}/cancel"),
            json!({ "userId": user }),
        )
        .await;
        let (status, answer) = h
            .post(
                "/downloads/configure",
                json!({ "download_path": "relative/dir", "userId": user }),
            )
            .await;
        assert_eq!(status, 400, "{answer}");
        h.delete(&format!("/tabs/{tab}?userId={user}")).await;
    });
}
