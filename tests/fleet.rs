//! An engine as one of a fleet: ids that name their engine, 421 for another
//! engine's ids, health and readiness for probes and balancers, and the
//! drain on SIGTERM (real engines, real Chromium, real signals).

mod common;

use std::time::{Duration, Instant};

use common::{block_on, shared};
use serde_json::{Value, json};

/// Sends SIGTERM to a child process.
fn terminate(child: &std::process::Child) {
    let sent = std::process::Command::new("kill")
        .args(["-s", "TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
}

/// Waits (bounded) for a child to exit; its exit code.
async fn exit_code(child: &mut std::process::Child, bound: Duration) -> Option<i32> {
    let started = Instant::now();
    while started.elapsed() < bound {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the engine did not exit within {bound:?}");
}

/// The first tab of the engine at `api` (the one it opens at start).
async fn first_tab(http: &reqwest::Client, api: &str) -> String {
    let (_, tabs) = common::send(
        http,
        reqwest::Method::GET,
        &format!("{api}/tabs"),
        None,
        None,
    )
    .await;
    tabs[0]["id"].as_str().unwrap().to_string()
}

/// A navigation of `tab` on the engine at `api` to `url`, left in flight.
fn navigation_in_flight(
    http: &reqwest::Client,
    api: &str,
    tab: &str,
    url: String,
) -> tokio::task::JoinHandle<(u16, Value)> {
    let (http, path) = (http.clone(), format!("{api}/tabs/{tab}/navigate"));
    tokio::spawn(async move {
        common::send(
            &http,
            reqwest::Method::POST,
            &path,
            Some(json!({ "url": url })),
            None,
        )
        .await
    })
}

#[test]
fn ids_name_their_engine_other_engines_ids_answer_421_and_metrics_count() {
    let (h, _g) = shared();
    block_on(async {
        let server = common::start_server_with(common::temp_dir("fleet-plugins"), |o| {
            o.engine_id = wabp_core::ids::EngineId::new("engine-a").unwrap();
        })
        .await;
        let a = h.with_server(server);
        let (status, tab) = a.post("/tabs", json!({})).await;
        assert_eq!(status, 201, "{tab}");
        let id = tab["id"].as_str().unwrap();
        assert!(
            id.starts_with("tab_") && id.ends_with(".engine-a"),
            "a tab id names its engine: {id}"
        );

        let misdirected = |(status, body): (u16, Value)| {
            assert_eq!(
                (status, &body["code"], &body["engine"]),
                (421, &json!("WRONG_ENGINE"), &json!("engine-b")),
                "{body}"
            );
            assert!(
                body["error"].as_str().unwrap().contains("engine engine-b"),
                "{body}"
            );
        };
        let theirs = "tab_0123456789abcdef.engine-b";
        misdirected(a.get(&format!("/tabs/{theirs}")).await);
        misdirected(
            a.post(&format!("/tabs/{theirs}/click"), json!({ "x": 1, "y": 1 }))
                .await,
        );
        misdirected(a.get("/downloads/dl_0123456789abcdef.engine-b").await);
        misdirected(
            a.post("/file-chooser/fc_0123456789abcdef.engine-b", json!({}))
                .await,
        );
        misdirected(
            a.post(
                "/approvals/apr_0123456789abcdef.engine-b",
                json!({ "approve": true }),
            )
            .await,
        );
        // An id of this engine that names nothing is simply not found.
        let (status, body) = a.get("/tabs/tab_0123456789abcdef.engine-a").await;
        assert_eq!(
            (status, &body["code"]),
            (404, &json!("TAB_NOT_FOUND")),
            "{body}"
        );

        let root = a.server.api.trim_end_matches("/api/v1").to_string();
        let health = h.http.get(format!("{root}/healthz")).send().await.unwrap();
        assert_eq!(health.status(), 200);
        let ready = h.http.get(format!("{root}/readyz")).send().await.unwrap();
        assert_eq!(ready.status(), 200);
        let ready: Value = ready.json().await.unwrap();
        assert_eq!(
            (&ready["ready"], &ready["engine"], &ready["reasons"]),
            (&json!(true), &json!("engine-a"), &json!([])),
            "{ready}"
        );

        // Metrics count what was sent.
        for _ in 0..3 {
            let (status, body) = a
                .post(
                    &format!("/tabs/{id}/navigate"),
                    json!({ "url": h.url("/"), "screenshot": { "area": "none" } }),
                )
                .await;
            assert_eq!(status, 200, "{body}");
        }
        let scraped = h.http.get(format!("{root}/metrics")).send().await.unwrap();
        assert_eq!(scraped.status(), 200);
        let text = scraped.text().await.unwrap();
        for line in [
            "wabp_operations_total{operation=\"navigate\",result=\"ok\"} 3",
            "wabp_operation_seconds_count{operation=\"navigate\"} 3",
            "wabp_http_requests_total{method=\"GET\",route=\"/api/v1/tabs/{tab_id}\",status=\"421\"} 1",
            "wabp_http_requests_total{method=\"POST\",route=\"/api/v1/tabs/{tab_id}/navigate\",status=\"200\"} 3",
            "wabp_tabs 2", // the one it opens at start, and ours
            "wabp_ready 1",
            "wabp_draining 0",
            "wabp_action_phase_seconds_count{phase=\"dispatch\"} 3",
        ] {
            assert!(text.contains(line), "{line} in\n{text}");
        }
        assert!(
            text.contains("wabp_plugin_instances{plugin=\"core-actions\",fate=\"created\"}"),
            "{text}"
        );
        a.server.app.shutdown(Duration::from_secs(5)).await;

        // With tokens on, metrics are for the admin token only.
        let server = common::start_server_with(common::temp_dir("fleet-tokens"), |o| {
            o.auth_token = Some("an-admin-token-of-some-length".into());
            o.browser_at_start = false;
        })
        .await;
        let root = server.api.trim_end_matches("/api/v1").to_string();
        let anonymous = h.http.get(format!("{root}/metrics")).send().await.unwrap();
        assert_eq!(anonymous.status(), 401);
        let admin = h
            .http
            .get(format!("{root}/metrics"))
            .bearer_auth("an-admin-token-of-some-length")
            .send()
            .await
            .unwrap();
        assert_eq!(admin.status(), 200);
        let health = h.http.get(format!("{root}/healthz")).send().await.unwrap();
        assert_eq!(health.status(), 200, "probes need no token");
    });
}

/// Past its memory bound an engine takes no new tabs (503 ENGINE_FULL with
/// Retry-After) and is not ready; the tabs it has keep working.
#[test]
fn past_the_memory_bound_new_tabs_are_refused() {
    let (h, _g) = shared();
    block_on(async {
        let server = common::start_server_with(common::temp_dir("fleet-full"), |o| {
            o.max_memory_bytes = 1 << 20;
        })
        .await;
        let full = h.with_server(server);
        let (_, tabs) = full.get("/tabs").await;
        let tab = tabs[0]["id"].as_str().unwrap().to_string();
        let refused = h
            .http
            .post(format!("{}/tabs", full.server.api))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 503);
        assert!(refused.headers().contains_key("retry-after"));
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["code"], "ENGINE_FULL", "{body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("over the bound of 1 MB"),
            "{body}"
        );
        let root = full.server.api.trim_end_matches("/api/v1").to_string();
        let ready = h.http.get(format!("{root}/readyz")).send().await.unwrap();
        assert_eq!(ready.status(), 503);
        let ready: Value = ready.json().await.unwrap();
        assert!(
            ready["reasons"][0].as_str().unwrap().starts_with("memory "),
            "{ready}"
        );
        let (status, body) = full
            .post(
                &format!("/tabs/{tab}/navigate"),
                json!({ "url": h.url("/"), "screenshot": { "area": "none" } }),
            )
            .await;
        assert_eq!(status, 200, "the tabs it has still work: {body}");
        full.server.app.shutdown(Duration::from_secs(5)).await;
    });
}

/// SIGTERM: readiness goes false, new tabs answer 503 with Retry-After,
/// the navigation in flight finishes with 200, history keeps it, the
/// engine exits 0. A second SIGTERM while draining exits at once.
#[test]
fn sigterm_drains_the_actions_in_flight_then_exits_0() {
    let (h, _g) = shared();
    block_on(async {
        let session = common::temp_dir("drain");
        let port = common::free_port();
        let root = format!("http://127.0.0.1:{port}");
        let api = format!("{root}/api/v1");
        let mut engine = common::spawn_engine(
            &session,
            port,
            &["--engine-id", "drainer", "--drain-secs", "20"],
        );
        common::wait_ready(&h.http, &api).await;
        let tab = first_tab(&h.http, &api).await;
        assert!(tab.ends_with(".drainer"), "{tab}");

        // A navigation to a page that answers after 2.5 s, in flight.
        let in_flight = navigation_in_flight(&h.http, &api, &tab, h.url("/sleep?ms=2500"));
        tokio::time::sleep(Duration::from_millis(500)).await;
        terminate(&engine);
        let draining = common::eventually(Duration::from_secs(5), || async {
            let ready = h.http.get(format!("{root}/readyz")).send().await.ok()?;
            (ready.status() == 503).then_some(ready)
        })
        .await
        .expect("readiness goes false");
        assert!(draining.headers().contains_key("retry-after"));
        let body: Value = draining.json().await.unwrap();
        assert_eq!(body["reasons"], json!(["draining"]), "{body}");
        let refused = h
            .http
            .post(format!("{api}/tabs"))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 503);
        assert!(refused.headers().contains_key("retry-after"));
        let refused: Value = refused.json().await.unwrap();
        assert_eq!(refused["code"], "DRAINING", "{refused}");
        let health = h.http.get(format!("{root}/healthz")).send().await.unwrap();
        assert_eq!(health.status(), 200, "alive while draining");

        let (status, envelope) = in_flight.await.unwrap();
        assert_eq!(status, 200, "the action in flight finished: {envelope}");
        assert_eq!(
            exit_code(&mut engine, Duration::from_secs(30)).await,
            Some(0)
        );

        let history = wabp_history::HistoryStore::open(&session).unwrap();
        let actions = history
            .list_actions(wabp_history::ActionFilter::default())
            .await
            .unwrap();
        assert!(
            actions
                .iter()
                .any(|a| a.action_type == "navigate" && a.params.to_string().contains("/sleep")),
            "the drained action is in history: {actions:?}"
        );
        let sessions = history.list_sessions().await.unwrap();
        assert!(
            sessions.iter().all(|s| s.ended_ms.is_some()),
            "the history session was ended: {sessions:?}"
        );
        history.close().await.unwrap();

        // A second SIGTERM while an action holds the drain: out at once.
        let session = common::temp_dir("drain-twice");
        let port = common::free_port();
        let api = format!("http://127.0.0.1:{port}/api/v1");
        let mut engine = common::spawn_engine(&session, port, &["--drain-secs", "60"]);
        common::wait_ready(&h.http, &api).await;
        let tab = first_tab(&h.http, &api).await;
        let held = navigation_in_flight(&h.http, &api, &tab, h.url("/sleep?ms=30000"));
        tokio::time::sleep(Duration::from_millis(500)).await;
        terminate(&engine);
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(engine.try_wait().unwrap().is_none(), "still draining");
        terminate(&engine);
        assert_eq!(
            exit_code(&mut engine, Duration::from_secs(10)).await,
            Some(1)
        );
        held.abort();
    });
}

