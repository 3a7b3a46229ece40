//! `wabp-bench compare`: wabp and Playwright (playwright-core from
//! scripts/bench, on the same Chromium binary) on the same pages in the same
//! run; medians and ratios. wabp is driven over its REST API on loopback,
//! with the default envelope unless a row says otherwise. Then the scale
//! run: 50 tabs clicking at once (`WABP_BENCH_TABS=N` for another size, 0
//! to skip), against Playwright's 50 pages.

use std::time::Instant;

use axum::response::Html;
use serde_json::{Value, json};

use crate::median;

const RUNS: usize = 30;
const WARMUP: usize = 3;
const TEXT: &str = "abcdefghijklmnopqrst";

pub async fn run() -> anyhow::Result<()> {
    let page = crate::busy_page();
    let big = crate::bench_snapshot::catalogue(1000);
    let base = crate::serve_site(
        axum::Router::new()
            .route("/", axum::routing::get(move || async move { Html(page) }))
            .route("/big", axum::routing::get(move || async move { Html(big) })),
    )
    .await?;
    let (api, engine, session) = crate::start_engine("compare").await?;
    let http = reqwest::Client::new();
    let executable = engine.status().executable.unwrap_or_default();
    println!(
        "browser: {executable}, frame driver: {}",
        engine.frame_driver()
    );

    // Wall time of one request, failing loudly on an error answer.
    let request = |method: reqwest::Method, path: String, body: Option<Value>| {
        let http = http.clone();
        let url = format!("{api}{path}");
        async move {
            let started = Instant::now();
            let mut request = http.request(method, &url);
            if let Some(body) = body {
                request = request.json(&body);
            }
            let response = request.send().await?;
            let status = response.status();
            let bytes = response.bytes().await?;
            if !status.is_success() {
                anyhow::bail!("{url}: {status} {}", String::from_utf8_lossy(&bytes));
            }
            anyhow::Ok(started.elapsed().as_secs_f64() * 1000.0)
        }
    };
    let post = |path: String, body: Value| request(reqwest::Method::POST, path, Some(body));
    let tab = open_tab(&http, &api, &format!("{base}/")).await?;

    let mut rows: Vec<(&str, f64, Option<&str>)> = Vec::new();
    macro_rules! measure {
        ($label:expr, $pw:expr, |$i:ident| $call:expr) => {{
            let mut times = Vec::new();
            for $i in 0..RUNS + WARMUP {
                let ms = $call.await?;
                if $i >= WARMUP {
                    times.push(ms);
                }
            }
            rows.push(($label, median(times), $pw));
        }};
    }
    measure!("click, full envelope", Some("click"), |i| post(
        format!("/tabs/{tab}/click"),
        json!({ "x": 60 + (i % 5) * 90, "y": 120 })
    ));
    measure!("navigate, default envelope", Some("navigate"), |_i| post(
        format!("/tabs/{tab}/navigate"),
        json!({ "url": format!("{base}/") })
    ));
    // The same figure against Playwright's goto and a screenshot: a
    // navigation that answers with the page's picture.
    let navigate_with_picture = rows.last().map_or(0.0, |row| row.1);
    rows.push((
        "  against goto + screenshot",
        navigate_with_picture,
        Some("navigate_screenshot"),
    ));
    measure!("navigate, screenshot.area none", Some("navigate"), |_i| {
        post(
            format!("/tabs/{tab}/navigate"),
            json!({ "url": format!("{base}/"), "screenshot": { "area": "none" } }),
        )
    });
    measure!(
        "viewport screenshot (WebP, markup)",
        Some("screenshot"),
        |_i| request(
            reqwest::Method::GET,
            format!("/tabs/{tab}/screenshot"),
            None
        )
    );
    measure!(
        "fill 20 characters, full envelope",
        Some("fill"),
        |_i| post(
            format!("/tabs/{tab}/fill"),
            json!({ "selector": "input", "text": TEXT })
        )
    );
    measure!("fill 20 characters, no screenshots", Some("fill"), |_i| {
        post(
            format!("/tabs/{tab}/fill"),
            json!({ "selector": "input", "text": TEXT, "screenshot": { "area": "none" } }),
        )
    });
    measure!(
        "type 20 characters, no screenshots",
        Some("type"),
        |_i| async {
            post(
            format!("/tabs/{tab}/fill"),
            json!({ "selector": "input", "text": "", "screenshot": { "area": "none" }, "wait_until": { "type": "immediate" } }),
        )
        .await?;
            post(
                format!("/tabs/{tab}/type"),
                json!({ "selector": "input", "text": TEXT, "screenshot": { "area": "none" } }),
            )
            .await
        }
    );
    post(
        format!("/tabs/{tab}/navigate"),
        json!({ "url": format!("{base}/big"), "screenshot": { "area": "none" } }),
    )
    .await?;
    measure!("snapshot, 2,000 elements", Some("snapshot"), |_i| request(
        reqwest::Method::GET,
        format!("/tabs/{tab}/snapshot"),
        None
    ));

    let playwright =
        crate::playwright("compare.mjs", &[&base, &executable, &RUNS.to_string()]).await;
    if let Err(why) = &playwright {
        println!("Playwright not run: {why}");
    }
    print_rows(rows, &playwright);
    if std::env::var("WABP_BENCH_TABS").as_deref() != Ok("0") {
        // The scale run has its tabs only, as Playwright's has its pages
        // only: this run's tab and the one the engine starts with go.
        let open: Vec<Value> = http.get(format!("{api}/tabs")).send().await?.json().await?;
        for id in open.iter().filter_map(|t| t["id"].as_str()) {
            http.delete(format!("{api}/tabs/{id}")).send().await?;
        }
        scale(&api, &base, &executable).await?;
    }
    engine.shutdown(std::time::Duration::from_secs(5)).await;
    let _ = std::fs::remove_dir_all(session);
    Ok(())
}

