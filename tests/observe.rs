//! Reading pages for agents: accessibility snapshots with refs, targeting by
//! ref, selector and index, the browser-use state, frames and shadow DOM,
//! and per-user isolation. Real Chromium, real HTTP.

mod common;

use std::time::Duration;

use common::{block_on, shared};
use serde_json::{Value, json};

const QUIET: &str = "none";

/// The ref of the first snapshot line containing `needle`.
fn ref_on_line(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{snapshot}"));
    let start = line.find(" [").expect("a ref") + 2;
    let end = start + line[start..].find(']').unwrap();
    let r = &line[start..end];
    assert!(r.contains('e'), "not a ref: {r} in {line}");
    r.to_string()
}

fn number_of(r: &str) -> u64 {
    r.rsplit('e').next().unwrap().parse().unwrap()
}

async fn snapshot(h: &common::Harness, tab: &str, query: &str) -> Value {
    let (status, body) = h.get(&format!("/tabs/{tab}/snapshot{query}")).await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn act(h: &common::Harness, tab: &str, action: &str, mut params: Value) -> (u16, Value) {
    params["screenshot"] = json!({ "area": QUIET });
    h.post(&format!("/tabs/{tab}/{action}"), params).await
}

/// A rich-text editor (a contenteditable element) is a text box with a ref:
/// an agent reading the snapshot can type into it.
#[test]
fn a_contenteditable_editor_is_a_textbox_in_the_snapshot() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/second").await;
        h.eval(
            &tab,
            "(() => { const d = document.createElement('div'); d.contentEditable = 'true'; \
             d.setAttribute('aria-label', 'Editor'); d.innerHTML = '<p>Hello</p>'; \
             document.body.append(d); return true; })()",
        )
        .await;
        let text = snapshot(&h, &tab, "").await["snapshot"]
            .as_str()
            .unwrap()
            .to_string();
        let editor = ref_on_line(&text, "textbox \"Editor\"");
        let (status, env) = act(&h, &tab, "type", json!({ "ref": editor, "text": " world" })).await;
        assert_eq!(status, 200, "{env}");
        assert_eq!(
            h.eval(
                &tab,
                "document.querySelector('[contenteditable]').textContent"
            )
            .await,
            "Hello world"
        );
    });
}

#[test]
fn snapshot_lists_a_labelled_form_with_refs() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/form").await;
        let body = snapshot(h, &tab, "").await;
        let text = body["snapshot"].as_str().unwrap();
        assert!(body["url"].as_str().unwrap().ends_with("/form"), "{body}");
        assert_eq!(body["truncated"], false);
        assert_eq!(body["hasMore"], false);
        assert_eq!(
            body["totalChars"].as_u64().unwrap() as usize,
            text.chars().count()
        );
        assert!(text.contains("- heading \"Sign up\" [level=1]"), "{text}");
        let email = text
            .lines()
            .find(|l| l.contains("textbox \"Email\""))
            .expect(text);
        assert!(
            email.contains("\"old@example.com\""),
            "value shown: {email}"
        );
        for needle in [
            "textbox \"Email\"",
            "textbox \"Name\"",
            "checkbox \"I agree\"",
            "button \"Submit\"",
            "combobox \"Country\"",
            "button \"Far button\"",
        ] {
            let r = ref_on_line(text, needle);
            assert!(r.starts_with('e'), "{needle}: {r}");
        }
        // Hidden elements are not in the tree; a field named like a picker
        // is offered like any other.
        assert!(!text.contains("Hidden"), "{text}");
        assert!(text.contains("Pick a date"), "{text}");
        let refs = text.matches(" [e").count();
        assert_eq!(body["refsCount"].as_u64().unwrap() as usize, refs, "{text}");
        assert!(refs >= 7, "{text}");

        // The same elements keep their numbers in the next snapshot.
        let again = snapshot(h, &tab, "").await;
        let again = again["snapshot"].as_str().unwrap();
        assert_eq!(
            ref_on_line(text, "button \"Submit\""),
            ref_on_line(again, "button \"Submit\"")
        );

        // JSON: the Aleph shape, with boxes for elements with refs.
        let json_body = snapshot(h, &tab, "?format=json").await;
        assert_eq!(json_body["page_title"], "Form");
        assert!(json_body["page_url"].as_str().unwrap().ends_with("/form"));
        let mut flat = Vec::new();
        fn walk(v: &Value, out: &mut Vec<Value>) {
            for e in v.as_array().into_iter().flatten() {
                out.push(e.clone());
                walk(&e["children"], out);
            }
        }
        walk(&json_body["elements"], &mut flat);
        let submit = flat
            .iter()
            .find(|e| e["role"] == "button" && e["name"] == "Submit")
            .expect("submit in json");
        assert_eq!(
            submit["ref_id"].as_str().unwrap(),
            ref_on_line(text, "button \"Submit\"")
        );
        let (x, y) = h.center(&tab, "#submit").await;
        let b = &submit["bounds"];
        let (bx, by, bw, bh) = (
            b["x"].as_f64().unwrap(),
            b["y"].as_f64().unwrap(),
            b["width"].as_f64().unwrap(),
            b["height"].as_f64().unwrap(),
        );
        assert!(
            bx < x && x < bx + bw && by < y && y < by + bh,
            "bounds {b} vs centre {x},{y}"
        );
        let email = flat
            .iter()
            .find(|e| e["role"] == "textbox" && e["name"] == "Email")
            .unwrap();
        assert_eq!(email["value"], "old@example.com");

        // includeScreenshot adds the labelled capture.
        let with_shot = snapshot(h, &tab, "?includeScreenshot=true").await;
        let (w, hgt, _) = common::decode_screenshot(&with_shot["screenshot"]);
        assert!(w > 100 && hgt > 100);

        for bad in [
            "?offset=abc",
            "?format=xml",
            "?includeScreenshot=maybe",
            "?format=json&offset=10",
            "?source=ax",
        ] {
            let (status, body) = h.get(&format!("/tabs/{tab}/snapshot{bad}")).await;
            assert_eq!(status, 400, "{bad}: {body}");
            assert!(
                body["error"].as_str().is_some_and(|e| !e.is_empty()),
                "{body}"
            );
        }
        let (status, _) = h.get("/tabs/tab_nope/snapshot").await;
        assert_eq!(status, 404);
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

