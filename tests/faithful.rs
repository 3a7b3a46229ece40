//! Input as faithful as a keyboard and a mouse, and no false success, on
//! the kinds of page where it used to go wrong (tests/common/faithful.rs):
//! held modifiers are state, every US-layout character has its key's code,
//! clicks land on wrapped and rotated links and on custom checkboxes
//! through their labels, `fill` sets date, time, color and range inputs (or
//! says the format it needs), every snapshot ref names one node, and
//! secrets are redacted in the live network views.

mod common;

use std::collections::HashSet;

use common::{Harness, block_on, shared};
use serde_json::{Value, json};

use common::{act_unseen as act, act_unseen_ok as ok};

/// The page's event log since the last call, emptied.
async fn log(h: &Harness, tab: &str) -> Vec<Value> {
    let log = h
        .eval(
            tab,
            "(() => { const l = window.log; window.log = []; return l; })()",
        )
        .await;
    log.as_array().cloned().unwrap_or_default()
}

/// The `popup` event of an answer's `events`.
fn popup_event(answer: &Value) -> Value {
    answer["events"]
        .as_array()
        .and_then(|events| events.iter().find(|e| e["type"] == "popup"))
        .cloned()
        .unwrap_or_else(|| panic!("no popup event: {answer}"))
}

fn of_type<'a>(log: &'a [Value], kind: &str) -> Vec<&'a Value> {
    log.iter().filter(|e| e["type"] == kind).collect()
}

#[test]
fn held_modifiers_reach_every_later_key_click_and_wheel() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/keys").await;
        ok(h, &tab, "keyboard/down", json!({ "key": "Shift" })).await;
        let down = log(h, &tab).await;
        assert_eq!(
            (
                &down[0]["key"],
                &down[0]["code"],
                &down[0]["location"],
                &down[0]["shift"]
            ),
            (
                &json!("Shift"),
                &json!("ShiftLeft"),
                &json!(1),
                &json!(true)
            ),
            "a modifier's own keydown carries its flag: {down:?}"
        );
        ok(h, &tab, "click", json!({ "selector": "#btn" })).await;
        ok(h, &tab, "scroll", json!({ "delta_y": 100 })).await;
        let events = log(h, &tab).await;
        for kind in ["mousedown", "mouseup", "click", "wheel"] {
            let seen = of_type(&events, kind);
            assert!(!seen.is_empty(), "{kind}: {events:?}");
            assert!(
                seen.iter()
                    .all(|e| e["shift"] == true && e["ctrl"] == false),
                "{kind} with Shift held: {events:?}"
            );
        }
        // Shift held types the shifted character.
        ok(h, &tab, "keyboard/press", json!({ "key": "a" })).await;
        let typed = log(h, &tab).await;
        assert_eq!(typed[0]["key"], "A", "{typed:?}");
        ok(h, &tab, "keyboard/up", json!({ "key": "Shift" })).await;
        let up = log(h, &tab).await;
        assert_eq!(
            (&up[0]["type"], &up[0]["shift"]),
            (&json!("keyup"), &json!(false)),
            "{up:?}"
        );
        ok(h, &tab, "click", json!({ "selector": "#btn" })).await;
        let events = log(h, &tab).await;
        assert!(
            of_type(&events, "click")
                .iter()
                .all(|e| e["shift"] == false),
            "released: {events:?}"
        );

        // Control held across actions, then a click and a key.
        ok(h, &tab, "keyboard/down", json!({ "key": "Control" })).await;
        ok(h, &tab, "click", json!({ "selector": "#btn" })).await;
        ok(h, &tab, "keyboard/press", json!({ "key": "k" })).await;
        ok(h, &tab, "keyboard/up", json!({ "key": "Control" })).await;
        let events = log(h, &tab).await;
        assert!(
            of_type(&events, "click").iter().all(|e| e["ctrl"] == true),
            "{events:?}"
        );
        let k = events
            .iter()
            .find(|e| e["type"] == "keydown" && e["code"] == "KeyK")
            .expect("k pressed");
        assert_eq!(k["ctrl"], true, "{events:?}");
    });
}