// ------------------------------------------------------------ behind HAProxy

/// `scripts/fleet.sh ARGS`, with this build's binary.
fn fleet_sh(args: &[&str]) {
    let status = std::process::Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fleet.sh"))
        .args(args)
        .env("WABP_BIN", env!("CARGO_BIN_EXE_wabp"))
        .status()
        .expect("bash runs");
    assert!(status.success(), "scripts/fleet.sh {args:?} failed");
}

/// A first port with `n` free ports from it.
fn free_ports(n: u16) -> u16 {
    loop {
        let first = common::free_port();
        let free = (0..n).all(|i| {
            first
                .checked_add(i)
                .is_some_and(|p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok())
        });
        if free {
            return first;
        }
    }
}

/// The engine an id names.
fn engine_of(id: &str) -> String {
    id.rsplit_once('.')
        .expect("an id naming its engine")
        .1
        .to_string()
}

/// Three engines behind the shipped HAProxy configuration: ten users with
/// two tabs each, every request reaching its tab's engine; metrics that
/// count what was sent; one engine drained with actions in flight (they
/// finish, its user's new session lands elsewhere); one engine killed (its
/// tabs answer 410 ENGINE_GONE, other users' tabs carry on).
#[test]
fn a_fleet_behind_haproxy_routes_by_engine_drains_and_outlives_an_engine() {
    let (h, _g) = shared();
    let dir = common::temp_dir("fleet");
    let balancer = common::free_port();
    let first = free_ports(3);
    let dir_arg = dir.display().to_string();
    let (port_arg, first_arg) = (balancer.to_string(), first.to_string());
    let args = [
        "--engines",
        "3",
        "--port",
        &port_arg,
        "--first-engine-port",
        &first_arg,
        "--dir",
        &dir_arg,
    ];
    fleet_sh(&[&["up"][..], &args].concat());
    struct Down(Vec<String>);
    impl Drop for Down {
        fn drop(&mut self) {
            let args: Vec<&str> = self.0.iter().map(String::as_str).collect();
            fleet_sh(&args);
        }
    }
    let _down = Down(["down", "--dir", &dir_arg].map(String::from).to_vec());
    let api = format!("http://127.0.0.1:{balancer}/api/v1");
    let engine_api = |engine: &str| {
        let i: u16 = engine.trim_start_matches("engine-").parse().unwrap();
        format!("http://127.0.0.1:{}", first + i - 1)
    };
    block_on(async {
        let send = |method: reqwest::Method, path: String, body: Option<Value>| {
            let (http, url) = (h.http.clone(), format!("{api}{path}"));
            async move { common::send(&http, method, &url, body, None).await }
        };
        // Ten users, two tabs each: a user's tabs share an engine.
        let mut tabs: Vec<(String, String)> = Vec::new();
        for u in 0..10 {
            let user = format!("user-{u}");
            for query in [true, false] {
                // userId in the query, then in the body: the balancer reads both.
                let (path, body) = if query {
                    (format!("/tabs?userId={user}"), json!({}))
                } else {
                    ("/tabs".to_string(), json!({ "userId": user }))
                };
                let (status, tab) = send(reqwest::Method::POST, path, Some(body)).await;
                assert_eq!(status, 201, "{tab}");
                tabs.push((user.clone(), tab["id"].as_str().unwrap().to_string()));
            }
        }
        let mut engines: Vec<String> = tabs.iter().map(|(_, t)| engine_of(t)).collect();
        for pair in tabs.chunks(2) {
            assert_eq!(
                engine_of(&pair[0].1),
                engine_of(&pair[1].1),
                "a user stays on one engine: {pair:?}"
            );
        }
        engines.sort();
        engines.dedup();
        assert!(
            engines.len() >= 2,
            "users spread over the engines: {engines:?}"
        );
        for (user, tab) in &tabs {
            let (status, body) = send(
                reqwest::Method::POST,
                format!("/tabs/{tab}/navigate?userId={user}"),
                Some(json!({ "url": h.url("/"), "screenshot": { "area": "none" } })),
            )
            .await;
            assert_eq!(status, 200, "{tab} reached its engine: {body}");
        }
        let mut navigations = 0;
        for engine in &engines {
            let text = h
                .http
                .get(format!("{}/metrics", engine_api(engine)))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            navigations += text
                .lines()
                .find(|l| {
                    l.starts_with("wabp_operations_total{operation=\"navigate\",result=\"ok\"}")
                })
                .and_then(|l| l.rsplit(' ').next()?.parse::<u32>().ok())
                .unwrap_or(0);
        }
        assert_eq!(
            navigations, 20,
            "the engines' metrics count every navigation"
        );

        // Drain the first user's engine with two navigations in flight.
        let (user, _) = tabs[0].clone();
        let drained = engine_of(&tabs[0].1);
        let on_drained: Vec<(String, String)> = tabs
            .iter()
            .filter(|(_, t)| engine_of(t) == drained)
            .cloned()
            .collect();
        let mut in_flight = Vec::new();
        for (owner, tab) in on_drained.iter().take(2) {
            in_flight.push(tokio::spawn(send(
                reqwest::Method::POST,
                format!("/tabs/{tab}/navigate?userId={owner}"),
                Some(json!({ "url": h.url("/sleep?ms=2000"), "screenshot": { "area": "none" } })),
            )));
        }
        tokio::time::sleep(Duration::from_millis(400)).await;
        let pid = std::fs::read_to_string(dir.join(format!("{drained}.pid"))).unwrap();
        let killed = std::process::Command::new("kill")
            .args(["-s", "TERM", pid.trim()])
            .status()
            .unwrap();
        assert!(killed.success());
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (status, moved) = send(
            reqwest::Method::POST,
            format!("/tabs?userId={user}"),
            Some(json!({})),
        )
        .await;
        assert_eq!(
            status, 201,
            "the new session lands on another engine: {moved}"
        );
        let new_home = engine_of(moved["id"].as_str().unwrap());
        assert_ne!(new_home, drained);
        for answer in in_flight {
            let (status, body) = answer.await.unwrap();
            assert_eq!(status, 200, "an action in flight finished: {body}");
        }

        // Kill another engine outright: its tabs are gone, with its name.
        let killed = engines
            .iter()
            .find(|e| **e != drained && **e != new_home)
            .cloned()
            .unwrap_or_else(|| engines.iter().find(|e| **e != drained).unwrap().clone());
        let pid = std::fs::read_to_string(dir.join(format!("{killed}.pid"))).unwrap();
        std::process::Command::new("kill")
            .args(["-s", "KILL", pid.trim()])
            .status()
            .unwrap();
        let (owner, gone) = tabs
            .iter()
            .find(|(_, t)| engine_of(t) == killed)
            .cloned()
            .unwrap();
        let answer = common::eventually(Duration::from_secs(10), || {
            // Until the balancer's check marks it down, a request may fail.
            let request = h
                .http
                .get(format!("{api}/tabs/{gone}?userId={owner}"))
                .send();
            async move {
                let response = request.await.ok()?;
                if response.status() != 410 {
                    return None;
                }
                response.json::<Value>().await.ok()
            }
        })
        .await
        .expect("a killed engine's tab answers 410");
        assert_eq!(
            (&answer["code"], &answer["engine"]),
            (&json!("ENGINE_GONE"), &json!(killed)),
            "{answer}"
        );
        // The surviving engine's users carry on.
        let survivor = engines
            .iter()
            .find(|e| **e != drained && **e != killed)
            .cloned()
            .unwrap_or(new_home);
        if let Some((owner, tab)) = tabs.iter().find(|(_, t)| engine_of(t) == survivor) {
            let (status, body) = send(
                reqwest::Method::POST,
                format!("/tabs/{tab}/navigate?userId={owner}"),
                Some(json!({ "url": h.url("/"), "screenshot": { "area": "none" } })),
            )
            .await;
            assert_eq!(status, 200, "{body}");
        }
    });
}