/// The table: each row's median beside Playwright's figure for the same
/// operation and their ratio, then Playwright's bare-CDP floor.
fn print_rows(rows: Vec<(&str, f64, Option<&str>)>, playwright: &Result<Value, String>) {
    println!("\nmedians of {RUNS} (after {WARMUP} warm-up runs), ms");
    println!(
        "{:<40} {:>9} {:>11} {:>7}",
        "operation", "wabp", "Playwright", "ratio"
    );
    for (label, ours, key) in rows {
        let theirs = match (playwright, key) {
            (Ok(v), Some(k)) => v[k].as_f64(),
            _ => None,
        };
        match theirs {
            Some(t) if t > 0.0 => println!("{label:<40} {ours:9.1} {t:11.1} {:6.2}x", ours / t),
            _ => println!("{label:<40} {ours:9.1} {:>11} {:>7}", "-", "-"),
        }
    }
    println!(
        "(Playwright: click = screenshot, mouse.click, waitForLoadState, screenshot; navigate = goto \
         (the row below it: goto, then screenshot); \
         screenshot = PNG; fill = locator.fill; type = fill('') + pressSequentially; snapshot = ariaSnapshot)"
    );
    if let Ok(floor) = playwright {
        let figure = |key: &str| {
            floor[key]
                .as_f64()
                .map_or("-".to_string(), |v| format!("{v:.1}"))
        };
        println!(
            "\nthe floor (a bare CDP session in Playwright's process, on its browser: its switches, \
             CDPScreenshotNewSurface among them), ms:\n  \
             Page.navigate until the load event          {:>7}\n  \
             the same, then one round trip to the page    {:>7}\n  \
             the same, then Page.captureScreenshot (PNG)  {:>7}",
            figure("cdp_navigate"),
            figure("cdp_navigate_round_trip"),
            figure("cdp_navigate_screenshot"),
        );
    }
}

/// A new tab on `url`, over REST; its id.
async fn open_tab(http: &reqwest::Client, api: &str, url: &str) -> anyhow::Result<String> {
    let tab: Value = http
        .post(format!("{api}/tabs"))
        .json(&json!({ "url": url }))
        .send()
        .await?
        .json()
        .await?;
    tab["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow::anyhow!("no tab: {tab}"))
}

/// Tabs and clicks per tab of the scale run (`WABP_BENCH_TABS`).
fn scale_size() -> (usize, usize) {
    let tabs = std::env::var("WABP_BENCH_TABS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    (tabs, 10)
}

/// The resident memory of process `root` and all its descendants, in MB
/// (RSS summed: shared pages count once per process, the same for both),
/// with the share of each kind of process.
fn tree_rss_mb(root: u32) -> TreeMemory {
    let mut parent = std::collections::HashMap::new();
    let mut rss = std::collections::HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return TreeMemory::default();
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command's closing parenthesis: state, ppid, ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if let (Some(ppid), Some(pages)) = (
            fields.get(1).and_then(|f| f.parse::<u32>().ok()),
            fields.get(21).and_then(|f| f.parse::<u64>().ok()),
        ) {
            parent.insert(pid, ppid);
            rss.insert(pid, pages);
        }
    }
    let in_tree = |mut pid: u32| {
        for _ in 0..64 {
            if pid == root {
                return true;
            }
            match parent.get(&pid) {
                Some(&p) if p != 0 => pid = p,
                _ => return false,
            }
        }
        false
    };
    let mut memory = TreeMemory::default();
    for (&pid, &pages) in rss.iter().filter(|(pid, _)| in_tree(**pid)) {
        let mb = pages as f64 * 4096.0 / 1_048_576.0;
        memory.total_mb += mb;
        memory.total_pss_mb += proportional_mb(pid);
        let kind = if pid == root {
            "driver".to_string()
        } else {
            process_kind(pid)
        };
        let entry = memory.by_kind.entry(kind).or_default();
        entry.0 += 1;
        entry.1 += mb;
    }
    memory
}