#[test]
fn shift_held_with_arrows_selects_and_backspace_deletes_the_selection() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/keys").await;
        ok(
            h,
            &tab,
            "fill",
            json!({ "selector": "#field", "text": "hello wonderful" }),
        )
        .await;
        ok(h, &tab, "keyboard/press", json!({ "key": "End" })).await;
        ok(h, &tab, "keyboard/down", json!({ "key": "Shift" })).await;
        for _ in 0..9 {
            ok(h, &tab, "keyboard/press", json!({ "key": "ArrowLeft" })).await;
        }
        ok(h, &tab, "keyboard/up", json!({ "key": "Shift" })).await;
        let selected = h
            .eval(
                &tab,
                "(() => { const f = document.getElementById('field'); return f.value.slice(f.selectionStart, f.selectionEnd); })()",
            )
            .await;
        assert_eq!(selected, "wonderful");
        ok(h, &tab, "keyboard/press", json!({ "key": "Backspace" })).await;
        let value = h.eval(&tab, "document.getElementById('field').value").await;
        assert_eq!(value, "hello ");
    });
}

#[test]
fn every_us_layout_character_has_its_key_s_code() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/keys").await;
        let text = "!@#^&*()_+{}|:\"<>?~`1-=[];',./\\Az";
        ok(
            h,
            &tab,
            "type",
            json!({ "selector": "#field", "text": text }),
        )
        .await;
        let value = h.eval(&tab, "document.getElementById('field').value").await;
        assert_eq!(value, text);
        let downs: Vec<Value> = log(h, &tab)
            .await
            .into_iter()
            .filter(|e| e["type"] == "keydown")
            .collect();
        let expected = [
            ("!", "Digit1", 49),
            ("@", "Digit2", 50),
            ("#", "Digit3", 51),
            ("^", "Digit6", 54),
            ("&", "Digit7", 55),
            ("*", "Digit8", 56),
            ("(", "Digit9", 57),
            (")", "Digit0", 48),
            ("_", "Minus", 189),
            ("+", "Equal", 187),
            ("{", "BracketLeft", 219),
            ("}", "BracketRight", 221),
            ("|", "Backslash", 220),
            (":", "Semicolon", 186),
            ("\"", "Quote", 222),
            ("<", "Comma", 188),
            (">", "Period", 190),
            ("?", "Slash", 191),
            ("~", "Backquote", 192),
            ("`", "Backquote", 192),
            ("1", "Digit1", 49),
            ("-", "Minus", 189),
            ("=", "Equal", 187),
            ("[", "BracketLeft", 219),
            ("]", "BracketRight", 221),
            (";", "Semicolon", 186),
            ("'", "Quote", 222),
            (",", "Comma", 188),
            (".", "Period", 190),
            ("/", "Slash", 191),
            ("\\", "Backslash", 220),
            ("A", "KeyA", 65),
            ("z", "KeyZ", 90),
        ];
        assert_eq!(downs.len(), expected.len(), "{downs:?}");
        for (event, (key, code, key_code)) in downs.iter().zip(expected) {
            assert_eq!(
                (&event["key"], &event["code"], &event["keyCode"]),
                (&json!(key), &json!(code), &json!(key_code)),
                "{event}"
            );
        }
        // A shortcut with a shifted punctuation key.
        ok(
            h,
            &tab,
            "keyboard/shortcut",
            json!({ "keys": ["Control", "Shift", "~"] }),
        )
        .await;
        let events = log(h, &tab).await;
        let tilde = events
            .iter()
            .find(|e| e["type"] == "keydown" && e["key"] == "~")
            .unwrap_or_else(|| panic!("{events:?}"));
        assert_eq!(
            (&tilde["code"], &tilde["ctrl"], &tilde["shift"]),
            (&json!("Backquote"), &json!(true), &json!(true))
        );
    });
}

