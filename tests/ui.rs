//! The web UI as a person meets it: loaded in real headless Chromium (a
//! second engine, through the library API, with its pages left running so
//! htmx and the event streams work), against an engine with per-user
//! tokens whose tabs are driven over REST meanwhile.

mod common;

use std::time::{Duration, Instant};

use common::{block_on, eventually, send, temp_dir};
use reqwest::Method;
use serde_json::{Value, json};
use wabp::embed::{BrowserConfig, Tab, Target, Wabp};

const ALICE: &str = "alice-ui-token-0123456789";
const BOB: &str = "bob-ui-token-0123456789";
const ADMIN: &str = "admin-ui-token-0123456789";

/// The engine whose UI is under test, with tokens for alice, bob and an admin.
struct Watched {
    /// `http://127.0.0.1:PORT`
    origin: String,
    api: String,
}

async fn watched_engine() -> Watched {
    let tokens = temp_dir("ui-tokens").join("tokens.toml");
    std::fs::write(
        &tokens,
        format!(
            "[[token]]\ntoken = \"{ALICE}\"\nuser = \"alice\"\nscopes = [\"read\", \"act\", \"script\"]\n\n\
             [[token]]\ntoken = \"{BOB}\"\nuser = \"bob\"\nscopes = [\"read\", \"act\", \"script\"]\n"
        ),
    )
    .unwrap();
    let server = common::start_server_with(temp_dir("ui-plugins"), |o| {
        o.auth_tokens_file = Some(tokens);
        o.auth_token = Some(ADMIN.into());
    })
    .await;
    Watched {
        origin: server.api.trim_end_matches("/api/v1").to_string(),
        api: server.api,
    }
}

/// A browser for the person: its pages run (htmx settles on timers).
async fn viewer() -> Wabp {
    Wabp::launch(BrowserConfig {
        freeze_pages: false,
        session_dir: Some(temp_dir("ui-viewer")),
        ..Default::default()
    })
    .await
    .expect("the viewer's browser starts")
}

async fn eval(tab: &Tab, script: &str) -> Value {
    tab.evaluate(script).await.unwrap_or(Value::Null)
}

/// Waits (bounded) until `script` evaluates to something truthy in the UI.
async fn until(tab: &Tab, what: &str, script: &str) -> Value {
    let value = eventually(Duration::from_secs(20), || async {
        let value = eval(tab, script).await;
        let truthy = !matches!(&value, Value::Null | Value::Bool(false))
            && value != json!(0)
            && value != json!("");
        truthy.then_some(value)
    })
    .await;
    match value {
        Some(value) => value,
        None => {
            let shown = eval(
                tab,
                "location.href + ' | flash: ' + (document.getElementById('flash') || {}).textContent + ' | ' + (document.querySelector('main') || document.body).innerHTML.slice(0, 1500)",
            )
            .await;
            panic!("the UI never showed {what}: {shown}")
        }
    }
}

async fn sign_in(tab: &Tab, origin: &str, token: &str) {
    tab.navigate(&format!("{origin}/ui/login")).await.unwrap();
    until(
        tab,
        "the sign-in form",
        "!!document.querySelector('form.login')",
    )
    .await;
    tab.fill(Target::Selector("input[name=secret]".into()), token)
        .await
        .unwrap();
    tab.click(Target::Selector("form.login button".into()))
        .await
        .unwrap();
    until(
        tab,
        "the sessions page after signing in",
        "location.pathname === '/ui/' && !!document.getElementById('tabs')",
    )
    .await;
}

async fn rest(
    http: &reqwest::Client,
    method: Method,
    url: String,
    body: Option<Value>,
    token: &str,
) -> (u16, Value) {
    send(http, method, &url, body, Some(token)).await
}

/// A page that is one big text field counting the presses on it.
const FIELD_PAGE: &str = "data:text/html,<title>field</title><body style='margin:0'>\
    <input id=field autofocus style='position:fixed;inset:0;width:100vw;height:100vh;font-size:40px'>\
    <script>window.presses=0;document.getElementById('field').addEventListener('mousedown',()=>window.presses++)</script>";

