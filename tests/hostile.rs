//! Hostile pages: each request that touches one answers within a bound, a
//! second tab keeps answering, and the hostile tab is usable afterwards.
//! Real headless Chromium against pages served on 127.0.0.1.

mod common;

use std::time::{Duration, Instant};

use common::{Harness, block_on, shared};
use serde_json::{Value, json};

/// A hostile-page test run on each engine a user may get: headless-shell
/// with site isolation (the default: compositor driver), headless-shell
/// without it (the deterministic driver) and full Chromium.
macro_rules! on_every_driver {
    ($body:ident) => {
        on_every_driver!($body: shared, deterministic, compositor);
    };
    // `alone`: a page that spins a renderer takes a core; run it with nothing
    // else in this binary, so the other tests' bounds keep their meaning.
    ($body:ident, alone) => {
        on_every_driver!($body: exclusive, deterministic_alone, compositor_alone);
    };
    ($body:ident: $headless:ident, $deterministic:ident, $full:ident) => {
        mod $body {
            #[test]
            fn on_headless_shell() {
                let (h, _guard) = super::common::$headless();
                super::common::block_on(super::$body(h));
            }

            #[test]
            fn on_headless_shell_deterministic() {
                let (h, _guard) = super::common::$deterministic();
                super::common::block_on(super::$body(h));
            }

            #[test]
            fn on_full_chromium() {
                let (h, _guard) = super::common::$full();
                super::common::block_on(super::$body(h));
            }
        }
    };
}

/// What "answers within its bound" means here: far above any action's own
/// timeout, far below a hang.
const BOUND: Duration = Duration::from_secs(30);