/// The lines of a text snapshot that carry a ref, unindented.
fn ref_lines(snapshot: &str) -> Vec<String> {
    snapshot
        .lines()
        .filter(|l| l.contains(" [e") || l.contains(" [f"))
        .map(|l| l.trim().trim_end_matches(':').to_string())
        .collect()
}

/// The tree built from the DOM (the default, several times faster) says
/// what the browser's own accessibility tree says about everything an agent
/// can act on: the same roles, names, values and states, under the same
/// refs, on a page of ARIA's naming rules, the form and the frames.
#[test]
fn the_dom_built_tree_agrees_with_the_accessibility_tree() {
    let (h, _g) = shared();
    block_on(async {
        for page in ["/aria", "/form", "/frames"] {
            let tab = h.tab_on(page).await;
            let read = |source: &'static str| {
                let tab = tab.clone();
                async move {
                    common::eventually(Duration::from_secs(10), || async {
                        let body = snapshot(h, &tab, source).await;
                        let text = body["snapshot"].as_str().unwrap().to_string();
                        // Frames load after the top document.
                        (page != "/frames" || text.contains("Cross button")).then_some(text)
                    })
                    .await
                    .expect("the snapshot")
                }
            };
            let dom = read("").await;
            let accessibility = read("?source=accessibility").await;
            // The browser calls a <summary> a disclosure triangle, and
            // does not say a checkbox is required.
            let accessibility = accessibility.replace("DisclosureTriangle", "button");
            let dom = dom.replace("[e16] [required]", "[e16]");
            assert_eq!(
                ref_lines(&dom),
                ref_lines(&accessibility),
                "{page}: DOM-built\n{dom}\nthe browser's\n{accessibility}"
            );
            assert!(ref_lines(&dom).len() >= 8, "{page}: {dom}");
            h.delete(&format!("/tabs/{tab}")).await;
        }
        // What the DOM-built tree reads on the ARIA page, line by line.
        let tab = h.tab_on("/aria").await;
        let text = snapshot(h, &tab, "").await["snapshot"]
            .as_str()
            .unwrap()
            .to_string();
        for line in [
            "- navigation \"Main\":",
            "- link \"About us\" [e",
            "- text: \"Welcome to the best shop.\"",
            "- region \"Filters\":",
            "- group \"Size\":",
            "- radio \"Small\" [e",
            "- searchbox \"Search\" [e",
            "- spinbutton \"Quantity\" [e",
            "- textbox \"Coupon code\" [e",
            "- textbox \"Gift note\" [e",
            "- textbox \"Zip code\" [e",
            "- textbox \"Pin\" [e",
            "- checkbox \"News\" [e",
            "- button \"Apply\" [e",
            "- button \"Cart 3\" [e",
            "- checkbox \"Mixed\" [e",
            "- tab \"First tab\" [e",
            "- button \"Send\" [e",
            "- button \"Reset\" [e",
            "- button \"Visible inside\" [e",
            "- link \"A link with nested words\" [e",
            "- link \"Home page\" [e",
            "- link \"Open the map\" [e",
            "- button \"Move to trash\" [e",
            "- textbox \"Shadow city\" [e",
            "- textbox \"Shadow zip\" [e",
            "- contentinfo:",
        ] {
            assert!(text.contains(line), "{line:?} in\n{text}");
        }
        for state in [
            "[checked]",
            "[disabled]",
            "[pressed]",
            "[checked=mixed]",
            "[selected]",
            "[required]",
        ] {
            assert!(text.contains(state), "{state} in\n{text}");
        }
        assert!(
            text.contains(": \"••••\""),
            "a password shows as dots:\n{text}"
        );
        assert!(!text.contains("1234"), "{text}");
        for gone in ["Gone", "Aria gone", "Hidden gone", "Invisible"] {
            assert!(!text.contains(&format!("\"{gone}")), "{gone} in\n{text}");
        }
        // A label around its control names it without saying it twice;
        // around a hidden one (a custom checkbox) its text stays.
        assert!(!text.contains("- text: \"Small\""), "{text}");
        assert!(text.contains("- text: \"Remember me\""), "{text}");
        // A password is never said, not even in its cell's name; a closed
        // <details> shows its summary only; `display: contents` splits no
        // text.
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("Closed answer"), "{text}");
        assert!(text.contains("- text: \"Price: $5 each\""), "{text}");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn refs_click_fill_and_type_their_own_elements() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/form").await;
        let text = snapshot(h, &tab, "").await["snapshot"]
            .as_str()
            .unwrap()
            .to_string();
        let email = ref_on_line(&text, "textbox \"Email\"");
        let name = ref_on_line(&text, "textbox \"Name\"");
        let agree = ref_on_line(&text, "checkbox \"I agree\"");
        let submit = ref_on_line(&text, "button \"Submit\"");

        // fill replaces the value and fires input and change.
        let (status, body) = act(
            h,
            &tab,
            "fill",
            json!({ "ref": email, "text": "new@example.org" }),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            h.eval(&tab, "document.getElementById('email').value").await,
            "new@example.org"
        );
        let log = h.eval(&tab, "window.log.join(',')").await;
        assert!(
            log.as_str().unwrap().contains("input:email")
                && log.as_str().unwrap().contains("change:email"),
            "{log}"
        );

        // type appends.
        let (status, body) =
            act(h, &tab, "type", json!({ "ref": name, "text": " Lovelace" })).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            h.eval(&tab, "document.getElementById('name').value").await,
            "Ada Lovelace"
        );

        // fill with "" clears.
        let (status, body) = act(h, &tab, "fill", json!({ "ref": name, "text": "" })).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            h.eval(&tab, "document.getElementById('name').value").await,
            ""
        );

        let (status, body) = act(h, &tab, "click", json!({ "ref": agree })).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            h.eval(&tab, "document.getElementById('agree').checked")
                .await,
            true
        );

        let (status, body) = act(h, &tab, "click", json!({ "ref": submit })).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            h.eval(&tab, "document.getElementById('out').textContent")
                .await,
            "submitted new@example.org"
        );

        // fill on a checkbox is refused, naming why.
        let (status, body) = act(h, &tab, "fill", json!({ "ref": agree, "text": "x" })).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["code"], "ELEMENT_NOT_INTERACTABLE", "{body}");

        // A ref that was never handed out, and one that is malformed.
        let (status, body) = act(h, &tab, "click", json!({ "ref": "e999999" })).await;
        assert_eq!(status, 400, "{body}");
        let (status, body) = act(h, &tab, "click", json!({ "ref": "button" })).await;
        assert_eq!(status, 400, "{body}");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn stale_refs_answer_409_and_act_on_nothing() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/form").await;
        let text = snapshot(h, &tab, "").await["snapshot"]
            .as_str()
            .unwrap()
            .to_string();
        let submit = ref_on_line(&text, "button \"Submit\"");

        // The element is replaced by a look-alike at the same place.
        h.eval(&tab, "(() => { const old = document.getElementById('submit'); const b = document.createElement('button'); b.id = 'submit'; b.type = 'button'; b.textContent = 'Submit'; b.onclick = () => window.log.push('lookalike clicked'); old.replaceWith(b); })()").await;
        let (status, body) = act(h, &tab, "click", json!({ "ref": submit })).await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(body["code"], "STALE_REF");
        assert!(
            body["error"].as_str().unwrap().contains("snapshot"),
            "{body}"
        );
        assert_eq!(
            h.eval(&tab, "window.log.join(',')").await,
            "",
            "nothing was clicked"
        );

        // After navigation every old ref is stale, even where the new page
        // has the same element.
        let fresh = snapshot(h, &tab, "").await["snapshot"]
            .as_str()
            .unwrap()
            .to_string();
        let agree = ref_on_line(&fresh, "checkbox \"I agree\"");
        let (status, body) = h
            .post(
                &format!("/tabs/{tab}/navigate"),
                json!({ "url": h.url("/form"), "screenshot": { "area": QUIET } }),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = act(h, &tab, "click", json!({ "ref": agree })).await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(body["code"], "STALE_REF");
        assert_eq!(
            h.eval(&tab, "document.getElementById('agree').checked")
                .await,
            false
        );

        // The new snapshot numbers the new page's elements afresh.
        let newer = snapshot(h, &tab, "").await["snapshot"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(number_of(&ref_on_line(&newer, "checkbox \"I agree\"")) > number_of(&agree));
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn selectors_scroll_into_view_and_fail_loudly() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/form").await;
        assert_eq!(h.eval(&tab, "scrollY").await, 0);
        let (status, body) = act(h, &tab, "click", json!({ "selector": "#far" })).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            h.eval(&tab, "document.getElementById('far').textContent")
                .await,
            "far clicked"
        );
        assert!(
            h.eval(&tab, "scrollY").await.as_f64().unwrap() > 1000.0,
            "scrolled into view"
        );

        let cases = [
            (json!({ "selector": "#nope" }), 404, "SELECTOR_NOT_FOUND"),
            (json!({ "selector": "#hidden" }), 400, "ELEMENT_NOT_VISIBLE"),
            (json!({ "selector": "##" }), 400, "INVALID_REQUEST"),
            (
                json!({ "selector": "#far", "ref": "e1" }),
                400,
                "INVALID_REQUEST",
            ),
        ];
        for (params, status, code) in cases {
            let (got, body) = act(h, &tab, "click", params.clone()).await;
            assert_eq!(
                (got, body["code"].as_str().unwrap_or("")),
                (status, code),
                "{params}: {body}"
            );
        }
        // Covered: the click would reach the overlay, so it is refused.
        h.eval(&tab, "scrollTo(0, 0)").await;
        let (status, body) = act(h, &tab, "click", json!({ "selector": "#covered" })).await;
        assert_eq!(
            (status, body["code"].as_str().unwrap_or("")),
            (400, "ELEMENT_NOT_INTERACTABLE"),
            "{body}"
        );
        assert_eq!(
            h.eval(&tab, "window.log.includes('covered clicked')").await,
            false
        );

        // hover and scroll take targets too.
        let (status, body) = act(h, &tab, "hover", json!({ "selector": "#submit" })).await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = act(
            h,
            &tab,
            "fill",
            json!({ "selector": "#email", "text": "sel@example.com" }),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            h.eval(&tab, "document.getElementById('email').value").await,
            "sel@example.com"
        );
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn state_indices_are_refs_and_drive_actions() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/form").await;
        let (status, state) = h.get(&format!("/tabs/{tab}/state")).await;
        assert_eq!(status, 200, "{state}");
        assert_eq!(state["title"], "Form");
        assert!(state["url"].as_str().unwrap().ends_with("/form"));
        assert!(state["textContent"].as_str().unwrap().contains("Sign up"));
        assert!(state["viewportHeight"].as_f64().unwrap() > 0.0);
        assert!(state["scrollHeight"].as_f64().unwrap() > 2000.0);
        let elements = state["elements"].as_array().unwrap();
        let by_id = |id: &str| {
            elements
                .iter()
                .find(|e| e["id"] == id)
                .unwrap_or_else(|| panic!("{id} in {state}"))
                .clone()
        };
        let email = by_id("email");
        assert_eq!(email["tag"], "input");
        assert_eq!(email["type"], "email");
        assert_eq!(email["value"], "old@example.com");
        assert_eq!(by_id("name")["placeholder"], "Your name");
        assert!(
            elements.iter().all(|e| e["id"] != "hidden"),
            "invisible elements are left out"
        );
        // A password's value is not said, only its length.
        h.eval(&tab, "(() => { const p = document.createElement('input'); p.type = 'password'; \
                      p.id = 'pw'; p.value = 'Sekrit123'; document.body.prepend(p); return true; })()")
            .await;
        let (_, with_password) = h.get(&format!("/tabs/{tab}/state")).await;
        let pw = with_password["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == "pw")
            .unwrap_or_else(|| panic!("pw in {with_password}"));
        assert_eq!(pw["value"], "•••••••••");
        assert!(!with_password.to_string().contains("Sekrit123"));
        h.eval(&tab, "document.getElementById('pw').remove()").await;

        // One id space: the snapshot's ref for the same element has the same number.
        let text = snapshot(h, &tab, "").await["snapshot"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(
            number_of(&ref_on_line(&text, "checkbox \"I agree\"")),
            by_id("agree")["index"].as_u64().unwrap()
        );

        let (status, body) = h.post(&format!("/tabs/{tab}/state/action"), json!({ "type": "click", "index": by_id("agree")["index"], "screenshot": { "area": QUIET } })).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["success"], true);
        assert_eq!(
            h.eval(&tab, "document.getElementById('agree').checked")
                .await,
            true
        );

        let (status, body) = h.post(&format!("/tabs/{tab}/state/action"), json!({ "action": { "type": "input_text", "index": by_id("name")["index"], "text": "Grace" }, "screenshot": { "area": QUIET } })).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            h.eval(&tab, "document.getElementById('name').value").await,
            "Grace"
        );
        let (status, body) = h.post(&format!("/tabs/{tab}/state/action"), json!({ "type": "input_text", "index": by_id("name")["index"], "text": " Hopper", "clear": false, "screenshot": { "area": QUIET } })).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            h.eval(&tab, "document.getElementById('name').value").await,
            "Grace Hopper"
        );

        let (status, body) = h.post(&format!("/tabs/{tab}/state/action"), json!({ "type": "scroll", "down": true, "pages": 1, "screenshot": { "area": QUIET } })).await;
        assert_eq!(status, 200, "{body}");
        let height = state["viewportHeight"].as_f64().unwrap();
        let scrolled = common::eventually(Duration::from_secs(3), || async {
            let y = h.eval(&tab, "scrollY").await.as_f64().unwrap();
            (y >= height * 0.9).then_some(y)
        })
        .await;
        assert!(scrolled.is_some(), "scrolled about one page");

        for bad in [
            json!({}),
            json!({ "type": "click" }),
            json!({ "type": "teleport" }),
            json!({ "type": "scroll", "pages": -1 }),
        ] {
            let (status, body) = h
                .post(&format!("/tabs/{tab}/state/action"), bad.clone())
                .await;
            assert_eq!(status, 400, "{bad}: {body}");
        }
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