/// A page with a button that opens a confirm dialog and says what it answered.
const DIALOG_PAGE: &str = "data:text/html,<title>dialogs</title>\
    <button id=ask style='width:300px;height:100px' onclick=\"console.warn('asking', 'token=s3cr3t-value'); document.title=confirm('Proceed?')?'yes':'no'\">ask</button>\
    <select id=colour><option>red</option><option>green</option><option>blue</option></select>";

#[test]
fn a_person_watches_answers_takes_over_and_replays_in_a_real_browser() {
    block_on(async {
        let watched = watched_engine().await;
        let http = reqwest::Client::new();
        let person = viewer().await;
        let ui = person.open_tab("about:blank").await.unwrap();

        // Alice's tab, opened over REST before she looks.
        let (status, tab) = rest(
            &http,
            Method::POST,
            format!("{}/tabs", watched.api),
            Some(json!({ "url": FIELD_PAGE })),
            ALICE,
        )
        .await;
        assert_eq!(status, 201, "{tab}");
        let field_tab = tab["id"].as_str().unwrap().to_string();
        // Bob's tab, which Alice must never see.
        let (_, bob_tab) = rest(
            &http,
            Method::POST,
            format!("{}/tabs", watched.api),
            Some(json!({ "url": "data:text/html,<title>bob's secret</title>" })),
            BOB,
        )
        .await;
        let bob_tab = bob_tab["id"].as_str().unwrap().to_string();

        sign_in(&ui, &watched.origin, ALICE).await;
        let listed = eval(&ui, "document.getElementById('tabs').textContent").await;
        assert!(
            listed.as_str().unwrap().contains("field"),
            "the list shows alice's tab: {listed}"
        );
        let rows = eval(
            &ui,
            "Array.from(document.querySelectorAll('#tabs tr[data-tab]')).map(r => r.dataset.tab)",
        )
        .await;
        assert!(
            !rows.to_string().contains(&bob_tab),
            "bob's tab is hidden: {rows}"
        );

        // A tab opened over REST while she watches appears on its own.
        let (_, dialog_tab) = rest(
            &http,
            Method::POST,
            format!("{}/tabs", watched.api),
            Some(json!({ "url": DIALOG_PAGE })),
            ALICE,
        )
        .await;
        let dialog_tab = dialog_tab["id"].as_str().unwrap().to_string();
        until(
            &ui,
            "a tab opened over REST in the live list",
            &format!("!!document.querySelector('#tabs tr[data-tab=\"{dialog_tab}\"]')"),
        )
        .await;

        // The live view: a new frame after an action.
        ui.navigate(&format!("{}/ui/tabs/{dialog_tab}", watched.origin))
            .await
            .unwrap();
        until(
            &ui,
            "the live view",
            "!!document.getElementById('tab-state')",
        )
        .await;
        let seen_before = eval(
            &ui,
            "Number(document.getElementById('view').dataset.framesSeen || 0)",
        )
        .await
        .as_i64()
        .unwrap_or(0);
        // The click opens a confirm dialog: the action answers with it.
        let (status, clicked) = rest(
            &http,
            Method::POST,
            format!("{}/tabs/{dialog_tab}/click", watched.api),
            Some(json!({ "selector": "#ask" })),
            ALICE,
        )
        .await;
        assert_eq!(status, 200, "{clicked}");
        let acted = Instant::now();
        until(
            &ui,
            "a new frame after the click",
            &format!(
                "Number(document.getElementById('view').dataset.framesSeen || 0) > {seen_before} \
                 && document.getElementById('frame').naturalWidth > 0"
            ),
        )
        .await;
        let frame_latency = acted.elapsed();
        assert!(
            frame_latency < Duration::from_secs(2),
            "the frame came {frame_latency:?} after the action"
        );

        // The dialog, answered from the UI.
        until(
            &ui,
            "the pending dialog",
            "!!document.querySelector('form.dialog')",
        )
        .await;
        let message = eval(
            &ui,
            "document.querySelector('form.dialog .message').textContent",
        )
        .await;
        assert_eq!(message, json!("Proceed?"));
        // A click on a panel the stream just replaced is lost, as a
        // person's would be: click again until the dialog is gone.
        let answered = eventually(Duration::from_secs(20), || async {
            let gone = eval(
                &ui,
                "(() => { const b = document.querySelector('form.dialog button[value=true]'); if (b) b.click(); return !b; })()",
            )
            .await;
            tokio::time::sleep(Duration::from_millis(700)).await;
            (gone == json!(true)).then_some(())
        })
        .await;
        assert!(answered.is_some(), "the dialog was answered from the UI");
        let (_, dialog) = rest(
            &http,
            Method::GET,
            format!("{}/tabs/{dialog_tab}/dialog", watched.api),
            None,
            ALICE,
        )
        .await;
        assert_eq!(dialog["present"], json!(false), "{dialog}");
        let title = eventually(Duration::from_secs(10), || async {
            let (_, info) = rest(
                &http,
                Method::GET,
                format!("{}/tabs/{dialog_tab}", watched.api),
                None,
                ALICE,
            )
            .await;
            (info["title"] == json!("yes")).then_some(info)
        })
        .await;
        assert!(title.is_some(), "the page saw its confirm accepted");
        // A <select> the page opened, answered from the UI.
        let (status, opened) = rest(
            &http,
            Method::POST,
            format!("{}/tabs/{dialog_tab}/click", watched.api),
            Some(json!({ "selector": "#colour" })),
            ALICE,
        )
        .await;
        assert_eq!(status, 200, "{opened}");
        until(
            &ui,
            "the pending select",
            "!!document.querySelector('form.prompt.select')",
        )
        .await;
        let labels = eval(&ui, "Array.from(document.querySelectorAll('form.prompt.select option')).map(o => o.textContent)").await;
        assert_eq!(labels, json!(["red", "green", "blue"]));
        let chosen = eventually(Duration::from_secs(20), || async {
            let gone = eval(
                &ui,
                "(() => { const f = document.querySelector('form.prompt.select'); if (f) { f.querySelector('select').value = '2'; f.querySelector('button[value=choose]').click(); } return !f; })()",
            )
            .await;
            tokio::time::sleep(Duration::from_millis(700)).await;
            (gone == json!(true)).then_some(())
        })
        .await;
        assert!(chosen.is_some(), "the select was answered from the UI");
        let (_, value) = rest(
            &http,
            Method::POST,
            format!("{}/tabs/{dialog_tab}/execute", watched.api),
            Some(json!({ "script": "document.getElementById('colour').value" })),
            ALICE,
        )
        .await;
        assert_eq!(value["result"]["value"], json!("blue"), "{value}");

        // An action with a before and an after screenshot, for the timeline.
        let (status, plain_click) = rest(
            &http,
            Method::POST,
            format!("{}/tabs/{dialog_tab}/click", watched.api),
            Some(json!({ "x": 600, "y": 400 })),
            ALICE,
        )
        .await;
        assert_eq!(status, 200, "{plain_click}");
        let plain_click = plain_click["action_id"].as_str().unwrap().to_string();

        // Take-over: the agent is kept off, a person's input reaches the page.
        ui.navigate(&format!("{}/ui/tabs/{field_tab}", watched.origin))
            .await
            .unwrap();
        until(
            &ui,
            "the take-over button",
            "!!document.querySelector('.controls button')",
        )
        .await;
        eval(
            &ui,
            "document.querySelector('.controls button').click(); true",
        )
        .await;
        until(
            &ui,
            "the tab taken over",
            "document.getElementById('tab-state').dataset.takenOver === 'true'",
        )
        .await;
        let (status, refused) = rest(
            &http,
            Method::POST,
            format!("{}/tabs/{field_tab}/click", watched.api),
            Some(json!({ "x": 10, "y": 10 })),
            ALICE,
        )
        .await;
        assert_eq!(
            status, 409,
            "the agent waits while a person holds the tab: {refused}"
        );
        assert_eq!(refused["code"], json!("HUMAN_MODE"));
        until(
            &ui,
            "screencast frames while the page runs",
            "document.getElementById('view').dataset.source === 'screencast'",
        )
        .await;
        ui.click(Target::Selector("#frame".into())).await.unwrap();
        ui.type_text(Some(Target::Selector("#view".into())), "hi")
            .await
            .unwrap();
        // Handed back once the typing has landed.
        eventually(Duration::from_secs(10), || async {
            let (_, calls) = rest(
                &http,
                Method::GET,
                format!(
                    "{}/history/events?tab_id={field_tab}&type=human_input",
                    watched.api
                ),
                None,
                ALICE,
            )
            .await;
            (calls["total"].as_u64().unwrap_or(0) >= 3).then_some(())
        })
        .await
        .expect("the person's click and keys were recorded");
        eval(
            &ui,
            "document.querySelector('.controls button').click(); true",
        )
        .await;
        until(
            &ui,
            "the tab handed back",
            "document.getElementById('tab-state').dataset.takenOver === 'false'",
        )
        .await;
        let (status, typed) = rest(
            &http,
            Method::POST,
            format!("{}/tabs/{field_tab}/execute", watched.api),
            Some(json!({ "script": "[document.getElementById('field').value, window.presses]" })),
            ALICE,
        )
        .await;
        assert_eq!(status, 200, "{typed}");
        assert_eq!(typed["result"]["value"][0], json!("hi"), "{typed}");
        assert!(
            typed["result"]["value"][1].as_i64().unwrap_or(0) >= 1,
            "{typed}"
        );

        // The timeline: the click's before and after images, decoded; what
        // the person did between the actions.
        let (_, session) = rest(
            &http,
            Method::GET,
            format!("{}/history/sessions/current", watched.api),
            None,
            ALICE,
        )
        .await;
        let session = session["id"].as_str().unwrap().to_string();
        ui.navigate(&format!(
            "{}/ui/sessions/{session}?tab={dialog_tab}&action={plain_click}",
            watched.origin
        ))
        .await
        .unwrap();
        until(
            &ui,
            "the action list",
            "document.querySelectorAll('#actions li.action').length >= 1",
        )
        .await;
        for which in ["before", "after"] {
            let decoded = until(
                &ui,
                &format!("the {which} screenshot"),
                &format!(
                    "(async () => {{ const img = document.querySelector('#detail img.shot[data-which={which}]'); \
                     if (!img) return 0; try {{ await img.decode(); }} catch (e) {{ return 0; }} return img.naturalWidth; }})()"
                ),
            )
            .await;
            assert!(decoded.as_i64().unwrap_or(0) > 100, "{which}: {decoded}");
        }
        // The first click's events, chosen with the keyboard.
        eval(&ui, "document.body.focus(); true").await;
        // Up past the select's click to the first one.
        ui.act("keyboard_press", json!({ "key": "ArrowUp" }))
            .await
            .unwrap();
        until(
            &ui,
            "the select click chosen with the keyboard",
            "(document.querySelector('#detail ul.events') || {}).textContent?.includes('select_open')",
        )
        .await;
        ui.act("keyboard_press", json!({ "key": "k" }))
            .await
            .unwrap();
        until(
            &ui,
            "the dialog click chosen with the keyboard",
            "(document.querySelector('#detail ul.events') || {}).textContent?.includes('dialog')",
        )
        .await;
        // What the page wrote to its console during that click, redacted.
        let console = eval(
            &ui,
            "document.querySelector('#detail ul.console').textContent",
        )
        .await;
        let console = console.as_str().unwrap_or_default().to_string();
        assert!(
            console.contains("warning") && console.contains("asking"),
            "{console}"
        );
        assert!(
            !console.contains("s3cr3t"),
            "a secret in the console is redacted: {console}"
        );
        ui.navigate(&format!(
            "{}/ui/sessions/{session}?tab={field_tab}",
            watched.origin
        ))
        .await
        .unwrap();
        let people = until(
            &ui,
            "the person's take-over in the timeline",
            "Array.from(document.querySelectorAll('#actions li.person')).map(li => li.textContent).join('|')",
        )
        .await;
        let people = people.as_str().unwrap().to_string();
        assert!(people.contains("took the tab over"), "{people}");
        assert!(people.contains("clicked at"), "{people}");
        assert!(people.contains("handed the tab back"), "{people}");
        assert!(
            !people.contains("hi"),
            "typed text stays out of the history: {people}"
        );

        // The session as one file, shown by `wabp view` without an engine.
        let download = eval(
            &ui,
            "(async () => { const a = document.querySelector('a[download]'); const r = await fetch(a.href); const doc = await r.json(); return [r.status, doc.actions.length, Object.keys(doc.screenshots || {}).length]; })()",
        )
        .await;
        assert_eq!(download[0], json!(200), "{download}");
        assert!(
            download[2].as_i64().unwrap_or(0) >= 1,
            "the download carries screenshots: {download}"
        );
        let (status, export) = rest(
            &http,
            Method::GET,
            format!(
                "{}/history/sessions/{session}/export?screenshots=true",
                watched.api
            ),
            None,
            ALICE,
        )
        .await;
        assert_eq!(status, 200);
        let file = temp_dir("ui-export").join("session.json");
        std::fs::write(&file, export.to_string()).unwrap();
        let mut view = tokio::process::Command::new(env!("CARGO_BIN_EXE_wabp"))
            .arg("view")
            .arg(&file)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(
            view.stdout.take().unwrap(),
        ));
        let link = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("wabp view prints its link")
            .unwrap()
            .unwrap();
        assert!(link.contains("/ui/login?key="), "{link}");
        ui.navigate(&link).await.unwrap();
        until(
            &ui,
            "the exported timeline",
            "document.querySelectorAll('#actions li.action').length >= 2",
        )
        .await;
        let offline_click = format!("#actions li.action[data-action=\"{plain_click}\"] a");
        eval(
            &ui,
            &format!("document.querySelector('{offline_click}').click(); true"),
        )
        .await;
        let decoded = until(
            &ui,
            "the exported after screenshot",
            &format!(
                "(async () => {{ const img = document.querySelector('#detail article[data-action=\"{plain_click}\"] img.shot[data-which=after]'); \
                 if (!img) return 0; try {{ await img.decode(); }} catch (e) {{ return 0; }} return img.naturalWidth; }})()"
            ),
        )
        .await;
        assert!(decoded.as_i64().unwrap_or(0) > 100, "{decoded}");
        view.kill().await.unwrap();
        ui.navigate(&format!("{}/ui/", watched.origin))
            .await
            .unwrap();
        until(
            &ui,
            "the sessions page",
            "!!document.querySelector('header button.link')",
        )
        .await;

        // Bob signs in on the same browser: none of alice's tabs or actions.
        eval(
            &ui,
            "document.querySelector('header button.link').click(); true",
        )
        .await;
        until(&ui, "the sign-in page", "location.pathname === '/ui/login'").await;
        sign_in(&ui, &watched.origin, BOB).await;
        let rows = until(
            &ui,
            "bob's tab list",
            "document.querySelector('#tabs tr[data-tab]') && Array.from(document.querySelectorAll('#tabs tr[data-tab]')).map(r => r.dataset.tab)",
        )
        .await;
        assert!(rows.to_string().contains(&bob_tab), "{rows}");
        assert!(!rows.to_string().contains(&field_tab), "{rows}");
        ui.navigate(&format!("{}/ui/tabs/{field_tab}", watched.origin))
            .await
            .unwrap();
        let text = eval(&ui, "document.body.textContent").await;
        assert!(text.as_str().unwrap_or("").contains("not found"), "{text}");
        ui.navigate(&format!("{}/ui/sessions/{session}", watched.origin))
            .await
            .unwrap();
        let actions = eval(
            &ui,
            "document.querySelectorAll('#actions li.action').length",
        )
        .await;
        assert_eq!(actions, json!(0), "bob sees none of alice's actions");
        person.shutdown().await;
    });
}