fn event_types(envelope: &Value) -> Vec<String> {
    envelope["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .filter_map(|e| e["type"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn event<'a>(envelope: &'a Value, kind: &str) -> &'a Value {
    envelope["events"]
        .as_array()
        .and_then(|events| events.iter().find(|e| e["type"] == kind))
        .unwrap_or_else(|| panic!("no {kind} event in {}", envelope["events"]))
}

async fn timed_post(h: &Harness, path: &str, body: Value) -> (u16, Value) {
    let started = Instant::now();
    let shown: String = body.to_string().chars().take(200).collect();
    let answer = h.post(path, body).await;
    assert!(
        started.elapsed() < BOUND,
        "POST {path} {shown} took {:?}",
        started.elapsed()
    );
    answer
}

/// A new tab on about:blank.
async fn blank_tab(h: &Harness) -> String {
    let (status, tab) = h.post("/tabs", json!({})).await;
    assert_eq!(status, 201, "{tab}");
    tab["id"].as_str().unwrap().to_string()
}

/// The tab answers a script and an action again.
async fn usable(h: &Harness, tab: &str) {
    let (status, body) = timed_post(
        h,
        &format!("/tabs/{tab}/execute"),
        json!({ "script": "1 + 1" }),
    )
    .await;
    assert_eq!(
        (status, &body["result"]["value"]),
        (200, &json!(2)),
        "{body}"
    );
    let (status, body) = timed_post(
        h,
        &format!("/tabs/{tab}/scroll"),
        json!({ "x": 10, "y": 10, "delta_y": 10, "screenshot": { "area": "none" } }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

on_every_driver!(every_native_picker_is_intercepted_and_answered);

async fn every_native_picker_is_intercepted_and_answered(h: &'static Harness) {
    {
        let tab = h.tab_on("/hostile/pickers").await;
        let other = h.tab_on("/").await;
        let cases = [
            ("date", "2026-11-25"),
            ("time", "14:30"),
            ("datetime-local", "2026-11-25T14:30"),
            ("month", "2026-11"),
            ("week", "2026-W48"),
            ("color", "#3366ff"),
        ];
        for (input, value) in cases {
            // The indicator sits at the input's right end.
            let (x, y) = h.center(&tab, &format!("#{input}")).await;
            let (status, envelope) = timed_post(
                h,
                &format!("/tabs/{tab}/click"),
                json!({ "x": x + 100.0, "y": y }),
            )
            .await;
            assert_eq!(status, 200, "{input}: {envelope}");
            let (kind, id_prefix) = if input == "color" {
                ("color_picker_open", "cp_")
            } else {
                ("datetime_picker_open", "dp_")
            };
            let opened = event(&envelope, kind);
            let id = opened["data"]["id"].as_str().unwrap().to_string();
            assert!(id.starts_with(id_prefix), "{opened}");
            assert_eq!(opened["data"]["pending"], true);
            if input == "color" {
                assert_eq!(opened["data"]["value"], "#112233");
            } else {
                assert_eq!(opened["data"]["input_type"], input);
            }
            if input == "datetime-local" {
                assert_eq!(opened["data"]["min"], "2026-01-01T00:00");
                assert_eq!(opened["data"]["step"], "60");
            }
            assert!(
                envelope["screenshot_after"]["data"].is_string(),
                "the page still draws"
            );
            let route = if input == "color" {
                "color-picker"
            } else {
                "datetime-picker"
            };
            // A value in the wrong format is refused and says which one.
            let (status, err) = h
                .post(&format!("/{route}/{id}"), json!({ "value": "not a value" }))
                .await;
            assert_eq!(status, 400, "{err}");
            assert!(err["error"].as_str().unwrap().contains("e.g."), "{err}");
            let (status, answer) = h
                .post(&format!("/{route}/{id}"), json!({ "value": value }))
                .await;
            assert_eq!((status, &answer["value"]), (200, &json!(value)), "{answer}");
            let set = h
                .eval(&tab, &format!("document.getElementById('{input}').value"))
                .await;
            assert_eq!(set, json!(value));
            let changes = h.eval(&tab, "window.changes.join(' ')").await;
            assert!(
                changes
                    .as_str()
                    .unwrap()
                    .contains(&format!("input:{input} change:{input}={value}")),
                "{changes}"
            );
            // Answered: gone.
            let (status, _) = h
                .post(&format!("/{route}/{id}"), json!({ "value": value }))
                .await;
            assert_eq!(status, 404);
        }

        // The keyboard's way to a picker, and cancelling.
        h.eval(&tab, "document.getElementById('date').focus()")
            .await;
        let (status, envelope) = timed_post(
            h,
            &format!("/tabs/{tab}/keyboard/press"),
            json!({ "key": "ArrowDown", "modifiers": ["Alt"] }),
        )
        .await;
        assert_eq!(status, 200, "{envelope}");
        let id = event(&envelope, "datetime_picker_open")["data"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let (status, answer) = h
            .post(&format!("/datetime-picker/{id}"), json!({ "cancel": true }))
            .await;
        assert_eq!((status, &answer["cancelled"]), (200, &json!(true)));
        assert_eq!(
            h.eval(&tab, "document.getElementById('date').value").await,
            json!("2026-11-25"),
            "a cancelled picker leaves the input as it was"
        );

        // showPicker() from the page's own script, on an input and a select.
        for (button, kind) in [
            ("#show", "datetime_picker_open"),
            ("#showsel", "select_open"),
        ] {
            let (x, y) = h.center(&tab, button).await;
            let (status, envelope) =
                timed_post(h, &format!("/tabs/{tab}/click"), json!({ "x": x, "y": y })).await;
            assert_eq!(status, 200, "{envelope}");
            event(&envelope, kind);
        }

        // A click on the text of a date input edits it: no picker.
        let (x, y) = h.center(&tab, "#date").await;
        let (_, envelope) = timed_post(
            h,
            &format!("/tabs/{tab}/click"),
            json!({ "x": x - 80.0, "y": y, "screenshot": { "area": "none" } }),
        )
        .await;
        assert!(
            !event_types(&envelope).contains(&"datetime_picker_open".to_string()),
            "{envelope}"
        );
        usable(h, &tab).await;
        usable(h, &other).await;
    }
}

on_every_driver!(dialog_storms_and_loops_never_block);

async fn dialog_storms_and_loops_never_block(h: &'static Harness) {
    {
        let tab = h.tab_on("/hostile/storm").await;
        let (x, y) = h.center(&tab, "#go").await;
        let (status, envelope) = timed_post(
            h,
            &format!("/tabs/{tab}/click"),
            json!({ "x": x, "y": y, "screenshot": { "area": "none" } }),
        )
        .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(event(&envelope, "dialog")["data"]["message"], "storm 0");
        // Ten accepts, each at once; each names the next dialog.
        for i in 0..10 {
            let (status, answer) =
                timed_post(h, &format!("/tabs/{tab}/dialog/accept"), json!({})).await;
            assert_eq!(status, 200, "accept {i}: {answer}");
            if i < 9 {
                assert_eq!(
                    event(&answer, "dialog")["data"]["message"],
                    format!("storm {}", i + 1),
                    "{answer}"
                );
            }
        }
        let (status, _) = h
            .post(&format!("/tabs/{tab}/dialog/accept"), json!({}))
            .await;
        assert_eq!(status, 400, "no dialog is left");
        assert_eq!(h.eval(&tab, "document.title").await, json!("after storm"));
        usable(h, &tab).await;

        // An endless loop: every answer comes back, and navigating away
        // ends it (repairing the tab if the page would not let go).
        let tab = h.tab_on("/hostile/alert-loop").await;
        let (x, y) = h.center(&tab, "#go").await;
        let (status, _) = timed_post(
            h,
            &format!("/tabs/{tab}/click"),
            json!({ "x": x, "y": y, "screenshot": { "area": "none" } }),
        )
        .await;
        assert_eq!(status, 200);
        for verb in ["accept", "accept", "dismiss"] {
            let (status, answer) =
                timed_post(h, &format!("/tabs/{tab}/dialog/{verb}"), json!({})).await;
            assert_eq!(status, 200, "{answer}");
            assert_eq!(event(&answer, "dialog")["data"]["message"], "again");
        }
        let (status, envelope) = timed_post(
            h,
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url("/second") }),
        )
        .await;
        assert_eq!(status, 200, "{envelope}");
        // Whichever way it went, the tab now works, under the same id.
        let (status, second) = timed_post(
            h,
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url("/second"), "screenshot": { "area": "none" } }),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(
            h.eval(&tab, "document.title").await,
            json!("Second"),
            "after leaving the loop: {envelope}\nthen: {second}"
        );
        usable(h, &tab).await;
    }
}

on_every_driver!(pages_that_never_finish_or_fail_to_load_answer_in_bounds);

async fn pages_that_never_finish_or_fail_to_load_answer_in_bounds(h: &'static Harness) {
    {
        // An alert while the page loads: the navigate says so.
        let tab = blank_tab(h).await;
        let (status, envelope) = timed_post(
            h,
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url("/hostile/alert-on-load") }),
        )
        .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(event(&envelope, "dialog")["data"]["message"], "loading");
        let (status, _) = timed_post(h, &format!("/tabs/{tab}/dialog/accept"), json!({})).await;
        assert_eq!(status, 200);
        usable(h, &tab).await;

        // An image that takes a minute: the page as it stands.
        let (status, envelope) = timed_post(
            h,
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url("/hostile/slow-image") }),
        )
        .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(envelope["result"]["status"], "navigated");
        usable(h, &tab).await;

        // A redirect loop: an envelope naming the network error.
        let (status, envelope) = timed_post(
            h,
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url("/redirect-loop") }),
        )
        .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(envelope["result"]["status"], "failed");
        assert_eq!(
            event(&envelope, "navigation_failed")["data"]["error"],
            "net::ERR_TOO_MANY_REDIRECTS"
        );
        usable(h, &tab).await;
        // A new tab there: 400, and no tab is left behind.
        let (_, before) = h.get("/tabs").await;
        let (status, err) = timed_post(h, "/tabs", json!({ "url": h.url("/redirect-loop") })).await;
        assert_eq!(
            (status, &err["code"]),
            (400, &json!("NAVIGATION_FAILED")),
            "{err}"
        );
        let (_, after) = h.get("/tabs").await;
        assert_eq!(before, after);

        // Input the browser must never see: 400 at once, a short message.
        let huge = format!("http://[{}", "a".repeat(1_000_000));
        for url in [huge.as_str(), "http://127.0.0.1:25/", "http://"] {
            let started = Instant::now();
            let (status, err) = h
                .post(&format!("/tabs/{tab}/navigate"), json!({ "url": url }))
                .await;
            assert_eq!(status, 400, "{err}");
            assert!(err["error"].as_str().unwrap().len() < 400, "{err}");
            assert!(started.elapsed() < Duration::from_secs(5));
            let (status, _) = h.post("/tabs", json!({ "url": url })).await;
            assert_eq!(status, 400);
        }
        usable(h, &tab).await;
    }
}