/// One reading of a process tree's memory.
#[derive(Default, Clone)]
struct TreeMemory {
    total_mb: f64,
    /// PSS summed: each shared page split among the processes that map it
    /// (Chromium's code is most of a renderer's RSS and is shared).
    total_pss_mb: f64,
    /// Chromium's `--type` of each process ("browser" without one, "driver"
    /// for the root): how many, and their RSS summed.
    by_kind: std::collections::BTreeMap<String, (usize, f64)>,
}

impl std::fmt::Display for TreeMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .by_kind
            .iter()
            .map(|(kind, (count, mb))| {
                format!("{kind} {count} x {:.0} = {mb:.0}", mb / *count as f64)
            })
            .collect();
        write!(f, "{}", parts.join(", "))
    }
}

/// A process's proportional set size (`Pss` of `/proc/<pid>/smaps_rollup`),
/// in MB; 0 when it can't be read.
fn proportional_mb(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|rollup| {
            rollup.lines().find_map(|line| {
                let kb = line.strip_prefix("Pss:")?.trim().strip_suffix("kB")?;
                kb.trim().parse::<f64>().ok()
            })
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Chromium's process type from its command line (`--type=renderer`), or
/// the process's name for anything else.
fn process_kind(pid: u32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    // Chromium rewrites its children's titles into one string with spaces.
    let args: Vec<String> = cmdline
        .split(|b| *b == 0 || *b == b' ')
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    if let Some(t) = args.iter().find_map(|a| a.strip_prefix("--type=")) {
        let sub = args
            .iter()
            .find_map(|a| a.strip_prefix("--utility-sub-type="))
            .map(|s| format!("({})", s.rsplit('.').next().unwrap_or(s)))
            .unwrap_or_default();
        return format!("{t}{sub}");
    }
    let name = args.first().map(String::as_str).unwrap_or("");
    match name.rsplit('/').next() {
        _ if name.contains("chrom") => "browser".into(),
        // A process gone between listing and reading.
        None | Some("") => "other".into(),
        Some(base) => base.to_string(),
    }
}

/// CPU time in clock ticks: the machine's busy time (all cores) from
/// `/proc/stat`, and one process's own from `/proc/<pid>/stat`.
pub(crate) fn busy_ticks() -> u64 {
    let Ok(stat) = std::fs::read_to_string("/proc/stat") else {
        return 0;
    };
    let Some(line) = stat.lines().next() else {
        return 0;
    };
    // user nice system idle iowait irq softirq steal: all but idle and iowait.
    line.split_whitespace()
        .skip(1)
        .take(8)
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4)
        .filter_map(|(_, v)| v.parse::<u64>().ok())
        .sum()
}

fn process_rss_mb(pid: u32) -> Option<f64> {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages as f64 * 4096.0 / 1_048_576.0)
}

pub(crate) fn process_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// What a run cost: its peak memory, and its CPU time split into the
/// driving process's own (the engine; Playwright's node) and the rest of
/// the machine's (the browser, mostly), in ms.
struct RunCost {
    peak_rss_mb: f64,
    peak_pss_mb: f64,
    /// The peak's processes by kind.
    peak_by_kind: String,
    /// The driving process's own peak.
    driver_peak_rss_mb: f64,
    driver_cpu_ms: f64,
    other_cpu_ms: f64,
}

impl RunCost {
    fn per_action(&self, actions: usize) -> String {
        let n = actions.max(1) as f64;
        format!(
            "CPU per action {:5.1} ms (driver {:5.1}, browser and the rest {:5.1}); driver's peak RSS {:5.0} MB",
            (self.driver_cpu_ms + self.other_cpu_ms) / n,
            self.driver_cpu_ms / n,
            self.other_cpu_ms / n,
            self.driver_peak_rss_mb
        )
    }
}

