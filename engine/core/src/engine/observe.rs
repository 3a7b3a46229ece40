//! Reading a page for an agent: the accessibility snapshot with refs and the
//! browser-use style state with indices. Both hand out numbers from the
//! tab's one id space (see `refs`), so `[e7]`, label 7 and index 7 are the
//! same element.

use serde_json::{Value, json};

use crate::action::{ActionOptions, Envelope};
use crate::caller::Caller;
use crate::capture::{CaptureOptions, DEFAULT_MARKUP};
use crate::engine::{Engine, TURN_LIMIT};
use crate::error::{Error, ErrorCode, NextStep, Result};
use crate::snapshot::{RefsFor, SnapshotFormat, SnapshotSource, window};
use crate::tab::capture::take_screenshot;
use crate::tab::observation::CachedSnapshot;
use crate::tab::refs::numbering_prelude;

#[derive(Debug, Clone)]
pub struct SnapshotRequest {
    pub format: SnapshotFormat,
    pub source: SnapshotSource,
    /// Character offset into the text snapshot; > 0 reads the cached one.
    pub offset: usize,
    pub include_screenshot: bool,
}

/// Visible interactive elements in DOM order (open shadow roots included),
/// numbered from the refs registry; run in each frame.
const STATE_FN: &str = concat!(
    "function(next, limit) {",
    numbering_prelude!(),
    include_str!("../tab/js/state.js"),
);

/// At most this many elements in `GET /state`.
const STATE_ELEMENTS: usize = 100;