#[test]
fn clicks_land_on_wrapped_and_rotated_links() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/links").await;
        // The premise: the centre of each link's box is not on the link.
        let misses = h
            .eval(
                &tab,
                "['wrapped', 'rotated'].map(id => { const a = document.getElementById(id); const r = a.getBoundingClientRect(); const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); return !a.contains(hit); })",
            )
            .await;
        assert_eq!(misses, json!([true, true]), "the page is as intended");
        for id in ["wrapped", "rotated"] {
            let answer = ok(h, &tab, "click", json!({ "selector": format!("#{id}") })).await;
            assert_eq!(answer["result"]["status"], "clicked", "{answer}");
        }
        assert_eq!(
            h.eval(&tab, "window.hits").await,
            json!(["wrapped", "rotated"])
        );
    });
}

/// The JSON snapshot's nodes, flattened.
fn flatten<'a>(nodes: &'a Value, out: &mut Vec<&'a Value>) {
    for node in nodes.as_array().into_iter().flatten() {
        out.push(node);
        flatten(&node["children"], out);
    }
}

async fn json_snapshot(h: &Harness, tab: &str) -> Value {
    let (status, snapshot) = h.get(&format!("/tabs/{tab}/snapshot?format=json")).await;
    assert_eq!(status, 200, "{snapshot}");
    snapshot
}

#[test]
fn custom_checkboxes_are_clicked_through_their_labels() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/checkboxes").await;
        let snapshot = json_snapshot(h, &tab).await;
        let mut nodes = Vec::new();
        flatten(&snapshot["elements"], &mut nodes);
        let terms = nodes
            .iter()
            .find(|n| n["role"] == "checkbox" && n["name"] == "I accept the terms")
            .unwrap_or_else(|| panic!("the checkbox by its label: {snapshot}"));
        let (status, answer) = act(h, &tab, "click", json!({ "ref": terms["ref_id"] })).await;
        assert_eq!(status, 200, "{answer}");
        let (status, answer) = act(h, &tab, "click", json!({ "selector": "#plan-pro" })).await;
        assert_eq!(status, 200, "{answer}");
        let (status, answer) = act(h, &tab, "click", json!({ "selector": "#news" })).await;
        assert_eq!(status, 200, "{answer}");
        let checked = h
            .eval(
                &tab,
                "['terms', 'plan-pro', 'news'].map(id => document.getElementById(id).checked)",
            )
            .await;
        assert_eq!(checked, json!([true, true, true]));
    });
}

#[test]
fn fill_sets_inputs_that_take_no_typing_and_never_claims_what_did_not_happen() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/values").await;
        for (id, value) in [
            ("day", "2020-03-02"),
            ("at", "13:45"),
            ("when", "2020-03-02T13:45"),
            ("month", "2020-03"),
            ("week", "2020-W10"),
            ("colour", "#33aa66"),
            ("volume", "7"),
        ] {
            let answer = ok(
                h,
                &tab,
                "fill",
                json!({ "selector": format!("#{id}"), "text": value }),
            )
            .await;
            assert_eq!(answer["result"]["status"], "filled", "{answer}");
            let shown = h
                .eval(&tab, &format!("document.getElementById('{id}').value"))
                .await;
            assert_eq!(shown, value, "{id}");
            let seen = h.eval(&tab, "window.seen.splice(0)").await;
            assert_eq!(
                seen,
                json!([
                    format!("{id}:input:{value}"),
                    format!("{id}:change:{value}")
                ]),
                "{id}"
            );
        }
        // A value not in the input's format: 400, naming the format.
        for (id, value, format) in [
            ("day", "03/02/2020", "yyyy-mm-dd"),
            ("colour", "green", "#rrggbb"),
            ("volume", "loud", "a number"),
        ] {
            let (status, answer) = act(
                h,
                &tab,
                "fill",
                json!({ "selector": format!("#{id}"), "text": value }),
            )
            .await;
            assert_eq!(status, 400, "{id}: {answer}");
            assert!(
                answer["error"].as_str().unwrap().contains(format),
                "{id}: {answer}"
            );
        }
        // A field that refuses the text is an error, never "filled": a
        // number field says so before the page sees anything.
        for (id, says) in [("nothing", "empty"), ("count", "a number")] {
            let (status, answer) = act(
                h,
                &tab,
                "fill",
                json!({ "selector": format!("#{id}"), "text": "abc" }),
            )
            .await;
            assert!(
                (400..500).contains(&status) && answer["error"].as_str().unwrap().contains(says),
                "{id}: {status} {answer}"
            );
        }
    });
}