/// Samples [`tree_rss_mb`] of `root` every 250 ms until told to stop;
/// answers the peak and the CPU spent meanwhile.
fn sample_peak(
    root: u32,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<RunCost>,
) {
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let sampler = tokio::spawn(async move {
        let tick_ms = 1000.0 / 100.0; // USER_HZ
        let busy_at_start = busy_ticks();
        let root_at_start = process_ticks(root).unwrap_or(0);
        let mut root_last = root_at_start;
        let mut peak = TreeMemory::default();
        let mut peak_pss: f64 = 0.0;
        let mut driver_peak: f64 = 0.0;
        loop {
            driver_peak = driver_peak.max(process_rss_mb(root).unwrap_or(0.0));
            let now = tokio::task::spawn_blocking(move || tree_rss_mb(root))
                .await
                .unwrap_or_default();
            peak_pss = peak_pss.max(now.total_pss_mb);
            if now.total_mb > peak.total_mb {
                peak = now;
            }
            // A child that has exited keeps its last reading.
            root_last = process_ticks(root).unwrap_or(root_last);
            tokio::select! {
                _ = &mut stopped => break,
                _ = tokio::time::sleep(std::time::Duration::from_millis(250)) => {}
            }
        }
        let busy = busy_ticks().saturating_sub(busy_at_start) as f64 * tick_ms;
        let driver = root_last.saturating_sub(root_at_start) as f64 * tick_ms;
        RunCost {
            peak_rss_mb: peak.total_mb,
            peak_pss_mb: peak_pss,
            peak_by_kind: peak.to_string(),
            driver_peak_rss_mb: driver_peak,
            driver_cpu_ms: driver,
            other_cpu_ms: (busy - driver).max(0.0),
        }
    });
    (stop, sampler)
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return 0.0;
    }
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

/// N tabs clicking at once (default envelope) against Playwright's N pages
/// taking screenshot, click, screenshot: throughput, p95, peak memory.
pub(crate) async fn scale(api: &str, base: &str, executable: &str) -> anyhow::Result<()> {
    let (tabs, clicks) = scale_size();
    let http = reqwest::Client::new();
    let mut ids = Vec::new();
    for _ in 0..tabs {
        ids.push(open_tab(&http, api, &format!("{base}/")).await?);
    }
    let (stop, sampler) = sample_peak(std::process::id());
    let started = Instant::now();
    let mut workers = Vec::new();
    for (p, id) in ids.iter().enumerate() {
        let (http, url) = (http.clone(), format!("{api}/tabs/{id}/click"));
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut failed = 0;
            for i in 0..clicks {
                let t = Instant::now();
                let ok = http
                    .post(&url)
                    .json(&json!({ "x": 60 + ((p + i) % 5) * 90, "y": 120 }))
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success());
                if ok {
                    latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                } else {
                    failed += 1;
                }
            }
            (latencies, failed)
        }));
    }
    let mut latencies = Vec::new();
    let mut failed = 0;
    for worker in workers {
        let (l, f) = worker.await?;
        latencies.extend(l);
        failed += f;
    }
    let wall = started.elapsed().as_secs_f64();
    let _ = stop.send(());
    let cost = sampler.await?;
    for id in &ids {
        let _ = http.delete(format!("{api}/tabs/{id}")).send().await;
    }
    let done = latencies.len();
    println!(
        "\n{tabs} tabs at once, {clicks} clicks each (default envelope / screenshot, click, screenshot):"
    );
    println!(
        "  wabp        {:6.1} actions/s, p50 {:7.1} ms, p95 {:7.1} ms, peak RSS {:7.0} MB ({failed} failed)",
        done as f64 / wall,
        percentile(latencies.clone(), 0.5),
        percentile(latencies, 0.95),
        cost.peak_rss_mb
    );
    println!("              {}", cost.per_action(done));
    println!(
        "              peak PSS {:.0} MB; at the RSS peak: {}",
        cost.peak_pss_mb, cost.peak_by_kind
    );
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/bench/scale.mjs");
    if !script
        .with_file_name("node_modules")
        .join("playwright-core")
        .exists()
    {
        println!("  Playwright not run: cd scripts/bench && npm install (playwright-core)");
        return Ok(());
    }
    let child = tokio::process::Command::new("node")
        .arg(&script)
        .args([
            &format!("{base}/"),
            executable,
            &tabs.to_string(),
            &clicks.to_string(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let (stop, sampler) = sample_peak(child.id().unwrap_or(0));
    let output = child.wait_with_output().await?;
    let _ = stop.send(());
    let cost = sampler.await?;
    let line = String::from_utf8_lossy(&output.stdout);
    match serde_json::from_str::<Value>(line.trim()) {
        Ok(v) => {
            println!(
                "  Playwright  {:6.1} actions/s, p50 {:7.1} ms, p95 {:7.1} ms, peak RSS {:7.0} MB",
                v["per_second"].as_f64().unwrap_or(0.0),
                v["p50_ms"].as_f64().unwrap_or(0.0),
                v["p95_ms"].as_f64().unwrap_or(0.0),
                cost.peak_rss_mb
            );
            // Its CPU also counts the browser's start and the pages' opening.
            println!(
                "              {} (with its start)",
                cost.per_action(tabs * clicks)
            );
            println!(
                "              peak PSS {:.0} MB; at the RSS peak: {}",
                cost.peak_pss_mb, cost.peak_by_kind
            );
        }
        Err(_) => println!(
            "  Playwright failed: {}",
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ),
    }
    Ok(())
}