// ------------------------------------------------------------ browsers from a service

/// The browserless launcher `scripts/test-browserless.sh` sets up
/// (`WABP_TEST_BROWSERLESS` when scripts/test.sh already did).
fn browserless_launcher() -> String {
    // Once per test binary: two tests setting it up at once would rewrite
    // the launcher while the other starts it.
    static LAUNCHER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LAUNCHER
        .get_or_init(|| {
            if let Ok(launcher) = std::env::var("WABP_TEST_BROWSERLESS") {
                return launcher;
            }
            let out = std::process::Command::new("bash")
                .arg(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/scripts/test-browserless.sh"
                ))
                .stderr(std::process::Stdio::inherit())
                .output()
                .expect("bash runs");
            assert!(out.status.success(), "scripts/test-browserless.sh failed");
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        })
        .clone()
}

/// browserless on `port` with `token`, answering; in a process group of
/// its own, so [`kill_service`] ends its browsers with it.
async fn start_browserless(
    http: &reqwest::Client,
    launcher: &str,
    port: u16,
    token: &str,
) -> std::process::Child {
    start_browserless_with(http, launcher, port, token, &[("CONCURRENT", "4")]).await
}

async fn start_browserless_with(
    http: &reqwest::Client,
    launcher: &str,
    port: u16,
    token: &str,
    settings: &[(&str, &str)],
) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let child = std::process::Command::new(launcher)
        .env("PORT", port.to_string())
        .env("TOKEN", token)
        .envs(settings.iter().copied())
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("browserless starts");
    let url = format!("http://127.0.0.1:{port}/json/version?token={token}");
    let up = common::eventually(Duration::from_secs(60), || {
        let request = http.get(&url).send();
        async move { request.await.ok().filter(|r| r.status() == 200).map(|_| ()) }
    })
    .await;
    assert!(up.is_some(), "browserless did not answer on {port}");
    child
}