#[test]
fn other_pages_and_the_engines_own_tabs_are_kept_out_of_the_ui() {
    block_on(async {
        let watched = watched_engine().await;
        let site = common::start_site().await;
        let http = reqwest::Client::new();
        let ui_url = format!("{}/ui/", watched.origin);

        // The engine refuses to send its tabs to its own address, under any name.
        let port = watched.origin.rsplit(':').next().unwrap();
        for url in [
            ui_url.clone(),
            format!("http://localhost:{port}/ui/login"),
            format!("http://2130706433:{port}/ui/"),
        ] {
            let (status, refused) = rest(
                &http,
                Method::POST,
                format!("{}/tabs", watched.api),
                Some(json!({ "url": url })),
                ALICE,
            )
            .await;
            assert_eq!(status, 400, "{url}: {refused}");
            assert!(
                refused["error"].as_str().unwrap().contains("own address"),
                "{refused}"
            );
        }

        // A page on another port of 127.0.0.1 (same-site, and cookies ignore
        // ports) that sends itself to the UI gets 403.
        let (_, tab) = rest(
            &http,
            Method::POST,
            format!("{}/tabs", watched.api),
            Some(json!({ "url": format!("{site}/") })),
            ALICE,
        )
        .await;
        let tab = tab["id"].as_str().unwrap().to_string();
        let (status, _) = rest(
            &http,
            Method::POST,
            format!("{}/tabs/{tab}/execute", watched.api),
            Some(json!({ "script": format!("location.href = '{ui_url}'; true") })),
            ALICE,
        )
        .await;
        assert_eq!(status, 200);
        let mut last = String::new();
        let refused = eventually(Duration::from_secs(10), || async {
            let (_, text) = rest(
                &http,
                Method::POST,
                format!("{}/tabs/{tab}/text", watched.api),
                Some(json!({})),
                ALICE,
            )
            .await;
            let text = text.to_string();
            text.contains("only its own pages").then_some(text)
        })
        .await;
        if refused.is_none() {
            let (_, text) = rest(
                &http,
                Method::POST,
                format!("{}/tabs/{tab}/text", watched.api),
                Some(json!({})),
                ALICE,
            )
            .await;
            last = text.to_string();
        }
        assert!(refused.is_some(), "the UI refused a same-site page: {last}");

        // The same as a page in any browser would send them.
        let refused = |response: reqwest::Response| async move {
            let status = response.status().as_u16();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            (status, body)
        };
        let (status, body) = refused(
            http.get(&ui_url)
                .header("sec-fetch-site", "cross-site")
                .header("sec-fetch-mode", "navigate")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 403, "{body}");
        assert!(body["error"].as_str().is_some());
        let (status, body) = refused(
            http.post(format!("{}/ui/login", watched.origin))
                .header("origin", "http://127.0.0.1:1")
                .header("hx-request", "true")
                .form(&[("secret", ALICE)])
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 403, "{body}");
        // A form another page posts carries no HX-Request.
        let (status, _) = refused(
            http.post(format!("{}/ui/login", watched.origin))
                .header("sec-fetch-site", "same-origin")
                .form(&[("secret", ALICE)])
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 403);
        // Framed: refused by the guard and by the policy.
        let response = http
            .get(&ui_url)
            .header("sec-fetch-site", "same-origin")
            .header("sec-fetch-dest", "iframe")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 403);
        assert!(
            response.headers()["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("frame-ancestors 'none'")
        );

        // Signing in: a wrong token is refused; the cookie never holds the token.
        let (status, _) = refused(
            http.post(format!("{}/ui/login", watched.origin))
                .header("hx-request", "true")
                .form(&[("secret", "not-a-token-0123456789")])
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 401);
        let signed = http
            .post(format!("{}/ui/login", watched.origin))
            .header("hx-request", "true")
            .form(&[("secret", ALICE)])
            .send()
            .await
            .unwrap();
        let cookie = signed.headers()["set-cookie"].to_str().unwrap().to_string();
        assert!(
            cookie.contains("HttpOnly")
                && cookie.contains("SameSite=Strict")
                && cookie.contains("Path=/ui"),
            "{cookie}"
        );
        assert!(!cookie.contains(ALICE), "{cookie}");
        // Without the cookie, pages send people to sign in.
        let page = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .get(&ui_url)
            .send()
            .await
            .unwrap();
        assert_eq!(page.status().as_u16(), 303);
        assert_eq!(page.headers()["location"], "/ui/login");
    });
}