on_every_driver!(
    a_page_that_stops_answering_is_repaired_under_the_same_id,
    alone
);

/// The action timeout the busy-page tests give (the default is 30 s).
const HANG_TIMEOUT_MS: u64 = 3000;

async fn a_page_that_stops_answering_is_repaired_under_the_same_id(h: &'static Harness) {
    {
        let tab = h.tab_on("/hostile/busy").await;
        let other = h.tab_on("/").await;
        let (x, y) = h.center(&tab, "#go").await;
        let click_path = format!("/tabs/{tab}/click");
        // A short action timeout: a page that stops answering is told
        // sooner (the default gives a busy page 10 s), same repair.
        let click = h.post(
            &click_path,
            json!({ "x": x, "y": y, "wait_until": { "timeout_ms": HANG_TIMEOUT_MS } }),
        );
        let bystander = async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            usable(h, &other).await;
        };
        let started = Instant::now();
        let ((status, envelope), ()) = tokio::join!(click, bystander);
        assert!(started.elapsed() < BOUND, "{:?}", started.elapsed());
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(envelope["timing"]["wait_reason"], "renderer_unresponsive");
        let types = event_types(&envelope);
        assert!(
            types.contains(&"renderer_unresponsive".to_string()),
            "{types:?}"
        );
        let recovered = event(&envelope, "tab_recovered");
        assert_eq!(recovered["data"]["tab_id"], json!(tab));
        assert_eq!(recovered["data"]["url"], json!(h.url("/hostile/busy")));
        // The repair is on record with the action that hit it.
        let action_id = envelope["action_id"].as_str().expect("recorded");
        let (status, recorded) = h
            .get(&format!("/history/events?action_id={action_id}"))
            .await;
        assert_eq!(status, 200, "{recorded}");
        assert!(recorded.to_string().contains("tab_recovered"), "{recorded}");
        // The same id, a working page: the busy one, reopened and idle.
        usable(h, &tab).await;
        assert_eq!(h.eval(&tab, "document.title").await, json!("Busy"));

        // The same from a timer that comes due while the settle
        // fast-forwards the page's clock.
        let later = h.tab_on("/hostile/busy-later").await;
        let started = Instant::now();
        let (x, y) = h.center(&later, "#go").await;
        let (status, envelope) = timed_post(
            h,
            &format!("/tabs/{later}/click"),
            json!({ "x": x, "y": y, "screenshot": { "area": "none" },
                    "wait_until": { "timeout_ms": HANG_TIMEOUT_MS } }),
        )
        .await;
        assert_eq!(status, 200, "{envelope}");
        assert!(started.elapsed() < BOUND, "{:?}", started.elapsed());
        assert!(
            event_types(&envelope)
                .iter()
                .any(|t| t == "renderer_unresponsive" || t == "tab_recovered"),
            "{envelope}"
        );
        usable(h, &later).await;
        h.delete(&format!("/tabs/{later}")).await;

        // A crashed renderer: the next request repairs the tab.
        let engine = &h.server.app;
        let handle = engine
            .tab(&wabp_core::Caller::anonymous(), &tab)
            .expect("the tab");
        let crash = tokio::spawn(async move {
            let _ = handle.session.raw("Page.crash", json!({})).await;
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (status, envelope) = timed_post(
            h,
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url("/second") }),
        )
        .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(h.eval(&tab, "document.title").await, json!("Second"));
        crash.abort();

        // Busy while loading: the navigate answers; the tab is repaired
        // blank (reopening would wedge it again) and works.
        let (status, envelope) = timed_post(
            h,
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url("/hostile/busy-on-load"),
                    "wait_until": { "timeout_ms": HANG_TIMEOUT_MS } }),
        )
        .await;
        assert_eq!(status, 200, "{envelope}");
        usable(h, &tab).await;
        usable(h, &other).await;
    }
}