#[test]
fn large_snapshots_page_with_the_tail_on_every_window() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/big?n=3000").await;
        let first = snapshot(h, &tab, "").await;
        let total = first["totalChars"].as_u64().unwrap() as usize;
        assert!(total > 160_000, "{total}");
        assert_eq!(first["truncated"], true);
        assert_eq!(first["hasMore"], true);
        let text = first["snapshot"].as_str().unwrap();
        assert!(text.chars().count() <= 80_000);
        assert!(text.contains("Item 00000"));
        // The tail (footer link) is on every window.
        assert!(text.contains("link \"Next page\""), "tail missing");
        let mut offset = first["nextOffset"].as_u64().unwrap();
        let mut windows = 1;
        let mut last_item = String::new();
        loop {
            let w = snapshot(h, &tab, &format!("?offset={offset}")).await;
            windows += 1;
            let s = w["snapshot"].as_str().unwrap();
            assert!(s.chars().count() <= 80_000);
            assert!(
                s.contains("link \"Next page\""),
                "tail missing from window {windows}"
            );
            assert_eq!(w["totalChars"].as_u64().unwrap() as usize, total);
            if let Some(l) = s.lines().rev().find(|l| l.contains("link \"Item ")) {
                last_item = l.to_string();
            }
            match w["nextOffset"].as_u64() {
                Some(next) => {
                    assert!(next > offset);
                    assert_eq!(w["hasMore"], true);
                    offset = next;
                }
                None => {
                    assert_eq!(w["hasMore"], false);
                    break;
                }
            }
            assert!(windows < 20, "pagination does not end");
        }
        assert!(windows >= 3, "{windows}");
        assert!(last_item.contains("Item 02999"), "{last_item}");

        // Any action invalidates the cache: paging on would be inconsistent.
        let (status, _) = act(h, &tab, "scroll", json!({ "delta_y": 100 })).await;
        assert_eq!(status, 200);
        let (status, body) = h
            .get(&format!("/tabs/{tab}/snapshot?offset={offset}"))
            .await;
        assert_eq!(status, 409, "{body}");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