#[test]
fn every_snapshot_ref_names_one_node() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/nav").await;
        let snapshot = json_snapshot(h, &tab).await;
        let mut nodes = Vec::new();
        flatten(&snapshot["elements"], &mut nodes);
        let refs: Vec<&str> = nodes.iter().filter_map(|n| n["ref_id"].as_str()).collect();
        let unique: HashSet<&&str> = refs.iter().collect();
        assert_eq!(
            unique.len(),
            refs.len(),
            "a ref named two nodes: {snapshot}"
        );
        let nav = nodes
            .iter()
            .find(|n| n["role"] == "navigation")
            .unwrap_or_else(|| panic!("{snapshot}"));
        assert!(nav["ref_id"].is_string(), "{nav}");
        // The text format says each ref once too.
        let (status, text) = h.get(&format!("/tabs/{tab}/snapshot")).await;
        assert_eq!(status, 200);
        let text = text["snapshot"].as_str().unwrap_or_default().to_string();
        let mut seen = HashSet::new();
        for r in text.split('[').filter_map(|s| s.split(']').next()) {
            if r.starts_with('e') && r[1..].chars().all(|c| c.is_ascii_digit()) {
                assert!(seen.insert(r.to_string()), "{r} twice in {text}");
            }
        }
        assert!(!seen.is_empty(), "{text}");
    });
}

#[test]
fn the_network_views_redact_credentials_and_passwords() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/nav").await;
        // A login the page posts itself: an authorization header it sets and
        // a password in a form body.
        let sent = h
            .eval(
                &tab,
                "fetch('/api/echo', { method: 'POST', headers: { 'Authorization': 'Bearer SECRET-tok3n', 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'user=ada&password=SECRET-pw' }).then(r => r.status)",
            )
            .await;
        assert_eq!(sent, 200);
        let mut live = Value::Null;
        for _ in 0..50 {
            let (status, body) = h.get(&format!("/tabs/{tab}/network")).await;
            assert_eq!(status, 200, "{body}");
            live = body;
            if live.to_string().contains("api/echo") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let text = live.to_string();
        assert!(
            text.contains("api/echo") && text.contains("user=ada"),
            "{text}"
        );
        assert!(!text.contains("SECRET-"), "the live buffer: {text}");
        let (status, saved) = h
            .post(
                "/network/save",
                json!({ "tag": "faithful-secrets", "tab_id": tab }),
            )
            .await;
        assert_eq!(status, 200, "{saved}");
        for path in [
            "/network?tag=faithful-secrets&include_body=true",
            "/network/har?tag=faithful-secrets",
        ] {
            let (status, body) = h.get(path).await;
            assert_eq!(status, 200, "{path}: {body}");
            let text = body.to_string();
            assert!(text.contains("api/echo"), "{path}: {text}");
            assert!(!text.contains("SECRET-"), "{path}: {text}");
        }
    });
}

/// A client that gives up on a wait (its own HTTP timeout) frees the tab at
/// once: the next request doesn't queue behind the rest of the wait.
#[test]
fn a_wait_whose_client_hangs_up_ends_and_frees_the_tab() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/nav").await;
        let url = format!("{}/tabs/{tab}/wait/navigation", h.server.api);
        let gave_up = h
            .http
            .post(&url)
            .json(&json!({ "screenshot": { "area": "none" } }))
            .timeout(std::time::Duration::from_millis(800))
            .send()
            .await;
        assert!(
            gave_up.is_err(),
            "the client's timeout ended it: {gave_up:?}"
        );
        let asked = std::time::Instant::now();
        let answer = ok(h, &tab, "wait", json!({ "ms": 10 })).await;
        assert_eq!(answer["result"]["status"], "waited", "{answer}");
        // The abandoned wait would have held the tab for its 30 s default.
        assert!(
            asked.elapsed() < std::time::Duration::from_secs(15),
            "the next action waited {:?}",
            asked.elapsed()
        );
        let (status, history) = h
            .get(&format!("/history/actions?tab_id={tab}&limit=10"))
            .await;
        assert_eq!(status, 200, "{history}");
        assert!(
            history.to_string().contains("client_gone"),
            "the abandoned wait is on record with why it ended: {history}"
        );
    });
}