on_every_driver!(prompts_modals_blocking_calls_and_storms_answer_in_bounds);

/// Clicks `#go` on `tab`, bounded; the envelope.
async fn click_go(h: &Harness, tab: &str) -> Value {
    let (x, y) = h.center(tab, "#go").await;
    let (status, envelope) = timed_post(
        h,
        &format!("/tabs/{tab}/click"),
        json!({ "x": x, "y": y, "screenshot": { "area": "none" } }),
    )
    .await;
    assert_eq!(status, 200, "{envelope}");
    envelope
}

async fn prompts_modals_blocking_calls_and_storms_answer_in_bounds(h: &'static Harness) {
    let other = h.tab_on("/").await;

    // beforeunload (armed by a click: Chromium asks only after a gesture):
    // a navigate says the prompt holds it, and dismissing it keeps the page.
    let tab = h.tab_on("/hostile/beforeunload").await;
    click_go(h, &tab).await;
    let (status, envelope) = timed_post(
        h,
        &format!("/tabs/{tab}/navigate"),
        json!({ "url": h.url("/second"), "screenshot": { "area": "none" } }),
    )
    .await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(
        event(&envelope, "dialog")["data"]["dialog_type"],
        "beforeunload",
        "{envelope}"
    );
    let (status, _) = timed_post(h, &format!("/tabs/{tab}/dialog/dismiss"), json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(
        h.eval(&tab, "document.title").await,
        json!("armed"),
        "stayed"
    );
    usable(h, &tab).await;
    // A reload and a back the prompt holds say so too, not that they went.
    for (way, path) in [("reload", "reload"), ("back", "back")] {
        click_go(h, &tab).await;
        let (status, envelope) = timed_post(
            h,
            &format!("/tabs/{tab}/{path}"),
            json!({ "screenshot": { "area": "none" } }),
        )
        .await;
        assert_eq!(status, 200, "{way}: {envelope}");
        assert_eq!(
            envelope["result"]["status"], "blocked_by_beforeunload",
            "{way}: {envelope}"
        );
        let (status, _) = timed_post(h, &format!("/tabs/{tab}/dialog/dismiss"), json!({})).await;
        assert_eq!(status, 200, "{way}");
        assert_eq!(
            h.eval(&tab, "document.title").await,
            json!("armed"),
            "{way}"
        );
    }
    // Armed again, a navigate with accept_beforeunload goes through: the
    // envelope is the new page's.
    click_go(h, &tab).await;
    let (status, envelope) = timed_post(
        h,
        &format!("/tabs/{tab}/navigate"),
        json!({ "url": h.url("/second"), "accept_beforeunload": true, "screenshot": { "area": "none" } }),
    )
    .await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(envelope["result"]["status"], "navigated", "{envelope}");
    assert_eq!(
        h.eval(&tab, "document.title").await,
        json!("Second"),
        "{envelope}"
    );
    let (_, dialog) = h.get(&format!("/tabs/{tab}/dialog")).await;
    assert_eq!(dialog["present"], false, "{dialog}");

    // window.print(): no native dialog holds the page.
    let tab = h.tab_on("/hostile/print").await;
    click_go(h, &tab).await;
    usable(h, &tab).await;

    // A <dialog> modal is page content: opened and closed by clicks.
    let tab = h.tab_on("/hostile/modal").await;
    click_go(h, &tab).await;
    assert_eq!(
        h.eval(&tab, "document.getElementById('box').open").await,
        json!(true)
    );
    let (x, y) = h.center(&tab, "#close").await;
    let (status, _) = timed_post(
        h,
        &format!("/tabs/{tab}/click"),
        json!({ "x": x, "y": y, "screenshot": { "area": "none" } }),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        h.eval(&tab, "document.getElementById('box').open").await,
        json!(false)
    );

    // A synchronous XHR of 3 s blocks the page; the click still answers.
    let tab = h.tab_on("/hostile/sync-xhr").await;
    click_go(h, &tab).await;
    assert_eq!(h.eval(&tab, "document.title").await, json!("xhr slept"));
    usable(h, &tab).await;

    // A worker spinning forever does not hold the page.
    let tab = h.tab_on("/hostile/worker").await;
    click_go(h, &tab).await;
    assert_eq!(h.eval(&tab, "document.title").await, json!("clicked"));

    // Geolocation and notification prompts: refused, never shown.
    let tab = h.tab_on("/hostile/permissions").await;
    click_go(h, &tab).await;
    usable(h, &tab).await;

    // An alert in a cross-site frame while it loads: reported, answered.
    let tab = blank_tab(h).await;
    let (status, envelope) = timed_post(
        h,
        &format!("/tabs/{tab}/navigate"),
        json!({ "url": h.url("/cross-frame-alert"), "screenshot": { "area": "none" } }),
    )
    .await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(event(&envelope, "dialog")["data"]["message"], "loading");
    let (status, _) = timed_post(h, &format!("/tabs/{tab}/dialog/accept"), json!({})).await;
    assert_eq!(status, 200);
    usable(h, &tab).await;

    // A popup storm: the click answers, the popups become tabs, and closing
    // them leaves the opener working.
    let (_, before) = h.get("/tabs").await;
    let tab = h.tab_on("/hostile/popup-storm").await;
    let envelope = click_go(h, &tab).await;
    // The click waits for the popups it opened to be attached: their
    // events are in its envelope.
    let announced = event_types(&envelope)
        .iter()
        .filter(|t| *t == "popup")
        .count();
    assert!(announced > 0, "{envelope}");
    let known: Vec<Value> = before
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].clone())
        .chain([json!(tab), json!(other)])
        .collect();
    // Popups are adopted as they come; Chromium lets a gesture open some.
    let after = common::eventually(Duration::from_secs(10), || async {
        let (_, tabs) = h.get("/tabs").await;
        let popups = tabs
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| !known.contains(&t["id"]))
            .count();
        (popups > 0).then_some(tabs)
    })
    .await
    .expect("no popup became a tab");
    for popup in after.as_array().unwrap() {
        if !known.contains(&popup["id"]) {
            let id = popup["id"].as_str().unwrap();
            let (status, _) = h.delete(&format!("/tabs/{id}")).await;
            assert!(status == 200 || status == 404, "closing {id}: {status}");
        }
    }
    usable(h, &tab).await;
    usable(h, &other).await;
}

