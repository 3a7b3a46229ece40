//! The UI's event streams (server-sent events): the tab list, a tab's state
//! and a tab's frames. Each is a task that polls what it shows and sends
//! only changes; it ends when its page goes away or the server shuts down.
//! A screencast runs only while a frames stream is open and its page runs.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::json;
use tokio::sync::mpsc;

use crate::{Signed, Ui, pages};

/// How often the tab list and a tab's state are looked at.
const STATE_PERIOD: Duration = Duration::from_millis(300);
/// How often a frames stream looks for a new after-screenshot, and the
/// shortest gap between two frames it sends (10 per second at most).
const FRAME_PERIOD: Duration = Duration::from_millis(100);
/// The screencast's largest frame, in pixels.
const SCREENCAST_MAX: u32 = 1600;

/// The stream of what `rx` receives.
fn sse(rx: mpsc::Receiver<Event>) -> Response {
    let events = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|event| (Ok::<_, Infallible>(event), rx))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// Waits for the next tick, or says the stream should end.
async fn next_tick(
    tick: &mut tokio::time::Interval,
    closing: &mut tokio::sync::watch::Receiver<bool>,
    tx: &mpsc::Sender<Event>,
) -> bool {
    if *closing.borrow() {
        return false;
    }
    tokio::select! {
        _ = tick.tick() => true,
        _ = closing.changed() => false,
        _ = tx.closed() => false,
    }
}

/// A stream of `event`: what `render` shows, sent whenever it changes, until
/// the page goes, its login ends, the server shuts down, or `render` says
/// it showed the last of it.
fn changes<F, Fut>(ui: Ui, login: String, event: &'static str, mut render: F) -> Response
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = (String, bool)> + Send,
{
    let (tx, rx) = mpsc::channel(4);
    let mut closing = ui.closing();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(STATE_PERIOD);
        let mut last = String::new();
        while next_tick(&mut tick, &mut closing, &tx).await && ui.0.logins.signed_in(&login) {
            let (shown, ended) = render().await;
            if shown != last {
                if tx
                    .send(Event::default().event(event).data(&shown))
                    .await
                    .is_err()
                {
                    break;
                }
                last = shown;
            }
            if ended {
                break;
            }
        }
    });
    sse(rx)
}

/// `tabs`: the caller's tab rows, whenever they change.
pub(crate) async fn tabs(State(ui): State<Ui>, Signed { login, viewer }: Signed) -> Response {
    let polled = ui.clone();
    changes(ui, login, "tabs", move || {
        let (ui, viewer) = (polled.clone(), viewer.clone());
        async move { (pages::tab_rows(&ui, &viewer).await.into_string(), false) }
    })
}

/// `state`: a tab's state panel, whenever it changes.
pub(crate) async fn tab_state(
    State(ui): State<Ui>,
    Signed { login, viewer }: Signed,
    Path(tab_id): Path<String>,
) -> Response {
    let polled = ui.clone();
    changes(ui, login, "state", move || {
        let (ui, viewer, tab_id) = (polled.clone(), viewer.clone(), tab_id.clone());
        async move {
            match pages::tab_state(&ui, &viewer, &tab_id).await {
                Ok(panel) => (panel.into_string(), false),
                Err(e) if e.code == wabp_core::ErrorCode::TabNotFound => (
                    maud::html! { div #tab-state data-state="closed" { h1 { "Closed" } p { "This tab is closed." } } }
                        .into_string(),
                    true,
                ),
                // Not ready (a browser coming back): said, and looked at again.
                Err(e) => (
                    maud::html! { div #tab-state data-state="unavailable" { p.error { (e.message) } } }
                        .into_string(),
                    false,
                ),
            }
        }
    })
}

/// `frame`: the tab's newest frame as JSON (`src` a data URL, `width` and
/// `height` its size in CSS pixels, `source` "action" or "screencast"):
/// each action's after-screenshot, and while the page runs, the screencast.
pub(crate) async fn frames(
    State(ui): State<Ui>,
    Signed { login, viewer }: Signed,
    Path(tab_id): Path<String>,
) -> Response {
    let caller = match viewer.caller() {
        Ok(c) => c,
        Err(e) => return pages::refused(&e),
    };
    let engine = ui.0.engine.clone();
    if let Err(e) = engine.latest_frame(&caller, &tab_id) {
        return pages::refused(&e);
    }
    let (tx, rx) = mpsc::channel(2);
    let mut closing = ui.closing();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(FRAME_PERIOD);
        let mut last_shot: Option<Arc<Vec<u8>>> = None;
        let mut cast: Option<wabp_core::engine::viewer::Screencast> = None;
        let mut cast_sent = 0u64;
        let mut sent_at = Instant::now() - FRAME_PERIOD;
        loop {
            // Signed out (or expired): the stream ends with the login.
            if *closing.borrow() || !ui.0.logins.signed_in(&login) {
                break;
            }
            let cast_changed = async {
                match cast.as_mut() {
                    Some(cast) => cast.frames.changed().await.is_ok(),
                    None => std::future::pending().await,
                }
            };
            let mut frame = None;
            tokio::select! {
                _ = closing.changed() => break,
                _ = tx.closed() => break,
                alive = cast_changed => {
                    if !alive {
                        cast = None;
                    }
                }
                _ = tick.tick() => {
                    let shot = match engine.latest_frame(&caller, &tab_id) {
                        Ok(shot) => shot,
                        Err(_) => break,
                    };
                    if let Some(shot) = shot
                        && !last_shot.as_ref().is_some_and(|last| Arc::ptr_eq(last, &shot.data))
                    {
                        last_shot = Some(shot.data.clone());
                        let data = base64::engine::general_purpose::STANDARD.encode(shot.data.as_slice());
                        frame = Some(json!({
                            "src": format!("data:image/{};base64,{data}", shot.format),
                            "width": shot.width,
                            "height": shot.height,
                            "source": "action",
                        }));
                    }
                    let runs = engine.tab_runs(&caller, &tab_id).await.unwrap_or(false);
                    if runs && cast.is_none() {
                        cast = engine.screencast(&caller, &tab_id, SCREENCAST_MAX, SCREENCAST_MAX).await.ok();
                    } else if !runs {
                        cast = None;
                    }
                }
            }
            // The newest screencast frame, at most one per FRAME_PERIOD; one
            // held back goes with a later tick.
            if frame.is_none()
                && sent_at.elapsed() >= FRAME_PERIOD
                && let Some(cast) = cast.as_ref()
                && let Some(latest) = cast.frames.borrow().as_ref()
                && latest.number != cast_sent
            {
                cast_sent = latest.number;
                frame = Some(json!({
                    "src": format!("data:image/jpeg;base64,{}", latest.jpeg_base64),
                    "width": latest.device_width,
                    "height": latest.device_height,
                    "source": "screencast",
                }));
            }
            if let Some(frame) = frame {
                sent_at = Instant::now();
                if tx
                    .send(Event::default().event("frame").data(frame.to_string()))
                    .await
                    .is_err()
                {
                    break;
                }
            }
        }
    });
    sse(rx)
}