/// A screenshot asked for while a long wait runs on the tab is answered at
/// once, from the running page, rather than after the wait.
#[test]
fn a_screenshot_does_not_queue_behind_a_long_wait() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/nav").await;
        h.eval(&tab, "fetch('/api/slow?ms=6000'); 1").await;
        let waiting = {
            let tab = tab.clone();
            tokio::spawn(async move {
                act(
                    h,
                    &tab,
                    "wait/network-idle",
                    json!({ "idle_ms": 500, "timeout_ms": 20000 }),
                )
                .await
            })
        };
        // Let the wait take the tab first.
        tokio::time::sleep(std::time::Duration::from_millis(700)).await;
        let shot = h
            .http
            .get(format!("{}/tabs/{tab}/screenshot", h.server.api))
            .send()
            .await
            .unwrap();
        assert_eq!(shot.status(), 200);
        let bytes = shot.bytes().await.unwrap();
        assert_eq!(&bytes[8..12], b"WEBP", "a WebP image");
        assert!(
            !waiting.is_finished(),
            "the screenshot was answered while the wait still ran"
        );
        let (status, waited) = waiting.await.unwrap();
        assert_eq!(status, 200, "{waited}");
        assert_eq!(waited["timing"]["wait_reason"], "network_idle", "{waited}");
        // The wait's own after-frame and the next action are unaffected.
        ok(h, &tab, "wait", json!({ "ms": 10 })).await;
    });
}

/// Network idle counts a request already in flight when the wait starts,
/// and waits its quiet window after the last one ends, on the wall clock.
#[test]
fn network_idle_counts_requests_in_flight_before_it_and_waits_its_window() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/nav").await;
        h.eval(
            &tab,
            "window.state = 'loading'; fetch('/api/slow?ms=2000').then(r => r.json()).then(() => { window.state = 'done'; window.doneAt = Date.now(); }); 1",
        )
        .await;
        let asked = std::time::Instant::now();
        let waited = ok(
            h,
            &tab,
            "wait/network-idle",
            json!({ "idle_ms": 1000, "timeout_ms": 15000 }),
        )
        .await;
        assert_eq!(waited["timing"]["wait_reason"], "network_idle", "{waited}");
        assert_eq!(h.eval(&tab, "window.state").await, "done");
        // 2 s of request, then 1 s of quiet: not answered before both.
        assert!(
            asked.elapsed() >= std::time::Duration::from_millis(2500),
            "answered after {:?}",
            asked.elapsed()
        );
    });
}

/// Control-click, Shift-click and a middle click on a link open its page in
/// a new tab, announced as a `popup` event, as in a headed browser.
#[test]
fn modifier_and_middle_clicks_on_links_open_tabs() {
    let (h, _g) = shared();
    block_on(async {
        let target = h.url("/second");
        let tab = h
            .tab_on(&format!(
                "/links-to?url={}",
                url::form_urlencoded::byte_serialize(target.as_bytes()).collect::<String>()
            ))
            .await;
        for (name, body) in [
            (
                "control",
                json!({ "selector": "a", "modifiers": ["Control"] }),
            ),
            ("shift", json!({ "selector": "a", "modifiers": ["Shift"] })),
            ("middle", json!({ "selector": "a", "button": "middle" })),
        ] {
            let answer = ok(h, &tab, "click", body).await;
            let popup = popup_event(&answer);
            let new_tab = popup["data"]["new_tab_id"]
                .as_str()
                .or_else(|| popup["new_tab_id"].as_str())
                .unwrap_or_else(|| panic!("{name}: {popup}"))
                .to_string();
            let (status, info) = h.get(&format!("/tabs/{new_tab}")).await;
            assert_eq!(status, 200, "{name}: {info}");
            assert!(
                info["url"].as_str().unwrap_or("").ends_with("/second"),
                "{name}: {info}"
            );
            // The opener stays where it was.
            let (_, opener) = h.get(&format!("/tabs/{tab}")).await;
            assert!(
                opener["url"].as_str().unwrap().contains("links-to"),
                "{name}: {opener}"
            );
            h.delete(&format!("/tabs/{new_tab}")).await;
        }
    });
}