on_every_driver!(floods_downloads_and_deep_frames_answer_in_bounds);

/// GETs `path`, bounded; the answer.
async fn timed_get(h: &Harness, path: &str) -> (u16, Value) {
    let started = Instant::now();
    let answer = h.get(path).await;
    assert!(
        started.elapsed() < BOUND,
        "GET {path} took {:?}",
        started.elapsed()
    );
    answer
}

async fn floods_downloads_and_deep_frames_answer_in_bounds(h: &'static Harness) {
    let other = h.tab_on("/").await;

    // A page that never stops drawing or receiving: a full-speed canvas
    // with rAF, a zero-delay interval and an endless CSS animation; an
    // EventSource and a WebSocket each delivering a message a millisecond.
    // Loading, clicking, capturing and scripting it all answer, and the page
    // did run (and receive) while it was acted on.
    for (page, progress) in [
        ("/hostile/canvas", "window.drawn"),
        ("/hostile/event-source", "window.received"),
        ("/socket-flood", "window.received"),
    ] {
        let tab = blank_tab(h).await;
        let (status, envelope) = timed_post(
            h,
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url(page) }),
        )
        .await;
        assert_eq!(status, 200, "{page}: {envelope}");
        assert!(
            envelope["screenshot_after"].is_object(),
            "{page}: a capture"
        );
        click_go(h, &tab).await;
        assert_eq!(h.eval(&tab, "window.clicked").await, json!(true), "{page}");
        let (status, _) = timed_get(h, &format!("/tabs/{tab}/screenshot")).await;
        assert_eq!(status, 200, "{page}");
        let (status, _) = timed_get(h, &format!("/tabs/{tab}/snapshot")).await;
        assert_eq!(status, 200, "{page}");
        let ran = h.eval(&tab, progress).await.as_u64().unwrap_or(0);
        assert!(ran > 0, "{page}: {progress} = {ran}");
        usable(h, &tab).await;
        let (status, _) = h.delete(&format!("/tabs/{tab}")).await;
        assert_eq!(status, 200, "{page}");
        usable(h, &other).await;
    }

    // Twenty downloads from one click: the click answers, they are listed.
    let tab = h.tab_on("/hostile/download-storm").await;
    click_go(h, &tab).await;
    assert_eq!(h.eval(&tab, "document.title").await, json!("stormed"));
    let listed = common::eventually(Duration::from_secs(10), || async {
        let (_, list) = h.get("/downloads").await;
        let stormed = list["downloads"]
            .as_array()
            .map(|all| {
                all.iter()
                    .filter(|d| {
                        d["url"]
                            .as_str()
                            .is_some_and(|u| u.contains("report.txt?n="))
                    })
                    .count()
            })
            .unwrap_or(0);
        (stormed > 0).then_some(list)
    })
    .await;
    assert!(listed.is_some(), "the stormed downloads are listed");
    usable(h, &tab).await;

    // Twelve frames deep, each on the other site: loaded, read, captured.
    let tab = blank_tab(h).await;
    let (status, envelope) = timed_post(
        h,
        &format!("/tabs/{tab}/navigate"),
        json!({ "url": h.url("/deep-frames?depth=12") }),
    )
    .await;
    assert_eq!(status, 200, "{envelope}");
    // Each level starts loading once its parent has loaded, and nothing
    // else is in flight between two levels: the navigation's settle lasts
    // until the page's load event, which waits for every level.
    let (status, snapshot) = timed_get(h, &format!("/tabs/{tab}/snapshot")).await;
    assert_eq!(status, 200, "{snapshot}");
    let text = snapshot.to_string();
    assert!(
        text.contains("level 12") && text.contains("level 0"),
        "every level is read: {}",
        text.chars().take(2000).collect::<String>()
    );
    let (status, _) = timed_get(h, &format!("/tabs/{tab}/screenshot")).await;
    assert_eq!(status, 200);
    usable(h, &tab).await;
    usable(h, &other).await;
}

