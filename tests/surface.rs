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
        "{path}: the action's envelope: {envelope}"
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
    block_on(async {
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
        assert!((35.0..=65.0).contains(&value), "the slider moved to {value}");

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
    });
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
        assert_eq!(selection, json!([0, 11]), "Ctrl+A selected the field's text");
        assert!(
            page_log(h, &tab).await.contains(&"keydown:a+ctrl".to_string()),
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
        let value = h
            .eval(&tab, "document.getElementById('area').value")
            .await;
        assert_eq!(value.as_str().unwrap(), text, "the whole text, newlines kept");
        assert!(!page_log(h, &tab).await.contains(&"area-key".to_string()));

        for (body, field) in [
            (json!({ "keys": ["a", "b"] }), "\"a\" is not a modifier"),
            (json!({ "keys": [] }), "\"keys\""),
        ] {
            let (status, answer) = h
                .post(&format!("/tabs/{tab}/keyboard/shortcut"), body)
                .await;
            assert_eq!(status, 400, "{answer}");
            assert!(answer["error"].as_str().unwrap().contains(field), "{answer}");
        }
        let (status, answer) = h
            .post(&format!("/tabs/{tab}/keyboard/insert"), json!({}))
            .await;
        assert_eq!(status, 400, "{answer}");
        assert!(answer["error"].as_str().unwrap().contains("text"), "{answer}");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn a_hover_that_lasts_shows_a_delayed_tooltip() {
    let (h, _g) = shared();
    block_on(async {
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
    });
}