/// Kills a service started by [`start_browserless`] with its browsers (no
/// Chromium left behind).
fn kill_service(service: &mut std::process::Child) {
    let _ = std::process::Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{}", service.id())])
        .status();
    let _ = service.wait();
}

/// What browserless' `/sessions` lists now. It asks each browser in turn
/// and answers 500 while one is going away: asked again then.
async fn browserless_sessions(http: &reqwest::Client, port: u16, token: &str) -> Value {
    let mut last = String::new();
    for _ in 0..40 {
        let answer = http
            .get(format!("http://127.0.0.1:{port}/sessions?token={token}"))
            .send()
            .await
            .unwrap();
        let status = answer.status();
        let text = answer.text().await.unwrap();
        if status.is_success() {
            return serde_json::from_str(&text).unwrap_or_else(|_| panic!("/sessions: {text}"));
        }
        last = format!("{status} {text}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("/sessions: {last}");
}

/// The browsers browserless runs now.
async fn browserless_browsers(http: &reqwest::Client, port: u16, token: &str) -> usize {
    browserless_sessions(http, port, token)
        .await
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["type"] == "browser")
        .count()
}

/// An engine attached to the real browserless platform by its launch URL
/// (`/chromium?token=`) and by HTTP discovery: one browser each (one
/// socket), the viewport applied, the token never shown; the service
/// killed with an action in flight (an error, not 200; not ready at once)
/// and started again (the tab back under its id).
#[test]
fn an_engine_drives_browserless_by_its_launch_url_and_outlives_it() {
    let (h, _g) = shared();
    let launcher = browserless_launcher();
    let port = common::free_port();
    let token = "wabp-test-token-0123456789";
    block_on(async {
        let mut service = start_browserless(&h.http, &launcher, port, token).await;
        let launch_url = format!("ws://127.0.0.1:{port}/chromium?token={token}");
        let server = common::start_server_with(common::temp_dir("remote-plugins"), |o| {
            o.launch = wabp_core::browser::LaunchMode::Connect(launch_url);
            o.viewport = (1024, 700);
        })
        .await;
        let g = h.with_server(server);
        let (status, body) = g.get("/browser/status").await;
        assert_eq!(
            (status, &body["data"]["ready"]),
            (200, &json!(true)),
            "{body}"
        );
        let tab = g.tab_on("/").await;
        let (status, envelope) = g
            .post(&format!("/tabs/{tab}/click"), json!({ "x": 5, "y": 5 }))
            .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(
            g.eval(&tab, "innerWidth + 'x' + innerHeight").await,
            "1024x700"
        );
        assert_eq!(
            browserless_browsers(&h.http, port, token).await,
            1,
            "one browser: the engine's connections share one socket"
        );

        // HTTP discovery, with the token in the query.
        let discovery = format!("http://127.0.0.1:{port}?token={token}");
        let second = common::start_server_with(common::temp_dir("remote-plugins-2"), |o| {
            o.launch = wabp_core::browser::LaunchMode::Connect(discovery);
        })
        .await;
        let d = h.with_server(second);
        let other = d.tab_on("/").await;
        assert_eq!(
            d.eval(&other, "document.title").await,
            g.eval(&tab, "document.title").await
        );
        assert_eq!(browserless_browsers(&h.http, port, token).await, 2);
        d.server.app.shutdown(Duration::from_secs(5)).await;

        // The service dies with a navigation in flight.
        let in_flight = navigation_in_flight(&h.http, &g.server.api, &tab, h.url("/sleep?ms=4000"));
        tokio::time::sleep(Duration::from_millis(500)).await;
        kill_service(&mut service);
        let status = common::eventually(Duration::from_secs(3), || async {
            let (_, body) = g.get("/browser/status").await;
            (body["data"]["ready"] == false).then_some(body)
        })
        .await
        .expect("the engine notices at once");
        let text = status.to_string();
        assert!(
            text.contains("restarting") && text.contains("token=***") && !text.contains(token),
            "{text}"
        );
        let (status, body) = in_flight.await.unwrap();
        assert_ne!(
            status, 200,
            "an action across the loss is not a success: {body}"
        );
        assert!(status == 503 || status == 504, "{status} {body}");

        // Back: the tab reopens under its id.
        let mut service = start_browserless(&h.http, &launcher, port, token).await;
        let ready = common::eventually(Duration::from_secs(30), || async {
            let (_, body) = g.get("/browser/status").await;
            (body["data"]["ready"] == true).then_some(())
        })
        .await;
        assert!(ready.is_some(), "the engine reattached");
        let (status, body) = g
            .post(
                &format!("/tabs/{tab}/navigate"),
                json!({ "url": h.url("/"), "screenshot": { "area": "none" } }),
            )
            .await;
        assert_eq!(status, 200, "the tab answers under its old id: {body}");
        g.server.app.shutdown(Duration::from_secs(5)).await;
        kill_service(&mut service);
    });
}

/// Has browserless end the browser tracked as `tracking_id`.
async fn kill_browserless_session(
    http: &reqwest::Client,
    port: u16,
    token: &str,
    tracking_id: &str,
) {
    let killed = http
        .get(format!(
            "http://127.0.0.1:{port}/kill/{tracking_id}?token={token}"
        ))
        .send()
        .await
        .unwrap();
    assert!(killed.status().is_success(), "{killed:?}");
}

/// The browserless sessions tracked as `tracking_id`.
async fn browserless_sessions_of(
    http: &reqwest::Client,
    port: u16,
    token: &str,
    tracking_id: &str,
) -> usize {
    browserless_sessions(http, port, token)
        .await
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["type"] == "browser" && s["trackingId"] == tracking_id)
        .count()
}