on_every_driver!(a_page_that_runs_out_of_memory_is_repaired, alone);

async fn a_page_that_runs_out_of_memory_is_repaired(h: &'static Harness) {
    let other = h.tab_on("/").await;
    let tab = h.tab_on("/hostile/oom").await;
    let envelope = click_go(h, &tab).await;
    assert!(
        event_types(&envelope)
            .iter()
            .any(|t| t == "renderer_crashed" || t == "renderer_unresponsive"),
        "{envelope}"
    );
    usable(h, &tab).await;
    usable(h, &other).await;
}

#[test]
fn a_page_of_a_hundred_thousand_nodes_is_read_in_bounds() {
    let (h, _guard) = shared();
    block_on(async {
        let tab = h.tab_on("/hostile/huge-dom").await;
        for path in [
            format!("/tabs/{tab}/snapshot"),
            format!("/tabs/{tab}/snapshot?format=json"),
            format!("/tabs/{tab}/state"),
            format!("/tabs/{tab}/screenshot"),
        ] {
            let started = Instant::now();
            let (status, body) = h.get(&path).await;
            assert!(started.elapsed() < BOUND, "{path}: {:?}", started.elapsed());
            assert_eq!(
                status,
                200,
                "{path}: {}",
                body.to_string().chars().take(300).collect::<String>()
            );
        }
        let (_, snapshot) = h.get(&format!("/tabs/{tab}/snapshot")).await;
        assert_eq!(snapshot["hasMore"], true, "served in windows");
        assert!(snapshot["refsCount"].as_u64().unwrap() >= 10_000);
        // The whole page is there (the DOM-built tree has no cut below
        // 100,000 lines); the browser's own tree would take too long, so a
        // snapshot that asks for it is built from the DOM and says so.
        assert_eq!(snapshot["truncated"], true, "windows of a long snapshot");
        assert!(snapshot.get("note").is_none(), "{}", snapshot["note"]);
        let (status, asked) = h
            .get(&format!("/tabs/{tab}/snapshot?source=accessibility"))
            .await;
        assert_eq!(status, 200);
        assert!(
            asked["note"]
                .as_str()
                .unwrap_or("")
                .contains("elements, too many for its accessibility tree"),
            "{}",
            asked["note"]
        );
        assert_eq!(asked["refsCount"], snapshot["refsCount"]);
        let text = snapshot["snapshot"].as_str().unwrap();
        assert!(text.contains("- button \"n0\" [e"), "{}", &text[..300]);
        let line = text.lines().find(|l| l.contains("\"n990\"")).unwrap();
        let reference = line.split('[').nth(1).unwrap().trim_end_matches(']');
        let (status, envelope) = h
            .post(&format!("/tabs/{tab}/click"), json!({ "ref": reference }))
            .await;
        assert_eq!(status, 200, "{envelope}");
        usable(h, &tab).await;
    });
}