/// A window a new tab's first page opens while it loads is attached, listed
/// in `GET /tabs` once the creation has answered, and announced in the
/// opener's next envelope.
#[test]
fn a_popup_from_a_new_tab_s_first_load_is_caught() {
    let (h, _g) = shared();
    block_on(async {
        let (status, created) = h
            .post(
                "/tabs",
                json!({ "url": h.url("/faithful/opens-while-loading") }),
            )
            .await;
        assert_eq!(status, 201, "{created}");
        let opener = created["id"].as_str().unwrap().to_string();
        let (_, tabs) = h.get("/tabs").await;
        let popup = tabs
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["url"].as_str().unwrap_or("").ends_with("/second"))
            .cloned()
            .unwrap_or_else(|| panic!("the popup is listed: {tabs}"));
        let answer = ok(h, &opener, "wait", json!({ "ms": 10 })).await;
        let event = popup_event(&answer);
        assert!(
            event.to_string().contains(popup["id"].as_str().unwrap()),
            "{event} {popup}"
        );
        for tab in [opener, popup["id"].as_str().unwrap().to_string()] {
            h.delete(&format!("/tabs/{tab}")).await;
        }
    });
}

/// `execute` answers carry the events its script set off, as ABP's clients
/// expect (a date picker opened with `showPicker()`, a popup).
#[test]
fn execute_answers_carry_the_events_their_script_caused() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/values").await;
        let (status, answer) = h
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "script": "document.getElementById('day').showPicker(); 'asked'" }),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["result"]["value"], "asked", "{answer}");
        let types: Vec<&str> = answer["events"]
            .as_array()
            .unwrap_or_else(|| panic!("events: {answer}"))
            .iter()
            .filter_map(|e| e["type"].as_str())
            .collect();
        assert!(types.contains(&"datetime_picker_open"), "{answer}");
        let (status, answer) = h
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "script": "window.open('/second'); 1" }),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
        let popup = popup_event(&answer);
        let new_tab = popup
            .pointer("/data/new_tab_id")
            .or(popup.get("new_tab_id"))
            .cloned();
        if let Some(Value::String(id)) = new_tab {
            h.delete(&format!("/tabs/{id}")).await;
        }
        // Nothing set off, nothing said.
        let (_, quiet) = h
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "script": "1 + 1" }),
            )
            .await;
        assert_eq!(quiet["events"], json!([]), "{quiet}");
    });
}

/// A navigation wait covers a navigation the last action started whose
/// server is slow, until the new page's load; the click that started it
/// reports it.
#[test]
fn a_navigation_wait_covers_a_slow_link_clicked_before_it() {
    let (h, _g) = shared();
    block_on(async {
        let slow = h.url("/sleep?ms=1500");
        let tab = h
            .tab_on(&format!(
                "/links-to?url={}",
                url::form_urlencoded::byte_serialize(slow.as_bytes()).collect::<String>()
            ))
            .await;
        let clicked = ok(
            h,
            &tab,
            "click",
            json!({ "selector": "a", "wait_until": { "type": "immediate" } }),
        )
        .await;
        assert_eq!(clicked["result"]["status"], "clicked", "{clicked}");
        let waited = ok(h, &tab, "wait/navigation", json!({ "timeout_ms": 10000 })).await;
        assert_eq!(
            waited["timing"]["wait_reason"], "navigation_loaded",
            "{waited}"
        );
        let reported = format!("{}{}", clicked["events"], waited["events"]);
        assert!(
            reported.contains("/sleep"),
            "the navigation is reported: {reported}"
        );
        let page = h
            .eval(
                &tab,
                "[location.pathname, document.readyState, document.body.innerText]",
            )
            .await;
        assert_eq!(page, json!(["/sleep", "complete", "slept"]));
        // A navigation wait claims it once: the next one waits for a new one.
        let (status, again) = act(h, &tab, "wait/navigation", json!({ "timeout_ms": 500 })).await;
        assert_eq!(status, 408, "{again}");
    });
}