impl Engine {
    /// `GET /tabs/{id}/snapshot`.
    pub async fn snapshot(
        &self,
        caller: &Caller,
        tab_id: &str,
        request: SnapshotRequest,
    ) -> Result<Value> {
        let tab = self.live_tab(caller, tab_id).await?;
        let _turn = tab.turn(TURN_LIMIT).await?;
        if request.format == SnapshotFormat::Json && request.offset > 0 {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "offset pages the text format only; format=json returns the whole tree",
            ));
        }
        let mut out = if request.format == SnapshotFormat::Text && request.offset > 0 {
            let cached = tab.cached_snapshot().ok_or_else(|| {
                Error::new(
                    ErrorCode::StaleRef,
                    "the page changed (navigation or an action) since the snapshot was taken, or none was taken; request it again with offset=0",
                )
            })?;
            let w = window(&cached.text, request.offset)?;
            let mut v = serde_json::to_value(&w).map_err(|e| Error::internal(e.to_string()))?;
            v["url"] = json!(cached.url);
            v["refsCount"] = json!(cached.refs_count);
            v
        } else {
            let epoch = tab.epoch();
            let refs_for = match request.format {
                SnapshotFormat::Json => RefsFor::Every,
                SnapshotFormat::Text => RefsFor::Interactive,
            };
            let built = tab.refs().build_snapshot(refs_for, request.source).await?;
            match request.format {
                SnapshotFormat::Json => built.json(&tab.refs()).await,
                SnapshotFormat::Text => {
                    let text = built.text();
                    let w = window(&text, 0)?;
                    tab.cache_snapshot(CachedSnapshot {
                        epoch,
                        url: built.url().to_string(),
                        text,
                        refs_count: built.refs_count(),
                    });
                    let mut v =
                        serde_json::to_value(&w).map_err(|e| Error::internal(e.to_string()))?;
                    v["url"] = json!(built.url());
                    v["refsCount"] = json!(built.refs_count());
                    if let Some(note) = built.truncated() {
                        v["truncated"] = json!(true);
                        v["note"] = json!(note);
                    }
                    v
                }
            }
        };
        if request.include_screenshot {
            let markup = DEFAULT_MARKUP.iter().map(|s| s.to_string()).collect();
            let (shot, _, _) = take_screenshot(
                &tab.driver(),
                &tab.refs(),
                self.registry.as_ref(),
                &CaptureOptions {
                    markup,
                    cursor: None,
                    clip: None,
                },
            )
            .await?;
            out["screenshot"] =
                serde_json::to_value(&shot).map_err(|e| Error::internal(e.to_string()))?;
        }
        Ok(out)
    }

    /// The visible box of the element `target` names (scrolled into view
    /// when outside), for a region screenshot of it.
    pub async fn element_region(
        &self,
        caller: &Caller,
        tab_id: &str,
        target: &crate::plugin::Target,
    ) -> Result<crate::capture::Clip> {
        let tab = self.live_tab(caller, tab_id).await?;
        let _turn = tab.turn(TURN_LIMIT).await?;
        Ok(tab.refs().region_of_target(target).await?)
    }

    /// `GET /tabs/{id}/state`: the browser-use state.
    pub async fn state(&self, caller: &Caller, tab_id: &str) -> Result<Value> {
        let tab = self.live_tab(caller, tab_id).await?;
        let _turn = tab.turn(TURN_LIMIT).await?;
        let refs = tab.refs();
        let mut state = refs
            .number_in_main_world(STATE_FN, vec![json!({ "value": STATE_ELEMENTS })])
            .await?;
        // Frames' elements follow the page's, with the frame's label; their
        // indices are refs numbers like the others (unique in the tab).
        let frames = refs.frame_list().await.unwrap_or_default();
        for (frame, _) in frames.iter().skip(1) {
            let room = STATE_ELEMENTS
                .saturating_sub(state["elements"].as_array().map(Vec::len).unwrap_or(0));
            if room == 0 {
                break;
            }
            // A frame can go away between the listing and the read.
            let Ok(inner) = refs
                .number_in_frame(frame, STATE_FN, vec![json!({ "value": room })])
                .await
            else {
                continue;
            };
            let label = format!("f{}", refs.frame_label(frame));
            if let (Some(Value::Array(found)), Some(Value::Array(all))) =
                (inner.get("elements"), state.get_mut("elements"))
            {
                for element in found {
                    let mut element = element.clone();
                    element["frame"] = json!(label);
                    element["frameUrl"] = inner["url"].clone();
                    all.push(element);
                }
            }
        }
        Ok(state)
    }

    /// `POST /tabs/{id}/state/action`: a browser-use action by element index
    /// (`click`, `input_text` with `clear`, `scroll` by pages), run as the
    /// matching core action so it gets a full envelope.
    pub async fn state_action(
        &self,
        caller: &Caller,
        tab_id: &str,
        action: &Value,
        options: &ActionOptions,
    ) -> Result<Envelope> {
        let invalid = |m: String| Error::new(ErrorCode::InvalidRequest, m);
        let kind = action.get("type").and_then(Value::as_str).ok_or_else(|| {
            invalid("missing field \"type\" (click, input_text or scroll)".into())
        })?;
        let index = || {
            action
                .get("index")
                .and_then(Value::as_u64)
                .filter(|&n| n >= 1)
                .ok_or_else(|| {
                    invalid(format!(
                        "{kind} needs \"index\", an element index from the tab's state"
                    ))
                    .then(NextStep::ElementIndices {
                        tab_id: tab_id.to_string(),
                    })
                })
        };
        let (name, params) = match kind {
            "click" => ("click", json!({ "index": index()? })),
            "input_text" => {
                let text = action
                    .get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid("input_text needs \"text\" (a string)".into()))?;
                let clear = match action.get("clear") {
                    None | Some(Value::Null) => true,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return Err(invalid("\"clear\" must be a boolean".into())),
                };
                let name = if clear { "fill" } else { "type" };
                (name, json!({ "index": index()?, "text": text }))
            }
            "scroll" => {
                let down = match action.get("down") {
                    None | Some(Value::Null) => true,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return Err(invalid("\"down\" must be a boolean".into())),
                };
                let pages = match action.get("pages") {
                    None | Some(Value::Null) => 1.0,
                    Some(v) => v
                        .as_f64()
                        .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
                        .ok_or_else(|| invalid("\"pages\" must be a number in (0, 100]".into()))?,
                };
                let tab = self.live_tab(caller, tab_id).await?;
                let height = tab
                    .session
                    .evaluate_json("innerHeight")
                    .await?
                    .as_f64()
                    .unwrap_or(600.0);
                let delta = (pages * height).round() * if down { 1.0 } else { -1.0 };
                ("scroll", json!({ "delta_y": delta }))
            }
            other => {
                return Err(invalid(format!(
                    "unknown state action type {other:?}; use click, input_text or scroll"
                )));
            }
        };
        self.plugin_action(caller, tab_id, name, params, options)
            .await
    }
}