/// A tab the browser's restart reopened at `/second`: its page is there
/// and its first action carries the `browser_restarted` event.
async fn back_at_second_with_its_event(h: &Harness, tab: &str) {
    assert_eq!(h.eval(tab, "document.title").await, json!("Second"));
    let (status, envelope) = timed_post(
        h,
        &format!("/tabs/{tab}/scroll"),
        json!({ "x": 10, "y": 10, "delta_y": 10, "screenshot": { "area": "none" } }),
    )
    .await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(
        event(&envelope, "browser_restarted")["data"]["url"],
        json!(h.url("/second"))
    );
}

#[test]
fn a_browser_killed_mid_action_comes_back_with_its_tabs() {
    let (h, _guard) = shared();
    block_on(async {
        let own = common::start_server(common::temp_dir("plugins"), None).await;
        let h = h.with_server(own);
        let first = h.tab_on("/second").await;
        let second = h.tab_on("/").await;
        let profile = h.server.app.config.browser.user_data_dir.clone();
        // Mid-action: a click that waits on a slow fetch.
        let (x, y) = h.center(&second, "#fetch").await;
        let click_path = format!("/tabs/{second}/click");
        let click = h.post(
            &click_path,
            json!({ "x": x, "y": y, "wait_until": { "timeout_ms": 5000 } }),
        );
        let kill = async {
            tokio::time::sleep(Duration::from_millis(150)).await;
            // Exactly this profile: other engines' paths share its prefix.
            let pattern = format!("user-data-dir={}( |$)", profile.display());
            let killed = std::process::Command::new("pkill")
                .args(["-9", "-f", &pattern])
                .status()
                .expect("pkill");
            assert!(killed.success(), "the browser's processes were found");
        };
        let started = Instant::now();
        let ((status, _), ()) = tokio::join!(click, kill);
        assert!(started.elapsed() < BOUND, "{:?}", started.elapsed());
        assert!(status < 600);
        // Noticed, said, and back.
        let back = common::eventually(BOUND, || async {
            let (_, status) = h.get("/browser/status").await;
            (status["data"]["ready"] == true && status["data"]["restarts"] == 1).then_some(status)
        })
        .await;
        assert!(back.is_some(), "the browser came back");
        let (_, tabs) = h.get("/tabs").await;
        let ids: Vec<&str> = tabs
            .as_array()
            .or_else(|| tabs["tabs"].as_array())
            .expect("a tab list")
            .iter()
            .filter_map(|t| t["id"].as_str())
            .collect();
        assert!(
            ids.contains(&first.as_str()) && ids.contains(&second.as_str()),
            "{tabs}"
        );
        back_at_second_with_its_event(&h, &first).await;
        usable(&h, &second).await;
        h.server.app.shutdown(Duration::from_secs(5)).await;
    });
}