/// A tab whose page loops `alert()` from its load on, and would not let
/// the page go, is repaired into a usable tab at the page it was asked to
/// go to, said by `tab_recovered`; not reopened into the same loop.
#[test]
fn a_dialog_loop_on_load_is_repaired_where_the_tab_was_going() {
    let (h, _g) = shared();
    block_on(async {
        let (status, created) = h
            .post(
                "/tabs",
                json!({ "url": h.url("/faithful/alert-loop-on-load") }),
            )
            .await;
        assert_eq!(status, 201, "{created}");
        let tab = created["id"].as_str().unwrap().to_string();
        // Leaving the page: every answer brings the next alert.
        let (_, left) = act(h, &tab, "navigate", json!({ "url": h.url("/second") })).await;
        let (status, after) = act(h, &tab, "wait", json!({ "ms": 10 })).await;
        assert_eq!(status, 200, "usable after the repair: {left}\n{after}");
        let said = format!("{left}{after}");
        assert!(
            said.contains("tab_recovered") && said.contains("/second"),
            "the repair says where the tab went: {said}"
        );
        let (status, dialog) = h.get(&format!("/tabs/{tab}/dialog")).await;
        assert_eq!(status, 200, "{dialog}");
        assert_eq!(
            h.eval(&tab, "[location.pathname, document.title]").await,
            json!(["/second", "Second"])
        );
        // And it acts as any tab does.
        ok(h, &tab, "navigate", json!({ "url": h.url("/") })).await;
        assert_eq!(h.eval(&tab, "Array.isArray(window.events)").await, true);
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

/// Input is strict: a field an operation does not take, a wrong type, a
/// negative duration or an over-long name answer 400 naming the field.
#[test]
fn unknown_fields_wrong_types_and_bounds_answer_400_naming_the_field() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/keys").await;
        for (path, body, named) in [
            (
                "execute",
                json!({ "script": "1", "await_promise": "yes" }),
                "await_promise",
            ),
            ("wait", json!({ "duration_ms": -5 }), "duration_ms"),
            ("wait", json!({ "ms": -5 }), "ms"),
            ("click", json!({ "selector": "#btn", "bogus": 1 }), "bogus"),
            (
                "click",
                json!({ "selector": "#btn", "click_count": "2" }),
                "click_count",
            ),
            (
                "navigate",
                json!({ "url": h.url("/second"), "referer": "x" }),
                "referer",
            ),
            (
                "wait",
                json!({ "ms": 1, "wait_until": { "type": "x".repeat(1 << 20) } }),
                "wait_until.type",
            ),
            // Every string has a bound, stated in the OpenAPI schema.
            (
                "navigate",
                json!({ "url": format!("https://a.test/{}", "x".repeat(70_000)) }),
                "\"url\" is 70015 characters long; it takes at most 65536",
            ),
            (
                "type",
                json!({ "selector": "#field", "text": "x".repeat(70_000) }),
                "\"text\"",
            ),
            (
                "execute",
                json!({ "script": format!("'{}'", "x".repeat(1_100_000)) }),
                "at most 1048576",
            ),
        ] {
            let (status, answer) = h.post(&format!("/tabs/{tab}/{path}"), body.clone()).await;
            assert_eq!(
                status,
                400,
                "{path} {}: {answer}",
                body.to_string().chars().take(200).collect::<String>()
            );
            let error = answer["error"].as_str().unwrap_or_default();
            assert!(error.contains(named), "{path}: {error}");
            assert!(error.len() < 2000, "the error stays short: {}", error.len());
        }
        // Nothing was clicked or typed by the refused calls.
        assert_eq!(h.eval(&tab, "window.log.length").await, 0);
        // The fields ABP's clients send still pass.
        let (status, answer) = h
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "script": "new Promise(r => r(5))", "await_promise": true }),
            )
            .await;
        assert_eq!(
            (status, &answer["result"]["value"]),
            (200, &json!(5)),
            "{answer}"
        );
        let (status, answer) = h
            .post(
                &format!("/tabs/{tab}/execute"),
                json!({ "script": "new Promise(r => r(5))", "await_promise": false }),
            )
            .await;
        assert_eq!(
            (status, &answer["result"]["type"]),
            (200, &json!("object")),
            "{answer}"
        );
    });
}