/// Without site isolation every frame is in its page's renderer.
#[test]
fn frames_and_shadow_roots_are_reachable() {
    let (h, _g) = common::deterministic();
    block_on(async {
        let tab = frames_and_shadow_roots(h).await;
        h.delete(&format!("/tabs/{tab}")).await;
    });
}

/// With site isolation (the default) the cross-site frame renders in a
/// process of its own, reached through its own target: the same refs,
/// clicks, typing and boxes.
#[test]
fn frames_rendered_out_of_process_are_reachable() {
    let (isolated, _g) = shared();
    block_on(async {
        let tab = frames_and_shadow_roots(isolated).await;
        assert_eq!(
            isolated.out_of_process_frames(&tab),
            1,
            "the cross-site frame is out of process"
        );
        // Its requests are captured with the page's.
        let (_, live) = isolated.get(&format!("/tabs/{tab}/network")).await;
        assert!(
            live.to_string().contains("item=Cross"),
            "the cross-site frame's fetch: {live}"
        );
        // Boxes of refs in the out-of-process frame are in page coordinates.
        let body = snapshot(isolated, &tab, "?format=json").await;
        let text = body.to_string();
        assert!(text.contains("Cross clicked"), "{text}");
        let (x, y) = isolated.center(&tab, "#cross").await;
        let cross = find_named(&body["elements"], "Cross clicked").expect("the cross button");
        let bx = cross["bounds"]["x"].as_f64().unwrap();
        let by = cross["bounds"]["y"].as_f64().unwrap();
        assert!(
            (bx - x).abs() < 200.0 && (by - y).abs() < 60.0 && by > 0.0,
            "the button ({bx}, {by}) lies inside its frame (centre {x}, {y})"
        );
        // A tagged click there saves the frame's fetch, with the body its
        // own renderer holds.
        let (cx, cy) = (
            bx + cross["bounds"]["width"].as_f64().unwrap() / 2.0,
            by + cross["bounds"]["height"].as_f64().unwrap() / 2.0,
        );
        let (status, envelope) = isolated
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": cx, "y": cy, "network": { "tag": "oopif-body", "types": ["Fetch"] } }),
            )
            .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(envelope["network"]["completed"], 1, "{envelope}");
        let body = common::eventually(Duration::from_secs(5), || async {
            let (_, saved) = isolated
                .get("/network?tag=^oopif-body$&include_body=true")
                .await;
            saved.to_string().contains("widget").then_some(saved)
        })
        .await;
        assert!(
            body.is_some(),
            "the out-of-process frame's response body is saved"
        );

        // The connection that carries the frame's session breaks: the frame
        // is followed again on a new one, and still read and captured.
        let targets = isolated
            .server
            .app
            .tab(&wabp_core::Caller::anonymous(), &tab)
            .unwrap()
            .session
            .frame_targets()
            .unwrap()
            .clone();
        let before = targets.roots();
        targets.navigator().disconnect().await;
        let again = common::eventually(Duration::from_secs(10), || async {
            let now = targets.roots();
            (!now.is_empty() && now != before).then_some(now)
        })
        .await;
        assert!(again.is_some(), "the frame target is followed again");
        let text = snapshot(isolated, &tab, "").await.to_string();
        assert!(text.contains("Cross clicked"), "{text}");
        let (status, envelope) = isolated
            .post(
                &format!("/tabs/{tab}/click"),
                json!({ "x": cx, "y": cy, "network": { "tag": "oopif-again", "types": ["Fetch"] } }),
            )
            .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(envelope["network"]["completed"], 1, "{envelope}");
        isolated.delete(&format!("/tabs/{tab}")).await;
    });
}