/// A full Chromium of our own on `port`, as a user's or a grid's browser.
fn browser_on_port(port: u16, profile: &std::path::Path) -> std::process::Child {
    std::process::Command::new("/usr/bin/chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--no-first-run",
            "--disable-gpu",
            &format!("--remote-debugging-port={port}"),
            &format!("--user-data-dir={}", profile.display()),
            "about:blank",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the compositor tests need Debian's chromium (apt-get install chromium)")
}

async fn devtools_answers(http: &reqwest::Client, port: u16) -> bool {
    http.get(format!("http://127.0.0.1:{port}/json/version"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
}

#[test]
fn an_attached_browser_that_goes_away_is_reattached() {
    let (h, _guard) = common::exclusive();
    block_on(async {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let profile = common::temp_dir("attached-profile");
        let http = reqwest::Client::new();
        let mut browser = browser_on_port(port, &profile);
        let up = common::eventually(BOUND, || async {
            devtools_answers(&http, port).await.then_some(())
        })
        .await;
        assert!(up.is_some(), "the browser to attach to started");
        let endpoint = format!("http://127.0.0.1:{port}");
        let own = common::start_server_with(common::temp_dir("plugins"), |o| {
            o.launch = wabp_core::browser::LaunchMode::Connect(endpoint.clone());
        })
        .await;
        let h = h.with_server(own);
        let tab = h.tab_on("/second").await;

        // The browser goes away: the engine notices and says it is
        // reconnecting, while requests answer 503 at once.
        browser.kill().unwrap();
        browser.wait().unwrap();
        let noticed = common::eventually(BOUND, || async {
            let (_, status) = h.get("/browser/status").await;
            (status["data"]["state"] == "restarting").then_some(status)
        })
        .await
        .expect("the engine noticed");
        assert!(
            noticed["data"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("reconnecting") && m.contains(&endpoint)),
            "{noticed}"
        );
        let started = Instant::now();
        let (status, body) = h.get(&format!("/tabs/{tab}")).await;
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(status, 503, "{body}");

        // A few seconds later a browser answers there again (a restarted
        // grid node): the engine reattaches and reopens the tab.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let mut browser = browser_on_port(port, &profile);
        let back = common::eventually(Duration::from_secs(60), || async {
            let (_, status) = h.get("/browser/status").await;
            (status["data"]["ready"] == true && status["data"]["restarts"] == 1).then_some(status)
        })
        .await;
        assert!(back.is_some(), "the engine reattached");
        back_at_second_with_its_event(&h, &tab).await;
        usable(&h, &tab).await;
        h.server.app.shutdown(Duration::from_secs(5)).await;
        let _ = browser.kill();
        let _ = browser.wait();
    });
}