/// `--browser-endpoint`: each user session gets a browser of its own from
/// the real browserless platform (apart from the engine's own); a user's
/// browser the service kills comes back with that user's tab under its id
/// while another user carries on; a service at its limit answers 503
/// BROWSER_SERVICE_BUSY with Retry-After; the browsers end with the engine.
#[test]
fn each_user_session_gets_a_browser_of_its_own_from_the_service() {
    let (h, _g) = shared();
    let launcher = browserless_launcher();
    let port = common::free_port();
    let token = "wabp-test-token-session-browsers";
    block_on(async {
        // Room for three browsers and no queue: the engine's, alice's, bob's.
        let mut service = start_browserless_with(
            &h.http,
            &launcher,
            port,
            token,
            &[("CONCURRENT", "3"), ("QUEUED", "0")],
        )
        .await;
        let endpoint = format!("ws://127.0.0.1:{port}/chromium?token={token}&trackingId={{user}}");
        let server = common::start_server_with(common::temp_dir("endpoint-plugins"), |o| {
            o.browser_endpoints = vec![endpoint];
        })
        .await;
        let g = h.with_server(server);
        let root = g.server.api.trim_end_matches("/api/v1").to_string();

        let mut tabs = Vec::new();
        for user in ["alice", "bob"] {
            let (status, tab) = g.post(&format!("/tabs?userId={user}"), json!({})).await;
            assert_eq!(status, 201, "{tab}");
            let tab = tab["id"].as_str().unwrap().to_string();
            let (status, body) = g
                .post(
                    &format!("/tabs/{tab}/navigate?userId={user}"),
                    json!({ "url": h.url("/"), "screenshot": { "area": "none" } }),
                )
                .await;
            assert_eq!(status, 200, "{body}");
            tabs.push((user, tab));
        }
        for user in ["alice", "bob"] {
            assert_eq!(
                browserless_sessions_of(&h.http, port, token, user).await,
                1,
                "{user} has a browser of their own"
            );
        }
        assert_eq!(browserless_browsers(&h.http, port, token).await, 3);
        let readiness: Value = h
            .http
            .get(format!("{root}/readyz"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(readiness["session_browsers"], 2, "{readiness}");

        // Cookies set over the API land in the user's own browser: alice's
        // page sends hers, bob's has none.
        let (status, set) = g
            .post(
                "/cookies",
                json!({ "userId": "alice", "cookies": [
                    { "name": "who", "value": "alice", "url": h.url("/") }
                ] }),
            )
            .await;
        assert_eq!(status, 200, "{set}");
        for (user, tab, expected) in [("alice", &tabs[0].1, "who=alice"), ("bob", &tabs[1].1, "")] {
            let (status, body) = g
                .post(
                    &format!("/tabs/{tab}/execute?userId={user}"),
                    json!({ "script": "document.cookie" }),
                )
                .await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["result"]["value"], expected, "{user}: {body}");
        }

        // The service is full: a third user is told to come back later.
        let refused = h
            .http
            .post(format!("{}/tabs?userId=carol", g.server.api))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 503);
        assert!(refused.headers().contains_key("retry-after"));
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["code"], "BROWSER_SERVICE_BUSY", "{body}");
        assert!(!body.to_string().contains(token), "{body}");

        // The service kills alice's browser: bob carries on, alice's tab
        // comes back under its id, saying what happened.
        kill_browserless_session(&h.http, port, token, "alice").await;
        let (alice_tab, bob_tab) = (&tabs[0].1, &tabs[1].1);
        let (status, body) = g
            .post(
                &format!("/tabs/{bob_tab}/navigate?userId=bob"),
                json!({ "url": h.url("/second"), "screenshot": { "area": "none" } }),
            )
            .await;
        assert_eq!(status, 200, "bob's browser is not alice's: {body}");
        let back = common::eventually(Duration::from_secs(30), || async {
            let (status, body) = g
                .post(
                    &format!("/tabs/{alice_tab}/click?userId=alice"),
                    json!({ "x": 5, "y": 5, "screenshot": { "area": "none" } }),
                )
                .await;
            (status == 200).then_some(body)
        })
        .await
        .expect("alice's tab came back");
        assert!(
            back["events"]
                .as_array()
                .is_some_and(|e| e.iter().any(|e| e["type"] == "browser_restarted")),
            "{back}"
        );
        assert_eq!(
            browserless_sessions_of(&h.http, port, token, "alice").await,
            1
        );

        // Bob closes his only tab, then the service drops his browser:
        // nothing to bring back, so his session ends instead of holding a
        // new browser (a slot of the service) until the engine exits.
        let (status, body) = g.delete(&format!("/tabs/{bob_tab}?userId=bob")).await;
        assert!(status < 300, "{status} {body}");
        kill_browserless_session(&h.http, port, token, "bob").await;
        let ended = common::eventually(Duration::from_secs(10), || async {
            let readiness: Value = h
                .http
                .get(format!("{root}/readyz"))
                .send()
                .await
                .ok()?
                .json()
                .await
                .ok()?;
            (readiness["session_browsers"] == 1).then_some(())
        })
        .await;
        assert!(ended.is_some(), "bob's session ended with his browser");
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(
            browserless_sessions_of(&h.http, port, token, "bob").await,
            0
        );

        // The engine ends: so do the browsers it held.
        g.server.app.shutdown(Duration::from_secs(5)).await;
        let gone = common::eventually(Duration::from_secs(10), || async {
            (browserless_browsers(&h.http, port, token).await == 0).then_some(())
        })
        .await;
        assert!(
            gone.is_some(),
            "the service's browsers ended with the engine"
        );
        kill_service(&mut service);
    });
}