fn find_named<'a>(elements: &'a Value, name: &str) -> Option<&'a Value> {
    for element in elements.as_array()? {
        if element["name"] == name {
            return Some(element);
        }
        if let Some(found) = find_named(&element["children"], name) {
            return Some(found);
        }
    }
    None
}

/// The first event of `kind` in an action's envelope (panics if none).
fn event_of(envelope: &Value, kind: &str) -> Value {
    envelope["events"]
        .as_array()
        .and_then(|events| events.iter().find(|e| e["type"] == kind))
        .unwrap_or_else(|| panic!("{kind} in {}", envelope["events"]))
        .clone()
}

/// Snapshot, click and type across a same-site frame, a cross-site frame
/// and an open shadow root; the tab.
async fn frames_and_shadow_roots(h: &common::Harness) -> String {
    {
        let tab = h.tab_on("/frames").await;
        // Frames load after the top document; wait for both buttons.
        let text = common::eventually(Duration::from_secs(10), || async {
            let body = snapshot(h, &tab, "").await;
            let text = body["snapshot"].as_str().unwrap().to_string();
            (text.contains("Same button") && text.contains("Cross button")).then_some(text)
        })
        .await
        .expect("both frames in the snapshot");
        let same = ref_on_line(&text, "button \"Same button\"");
        let cross = ref_on_line(&text, "button \"Cross button\"");
        let shadow = ref_on_line(&text, "button \"Shadow button\"");
        assert!(
            same.starts_with('f') && cross.starts_with('f'),
            "frame-qualified: {same} {cross}"
        );
        assert_ne!(same[..2], cross[..2], "different frames");
        assert!(shadow.starts_with('e'), "{shadow}");
        assert!(text.contains("[frame=f"), "{text}");

        for r in [&same, &cross, &shadow] {
            let (status, body) = act(h, &tab, "click", json!({ "ref": r })).await;
            assert_eq!(status, 200, "{r}: {body}");
        }
        let after = snapshot(h, &tab, "").await["snapshot"]
            .as_str()
            .unwrap()
            .to_string();
        for label in ["Same clicked", "Cross clicked", "shadow clicked"] {
            assert!(after.contains(label), "{label} in\n{after}");
        }
        // Typing into a cross-site frame's field by ref.
        let input = ref_on_line(&after, "textbox \"Cross input\"");
        let (status, body) = act(h, &tab, "fill", json!({ "ref": input, "text": "inside" })).await;
        assert_eq!(status, 200, "{body}");
        let again = snapshot(h, &tab, "").await["snapshot"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            again
                .lines()
                .any(|l| l.contains("Cross input") && l.contains("\"inside\"")),
            "{again}"
        );
        // A `<select>` inside the cross-site frame: intercepted there,
        // answered there.
        let select = ref_on_line(&again, "combobox \"Cross select\"");
        let (status, body) = act(h, &tab, "click", json!({ "ref": select })).await;
        assert_eq!(status, 200, "{body}");
        let open = event_of(&body, "select_open");
        let id = open["data"]["id"].as_str().unwrap();
        let (status, answer) = h
            .post(&format!("/select/{id}"), json!({ "indices": [1] }))
            .await;
        assert_eq!(status, 200, "{answer}");
        let chosen = snapshot(h, &tab, "").await["snapshot"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            chosen
                .lines()
                .any(|l| l.contains("Cross select") && l.contains("two")),
            "{chosen}"
        );
        // A file input inside the cross-site frame: its chooser is
        // intercepted, and the file is set in that frame.
        let file_input = ref_on_line(&chosen, "Cross file");
        let (status, body) = act(h, &tab, "click", json!({ "ref": file_input })).await;
        assert_eq!(status, 200, "{body}");
        let chooser = event_of(&body, "file_chooser");
        let upload = common::temp_dir("frame-upload").join("note.txt");
        std::fs::write(&upload, "hello").unwrap();
        let id = chooser["data"]["id"].as_str().unwrap();
        let (status, answer) = h
            .post(
                &format!("/file-chooser/{id}"),
                json!({ "files": [upload.display().to_string()] }),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
        // /state reaches into the frames, with the refs' numbers and the
        // frame's label; an index there drives an action in that frame.
        let (status, state) = h.get(&format!("/tabs/{tab}/state")).await;
        assert_eq!(status, 200, "{state}");
        let elements = state["elements"].as_array().unwrap();
        let in_frame = elements
            .iter()
            .find(|e| e["index"] == number_of(&input))
            .unwrap_or_else(|| panic!("{input} in /state: {state}"));
        assert_eq!(
            in_frame["frame"],
            &input[..input.rfind('e').unwrap()],
            "{in_frame}"
        );
        assert!(in_frame["frameUrl"].is_string(), "{in_frame}");
        assert!(
            elements.iter().any(|e| e["index"] == number_of(&same)),
            "the same-site frame's button: {state}"
        );
        let (status, body) = h
            .post(
                &format!("/tabs/{tab}/state/action"),
                json!({ "type": "input_text", "index": number_of(&input), "text": "by index", "screenshot": { "area": QUIET } }),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        let typed = snapshot(h, &tab, "").await["snapshot"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            typed
                .lines()
                .any(|l| l.contains("Cross input") && l.contains("\"by index\"")),
            "{typed}"
        );
        // The screenshot's markup outlines the frames' elements too: around
        // the cross-site frame's button, the marked image differs from the
        // plain one.
        let json_body = snapshot(h, &tab, "?format=json").await;
        let cross_button =
            find_named(&json_body["elements"], "Cross clicked").expect("the cross button");
        let b = &cross_button["bounds"];
        let (bx, by, bw, bh) = (
            b["x"].as_f64().unwrap(),
            b["y"].as_f64().unwrap(),
            b["width"].as_f64().unwrap(),
            b["height"].as_f64().unwrap(),
        );
        let image = |query: &'static str| {
            let url = format!(
                "{}/tabs/{tab}/screenshot?cursor=false&{query}",
                h.server.api
            );
            let http = h.http.clone();
            async move {
                common::decode_webp(&http.get(url).send().await.unwrap().bytes().await.unwrap())
            }
        };
        let (w, _, plain) =
            image("disable_markup=clickable,typeable,scrollable,grid,selected").await;
        let (_, _, marked) = image("disable_markup=grid").await;
        let mut differing = 0;
        for y in (by - 3.0).max(0.0) as u32..(by + bh + 3.0) as u32 {
            for x in (bx - 3.0).max(0.0) as u32..(bx + bw + 3.0) as u32 {
                let i = ((y * w + x) * 4) as usize;
                if (0..3).any(|c| plain[i + c].abs_diff(marked[i + c]) > 40) {
                    differing += 1;
                }
            }
        }
        assert!(
            differing > 20,
            "the frame's button is outlined: {differing} pixels differ at {b}"
        );
        // A selector reaches into an open shadow root.
        let (status, body) = act(h, &tab, "click", json!({ "selector": "#shadow-btn" })).await;
        assert_eq!(status, 200, "{body}");
        tab
    }
}

#[test]
fn users_get_their_own_cookies_and_tabs() {
    let (h, _g) = shared();
    block_on(async {
        let open = |user: &'static str| async move {
            let (status, tab) = h.post("/tabs", json!({ "userId": user })).await;
            assert_eq!(status, 201, "{tab}");
            let id = tab["id"].as_str().unwrap().to_string();
            let (status, body) = h
                .post(&format!("/tabs/{id}/navigate"), json!({ "url": h.url("/api-page"), "userId": user, "screenshot": { "area": QUIET } }))
                .await;
            assert_eq!(status, 200, "{body}");
            id
        };
        let alice = open("alice").await;
        let bob = open("bob").await;
        let (status, body) = h
            .post(
                &format!("/tabs/{alice}/execute?userId=alice"),
                json!({ "script": "document.cookie = 'who=alice; path=/'; document.cookie" }),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        let cookie = |tab: String, user: &'static str| async move {
            let (status, body) = h
                .post(&format!("/tabs/{tab}/execute"), json!({ "userId": user, "script": "fetch('/api/whoami').then(r => r.json()).then(j => j.cookie)" }))
                .await;
            assert_eq!(status, 200, "{body}");
            body["result"]["value"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(cookie(alice.clone(), "alice").await, "who=alice");
        assert_eq!(
            cookie(bob.clone(), "bob").await,
            "",
            "bob must not see alice's cookie"
        );

        // Tabs are listed only for their user, and hidden from others.
        let ids = |body: Value| {
            body.as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        let (_, listed) = h.get("/tabs?userId=alice").await;
        assert_eq!(ids(listed), vec![alice.clone()]);
        let (_, listed) = h.get("/tabs").await;
        assert!(!ids(listed.clone()).contains(&alice) && !ids(listed).contains(&bob));
        let (status, body) = h.get(&format!("/tabs/{alice}?userId=bob")).await;
        assert_eq!(status, 404, "{body}");
        let (status, body) = h.get(&format!("/tabs/{alice}/snapshot")).await;
        assert_eq!(status, 404, "no userId, no access: {body}");
        // However its id is spelled: %74 is "t", decoded after routing.
        let encoded = format!("%74{}", &alice[1..]);
        for who in ["?userId=bob", ""] {
            let (status, body) = h
                .post(
                    &format!("/tabs/{encoded}/execute{who}"),
                    json!({ "script": "document.title = 'taken'" }),
                )
                .await;
            assert_eq!(status, 404, "encoded id {who}: {body}");
        }
        let (status, body) = h
            .post(
                &format!("/tabs/{encoded}/execute?userId=alice"),
                json!({ "script": "document.title" }),
            )
            .await;
        assert_eq!(status, 200, "the owner, encoded id: {body}");
        assert_ne!(body["result"]["value"], "taken");
        let (status, body) = h.get("/tabs?userId=bad%20id").await;
        assert_eq!(status, 400, "{body}");
        let (status, body) = h
            .post("/tabs?userId=alice", json!({ "userId": "bob" }))
            .await;
        assert_eq!(status, 400, "{body}");

        for (tab, user) in [(alice, "alice"), (bob, "bob")] {
            let (status, body) = h.delete(&format!("/tabs/{tab}?userId={user}")).await;
            assert_eq!(status, 200, "{body}");
        }
    });
}

/// History, saved network calls, exports and downloads are per user too:
/// another user's records are invisible (404 by id) and untouched by deletes.
#[test]
fn users_see_only_their_own_history_network_and_downloads() {
    let (h, _g) = shared();
    block_on(async {
        let (status, tab) = h.post("/tabs", json!({ "userId": "hist-alice" })).await;
        assert_eq!(status, 201, "{tab}");
        let alice = tab["id"].as_str().unwrap().to_string();
        let (status, tab) = h.post("/tabs", json!({ "userId": "hist-bob" })).await;
        assert_eq!(status, 201, "{tab}");
        let bob = tab["id"].as_str().unwrap().to_string();

        // Alice navigates with a network tag, then downloads a file.
        let (status, env) = h
            .post(
                &format!("/tabs/{alice}/navigate?userId=hist-alice"),
                json!({ "url": h.url("/events"), "network": { "tag": "alice-net" } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        let alice_action = env["action_id"].as_str().unwrap().to_string();
        let (status, env) = h
            .post(
                &format!("/tabs/{alice}/click?userId=hist-alice"),
                json!({ "selector": "#download", "screenshot": { "area": QUIET }, "wait_until": { "type": "time", "duration_ms": 1500 } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");
        let download = env["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["type"] == "download_started")
            .map(|e| e["data"]["download_id"].as_str().unwrap().to_string())
            .expect("download_started");
        let (status, env) = h
            .post(
                &format!("/tabs/{bob}/navigate?userId=hist-bob"),
                json!({ "url": h.url("/"), "screenshot": { "area": QUIET } }),
            )
            .await;
        assert_eq!(status, 200, "{env}");

        let tabs_in = |body: &Value, list: &str| -> Vec<String> {
            body[list]
                .as_array()
                .unwrap_or_else(|| panic!("{list}: {body}"))
                .iter()
                .map(|r| r["tab_id"].as_str().unwrap_or_default().to_string())
                .collect()
        };
        for (user, own, other) in [("hist-alice", &alice, &bob), ("hist-bob", &bob, &alice)] {
            let (_, actions) = h.get(&format!("/history/actions?userId={user}")).await;
            let tabs = tabs_in(&actions, "actions");
            assert!(tabs.contains(own), "{user} sees their actions: {actions}");
            assert!(!tabs.contains(other), "{user} sees no other user's actions");
            let (_, events) = h.get(&format!("/history/events?userId={user}")).await;
            assert!(
                !tabs_in(&events, "events").contains(other),
                "{user}: {events}"
            );
        }
        let (_, actions) = h.get("/history/actions").await;
        let tabs = tabs_in(&actions, "actions");
        assert!(
            !tabs.contains(&alice) && !tabs.contains(&bob),
            "no userId sees neither"
        );

        // By id: another user's action, screenshot and download are not found.
        let (status, body) = h
            .get(&format!("/history/actions/{alice_action}?userId=hist-bob"))
            .await;
        assert_eq!(status, 404, "{body}");
        let (status, body) = h
            .get(&format!(
                "/history/actions/{alice_action}?userId=hist-alice"
            ))
            .await;
        assert_eq!(
            (status, body["user_id"].as_str()),
            (200, Some("hist-alice")),
            "{body}"
        );
        let (status, _) = h
            .get(&format!(
                "/history/actions/{alice_action}/screenshot?userId=hist-bob"
            ))
            .await;
        assert_eq!(status, 404);
        let (status, body) = h
            .get(&format!("/downloads/{download}?userId=hist-bob"))
            .await;
        assert_eq!(status, 404, "{body}");
        let (status, body) = h
            .get(&format!("/downloads/{download}?userId=hist-alice"))
            .await;
        assert_eq!(status, 200, "{body}");
        for who in ["?userId=hist-bob", ""] {
            let (_, list) = h.get(&format!("/downloads{who}")).await;
            assert!(
                !list["downloads"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|d| d["id"] == download.as_str()),
                "{who}: {list}"
            );
        }

        // Saved network calls: only alice reads (or exports) them.
        let (_, calls) = h.get("/network?tag=alice-net&userId=hist-alice").await;
        assert!(calls["total"].as_u64().unwrap() > 0, "{calls}");
        let (_, calls) = h.get("/network?tag=alice-net&userId=hist-bob").await;
        assert_eq!(calls["total"], 0, "{calls}");
        let (_, har) = h.get("/network/har?tag=alice-net&userId=hist-bob").await;
        assert_eq!(har["log"]["entries"].as_array().unwrap().len(), 0, "{har}");
        let (_, session) = h.get("/history/sessions/current").await;
        let session = session["id"].as_str().unwrap().to_string();
        let (_, export) = h
            .get(&format!(
                "/history/sessions/{session}/export?userId=hist-bob"
            ))
            .await;
        assert!(
            !tabs_in(&export, "actions").contains(&alice),
            "export is bob's only"
        );
        assert!(!tabs_in(&export, "network_calls").contains(&alice));
        // Bob can't save alice's tab's calls, nor delete alice's.
        let (status, body) = h
            .post(
                "/network/save",
                json!({ "userId": "hist-bob", "tab_id": alice, "tag": "stolen" }),
            )
            .await;
        assert_eq!(status, 404, "{body}");
        let (_, deleted) = h.delete("/network?tag=alice-net&userId=hist-bob").await;
        assert_eq!(deleted["deleted"], 0, "{deleted}");
        let (status, _) = h.delete("/history?userId=hist-bob").await;
        assert_eq!(status, 200);
        let (_, actions) = h.get("/history/actions?userId=hist-alice").await;
        assert!(
            tabs_in(&actions, "actions").contains(&alice),
            "bob's delete left alice's history"
        );
        let (_, actions) = h.get("/history/actions?userId=hist-bob").await;
        assert_eq!(actions["total"], 0, "bob's history is gone: {actions}");
        let (_, calls) = h.get("/network?tag=alice-net&userId=hist-alice").await;
        assert!(
            calls["total"].as_u64().unwrap() > 0,
            "alice's calls stay: {calls}"
        );

        for (tab, user) in [(alice, "hist-alice"), (bob, "hist-bob")] {
            let (status, body) = h.delete(&format!("/tabs/{tab}?userId={user}")).await;
            assert_eq!(status, 200, "{body}");
        }
    });
}

#[test]
fn session_limits_evict_the_idle_and_refuse_extra_tabs() {
    let (base, _g) = shared();
    block_on(async {
        let server = common::start_server_with(common::temp_dir("limits-plugins"), |o| {
            o.user_limits.max_sessions = 1;
            o.user_limits.max_tabs_per_session = 1;
        })
        .await;
        let h = base.with_server(server);
        let (status, first) = h.post("/tabs", json!({ "userId": "u1" })).await;
        assert_eq!(status, 201, "{first}");
        let (status, body) = h.post("/tabs", json!({ "userId": "u1" })).await;
        assert_eq!(
            (status, body["code"].as_str().unwrap_or("")),
            (429, "LIMIT_REACHED"),
            "{body}"
        );
        // A second user takes the only session slot: u1's idle session closes.
        let (status, second) = h.post("/tabs", json!({ "userId": "u2" })).await;
        assert_eq!(status, 201, "{second}");
        let (_, listed) = h.get("/tabs?userId=u1").await;
        assert_eq!(listed.as_array().unwrap().len(), 0, "{listed}");
        let (status, _) = h
            .get(&format!(
                "/tabs/{}?userId=u1",
                first["id"].as_str().unwrap()
            ))
            .await;
        assert_eq!(status, 404);
        h.server.app.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn json_snapshot_gives_every_element_a_ref() {
    let (h, _g) = shared();
    block_on(async {
        let tab = h.tab_on("/form").await;
        h.eval(&tab, "document.getElementById('name').focus(); true")
            .await;
        let body = snapshot(h, &tab, "?format=json").await;
        let mut flat = Vec::new();
        fn walk(v: &Value, out: &mut Vec<Value>) {
            for e in v.as_array().into_iter().flatten() {
                out.push(e.clone());
                walk(&e["children"], out);
            }
        }
        walk(&body["elements"], &mut flat);
        assert!(flat.len() > 10, "{body}");
        for element in &flat {
            let r = element["ref_id"].as_str();
            assert!(
                r.is_some_and(|r| r.starts_with('e')),
                "no ref_id: {element}"
            );
        }
        assert_eq!(body["refs_count"].as_u64().unwrap() as usize, flat.len());
        // Headings, labels' text and plain text have refs too; text is named
        // by the element that holds it.
        let heading = flat
            .iter()
            .find(|e| e["role"] == "heading" && e["name"] == "Sign up")
            .expect("the heading");
        let heading_ref = heading["ref_id"].as_str().unwrap().to_string();
        assert!(
            heading["bounds"]["width"].as_f64().unwrap() > 10.0,
            "{heading}"
        );
        let label = flat
            .iter()
            .find(|e| e["role"] == "text" && e["name"] == "Email")
            .expect("the label's text");
        let (status, read) = h
            .post(
                &format!("/tabs/{tab}/text"),
                json!({ "ref": label["ref_id"] }),
            )
            .await;
        assert_eq!(status, 200, "{read}");
        assert_eq!(read["text"], "Email");
        // The focused element is named.
        let name = flat
            .iter()
            .find(|e| e["role"] == "textbox" && e["name"] == "Name")
            .unwrap();
        assert_eq!(body["focused_ref"], name["ref_id"], "{body}");
        // The text snapshot keeps refs for what can be acted on.
        let text_snapshot = snapshot(h, &tab, "").await;
        let line = text_snapshot["snapshot"]
            .as_str()
            .unwrap()
            .lines()
            .find(|l| l.contains("heading \"Sign up\""))
            .unwrap()
            .to_string();
        assert!(!line.contains("[e"), "{line}");

        // A heading's ref reads its text, hovers and frames a region screenshot.
        let (status, read) = h
            .post(&format!("/tabs/{tab}/text"), json!({ "ref": heading_ref }))
            .await;
        assert_eq!(status, 200, "{read}");
        assert_eq!(read["text"], "Sign up");
        let (status, hovered) = h
            .post(
                &format!("/tabs/{tab}/hover"),
                json!({ "ref": heading_ref, "screenshot": { "area": "none" } }),
            )
            .await;
        assert_eq!(status, 200, "{hovered}");
        let (status, shot) = h
            .post(
                &format!("/tabs/{tab}/screenshot"),
                json!({ "screenshot": { "area": "region", "region": { "ref": heading_ref } } }),
            )
            .await;
        assert_eq!(status, 200, "{shot}");
        let (w, hgt, _) = common::decode_screenshot(&shot["screenshot_after"]);
        let bounds = &heading["bounds"];
        assert!(
            (w as f64 - bounds["width"].as_f64().unwrap()).abs() <= 2.0
                && (hgt as f64 - bounds["height"].as_f64().unwrap()).abs() <= 2.0,
            "{w}x{hgt} vs {bounds}"
        );
        // A far element is scrolled into view for its region.
        let far = flat
            .iter()
            .find(|e| e["role"] == "button" && e["name"] == "Far button")
            .unwrap();
        let (status, shot) = h
            .post(
                &format!("/tabs/{tab}/screenshot"),
                json!({ "screenshot": { "area": "region", "region": { "ref": far["ref_id"] } } }),
            )
            .await;
        assert_eq!(status, 200, "{shot}");
        let (status, bad) = h
            .post(
                &format!("/tabs/{tab}/screenshot"),
                json!({ "screenshot": { "area": "region", "region": { "ref": 7 } } }),
            )
            .await;
        assert_eq!(status, 400, "{bad}");

        // Stale once the page is gone, like every ref.
        h.post(
            &format!("/tabs/{tab}/navigate"),
            json!({ "url": h.url("/"), "screenshot": { "area": "none" } }),
        )
        .await;
        let (status, stale) = h
            .post(&format!("/tabs/{tab}/text"), json!({ "ref": heading_ref }))
            .await;
        assert_eq!(status, 409, "{stale}");
        let (status, stale) = h
            .post(
                &format!("/tabs/{tab}/screenshot"),
                json!({ "screenshot": { "area": "region", "region": { "ref": heading_ref } } }),
            )
            .await;
        assert_eq!(status, 409, "{stale}");
        h.delete(&format!("/tabs/{tab}")).await;
    });
}