/// A single-page app's `pushState` click settles on its own, however busy
/// the machine: eight tabs click through their router at once while every
/// core is kept busy, and every click settles (no network cap) and reports
/// its new URL.
#[test]
fn push_state_clicks_settle_on_a_loaded_machine() {
    const TABS: usize = 12;
    const CLICKS: usize = 8;
    let (h, _g) = shared();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let burners: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            })
        })
        .collect();
    let outcomes = block_on(async {
        let mut tabs = Vec::new();
        for _ in 0..TABS {
            tabs.push(h.tab_on("/faithful/spa").await);
        }
        let runs = tabs.iter().cloned().map(|tab| {
            tokio::spawn(async move {
                let mut seen = Vec::new();
                for click in 1..=CLICKS {
                    let (status, answer) = h.click_on(&tab, "#next").await;
                    let navigated = answer["events"].as_array().is_some_and(|events| {
                        events.iter().any(|e| {
                            e["type"] == "navigation"
                                && e["data"]["url"]
                                    .as_str()
                                    .is_some_and(|u| u.ends_with(&format!("/spa/{click}")))
                        })
                    });
                    seen.push((
                        status,
                        answer["timing"]["wait_reason"].clone(),
                        navigated,
                        answer["events"].clone(),
                    ));
                }
                seen
            })
        });
        let mut outcomes = Vec::new();
        for run in runs.collect::<Vec<_>>() {
            outcomes.extend(run.await.unwrap());
        }
        for tab in &tabs {
            h.delete(&format!("/tabs/{tab}")).await;
        }
        outcomes
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for burner in burners {
        burner.join().unwrap();
    }
    for (status, reason, navigated, events) in &outcomes {
        assert_eq!(*status, 200, "{events}");
        assert_eq!(reason, "settled", "{events}");
        assert!(navigated, "the click reports its URL: {events}");
    }
}

/// A download whose server drops the connection half-way is resumed where
/// it broke off (Chromium's resume: a `Range` request with the validator),
/// and ends complete and intact.
#[test]
fn a_download_cut_off_half_way_resumes_where_it_stopped() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/faithful/nav").await;
        let before = common::DROPPING_RANGE_REQUESTS.load(std::sync::atomic::Ordering::SeqCst);
        h.eval(
            &tab,
            "(() => { const a = document.createElement('a'); a.id = 'dl'; a.href = '/download/dropping.bin'; a.textContent = 'file'; a.style = 'position:fixed;left:300px;top:300px'; document.body.append(a); return 1; })()",
        )
        .await;
        let clicked = ok(h, &tab, "click", json!({ "selector": "#dl" })).await;
        let started = clicked["events"]
            .as_array()
            .and_then(|events| events.iter().find(|e| e["type"] == "download_started"))
            .unwrap_or_else(|| panic!("no download_started: {clicked}"))
            .clone();
        let id = started["data"]["download_id"].as_str().unwrap().to_string();
        let (status, done) = h
            .post(
                &format!("/downloads/{id}/wait"),
                json!({ "timeout_ms": 20000 }),
            )
            .await;
        assert_eq!(status, 200, "{done}");
        assert_eq!(done["state"], "completed", "{done}");
        assert_eq!(done["bytes_received"], 2_000_000, "{done}");
        let saved = std::fs::read(done["path"].as_str().unwrap()).unwrap();
        assert!(
            saved == common::dropping_download_bytes(),
            "the file is whole and in order ({} bytes)",
            saved.len()
        );
        assert!(
            common::DROPPING_RANGE_REQUESTS.load(std::sync::atomic::Ordering::SeqCst) > before,
            "the rest came from a Range request, not a new download"
        );
    });
}
