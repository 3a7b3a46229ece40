//! What a person watching tabs needs (the web UI): each tab's state at a
//! glance, its latest frame, a screencast while its page runs, and a
//! take-over that keeps the agent off one tab while a person drives it.
//!
//! A screencast costs nothing unless someone watches: it starts with a
//! viewer's stream and stops when that stream is dropped.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::EventScreencastFrame;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::watch;

use super::Engine;
use super::answers::DialogState;
use crate::caller::Caller;
use crate::capture::Screenshot;
use crate::error::{Error, ErrorCode, Result};

/// How long a screencast command or a forwarded input event may take.
const VIEWER_COMMAND_BOUND: Duration = Duration::from_secs(5);

/// What a tab is doing, as a person watching would put it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TabState {
    /// Frozen between actions.
    Paused,
    /// Its page runs (not frozen, or taken over).
    Running,
    /// Loading a document.
    Loading,
    /// A dialog holds it.
    DialogOpen,
    /// It stopped answering; the next operation on it repairs it.
    Broken,
}

/// One of the caller's tabs, for a list people read.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TabOverview {
    pub id: String,
    pub url: String,
    pub title: String,
    pub state: TabState,
    /// Who took it over from the agent, if someone did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taken_over_by: Option<String>,
    /// The dialog that holds it, if one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogState>,
    /// Why it looks broken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// `<select>`s, pickers and file choosers waiting for an answer.
    pub prompts: Vec<PendingPrompt>,
}

/// A prompt the page holds open until someone answers it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PendingPrompt {
    /// Answered by the `select` operation (option indices).
    Select {
        id: String,
        multiple: bool,
        /// `index`, `label`, `selected`, `disabled` of each.
        options: serde_json::Value,
    },
    /// Answered by `datetime_picker` or, for `color`, `color_picker`.
    Picker { id: String, input_type: String },
    /// Answered by `file_chooser` (paths on the engine's machine).
    FileChooser { id: String, multiple: bool },
}

/// A frame of a running page, as the browser's screencast sent it.
#[derive(Debug, Clone)]
pub struct ScreencastFrame {
    /// The JPEG image, base64 (as CDP sends it).
    pub jpeg_base64: Arc<str>,
    /// The page's viewport in CSS pixels, which input coordinates use.
    pub device_width: f64,
    pub device_height: f64,
    /// How many frames this screencast has sent.
    pub number: u64,
}

/// A running screencast: the latest frame, replaced as the browser draws.
/// Dropping it stops the screencast.
pub struct Screencast {
    pub frames: watch::Receiver<Option<ScreencastFrame>>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// Input a person gives a taken-over tab, in the page's CSS pixels.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum HumanInput {
    /// `mousePressed`, `mouseReleased`, `mouseMoved` or `mouseWheel`.
    Mouse {
        event: String,
        x: f64,
        y: f64,
        #[serde(default)]
        button: Option<String>,
        #[serde(default)]
        buttons: Option<u32>,
        #[serde(default)]
        click_count: Option<u32>,
        #[serde(default)]
        modifiers: Option<u32>,
        #[serde(default)]
        delta_x: Option<f64>,
        #[serde(default)]
        delta_y: Option<f64>,
    },
    /// `keyDown`, `keyUp`, `rawKeyDown` or `char`, as a keyboard makes it.
    Key {
        event: String,
        key: String,
        #[serde(default)]
        code: Option<String>,
        #[serde(default)]
        text: Option<String>,
        #[serde(default)]
        key_code: Option<u32>,
        #[serde(default)]
        modifiers: Option<u32>,
    },
    /// Text as an input method or a paste gives it.
    Text { text: String },
}

const MOUSE_EVENTS: [&str; 4] = ["mousePressed", "mouseReleased", "mouseMoved", "mouseWheel"];
const MOUSE_BUTTONS: [&str; 6] = ["none", "left", "middle", "right", "back", "forward"];
const KEY_EVENTS: [&str; 4] = ["keyDown", "keyUp", "rawKeyDown", "char"];
/// Longer than any key name or pasted snippet a person types into a view.
const MAX_TEXT: usize = 10_000;

impl HumanInput {
    /// The CDP command it becomes, or what is wrong with it.
    fn command(&self) -> Result<(&'static str, serde_json::Value)> {
        let invalid = |message: String| Err(Error::invalid(message));
        match self {
            HumanInput::Mouse {
                event,
                x,
                y,
                button,
                buttons,
                click_count,
                modifiers,
                delta_x,
                delta_y,
            } => {
                if !MOUSE_EVENTS.contains(&event.as_str()) {
                    return invalid(format!(
                        "mouse event must be one of {MOUSE_EVENTS:?}, not {event:?}"
                    ));
                }
                let in_page = |v: f64| v.is_finite() && (0.0..=100_000.0).contains(&v);
                if !in_page(*x) || !in_page(*y) {
                    return invalid(format!(
                        "x and y must be page coordinates between 0 and 100000 (got {x}, {y})"
                    ));
                }
                let button = button.as_deref().unwrap_or("none");
                if !MOUSE_BUTTONS.contains(&button) {
                    return invalid(format!(
                        "button must be one of {MOUSE_BUTTONS:?}, not {button:?}"
                    ));
                }
                let delta = |d: Option<f64>| {
                    d.filter(|d| d.is_finite())
                        .unwrap_or(0.0)
                        .clamp(-100_000.0, 100_000.0)
                };
                Ok((
                    "Input.dispatchMouseEvent",
                    json!({
                        "type": event,
                        "x": x,
                        "y": y,
                        "button": button,
                        "buttons": buttons.unwrap_or(0) & 0x1f,
                        "clickCount": click_count.unwrap_or(0).min(3),
                        "modifiers": modifiers.unwrap_or(0) & 0xf,
                        "deltaX": delta(*delta_x),
                        "deltaY": delta(*delta_y),
                    }),
                ))
            }
            HumanInput::Key {
                event,
                key,
                code,
                text,
                key_code,
                modifiers,
            } => {
                if !KEY_EVENTS.contains(&event.as_str()) {
                    return invalid(format!(
                        "key event must be one of {KEY_EVENTS:?}, not {event:?}"
                    ));
                }
                if key.is_empty() || key.len() > 64 {
                    return invalid("key must name a key (1 to 64 bytes)".into());
                }
                let mut params = json!({
                    "type": event,
                    "key": key,
                    "modifiers": modifiers.unwrap_or(0) & 0xf,
                });
                if let Some(code) = code.as_deref().filter(|c| c.len() <= 64) {
                    params["code"] = json!(code);
                }
                if let Some(key_code) = key_code.filter(|k| *k < 256) {
                    params["windowsVirtualKeyCode"] = json!(key_code);
                }
                if let Some(text) = text.as_deref().filter(|t| !t.is_empty() && t.len() <= 16) {
                    params["text"] = json!(text);
                }
                Ok(("Input.dispatchKeyEvent", params))
            }
            HumanInput::Text { text } => {
                if text.len() > MAX_TEXT {
                    return invalid(format!("text is longer than {MAX_TEXT} bytes"));
                }
                Ok(("Input.insertText", json!({ "text": text })))
            }
        }
    }

    /// What the history may keep of it: where a click went, how many
    /// characters were typed, never what (it may be a password).
    pub fn summary(&self) -> Option<serde_json::Value> {
        match self {
            HumanInput::Mouse {
                event,
                x,
                y,
                button,
                ..
            } if event == "mousePressed" => Some(json!({
                "input": "click",
                "x": x.round(),
                "y": y.round(),
                "button": button.as_deref().unwrap_or("left"),
            })),
            HumanInput::Mouse { event, .. } if event == "mouseWheel" => {
                Some(json!({ "input": "scroll" }))
            }
            HumanInput::Key { event, key, .. } if event == "keyDown" || event == "rawKeyDown" => {
                // A printable key says only that a character was typed.
                let named = key.chars().count() > 1;
                Some(json!({
                    "input": "key",
                    "key": if named { key.as_str() } else { "character" },
                }))
            }
            HumanInput::Text { text } => {
                Some(json!({ "input": "text", "characters": text.chars().count() }))
            }
            _ => None,
        }
    }
}

impl Engine {
    /// The engine now serves its API and web UI at `address`: tabs may not
    /// be sent there.
    pub fn serving_at(&self, address: std::net::SocketAddr) {
        self.config.own_addresses.add(address);
        // Tabs opened before the engine listened (the first one).
        let tabs = self.all_tabs();
        tokio::spawn(async move {
            for tab in tabs {
                if let Err(e) = tab.block_own_addresses().await {
                    tracing::warn!(tab = %tab.id, "the engine's own address is not blocked in this tab: {}", e.message);
                }
            }
        });
    }

    /// The caller's tabs with what each is doing.
    pub async fn tab_overview(&self, caller: &Caller) -> Result<Vec<TabOverview>> {
        self.ensure_ready_for(caller)?;
        let mut out = Vec::new();
        for tab in self.tabs_of(caller) {
            out.push(self.overview_of(&tab).await);
        }
        Ok(out)
    }

    /// One of the caller's tabs with what it is doing.
    pub async fn tab_overview_of(&self, caller: &Caller, tab_id: &str) -> Result<TabOverview> {
        let tab = self.tab(caller, tab_id)?;
        Ok(self.overview_of(&tab).await)
    }

    async fn overview_of(&self, tab: &crate::tab::Tab) -> TabOverview {
        let (url, title) = tab.session.info().await.unwrap_or_default();
        let dialog = tab.pending_dialog();
        let failure = tab.session.failure();
        let taken_over_by = self.input.taken_over_by(&tab.id);
        let prompts =
            tab.prompts
                .selects()
                .into_iter()
                .map(|s| PendingPrompt::Select {
                    id: s.id,
                    multiple: s.multiple,
                    options: s.options,
                })
                .chain(
                    tab.prompts
                        .pickers()
                        .into_iter()
                        .map(|p| PendingPrompt::Picker {
                            id: p.id,
                            input_type: p.input_type,
                        }),
                )
                .chain(tab.prompts.file_choosers().into_iter().map(|c| {
                    PendingPrompt::FileChooser {
                        id: c.id,
                        multiple: c.chooser_type == "open_multiple",
                    }
                }))
                .collect();
        let state = if failure.is_some() {
            TabState::Broken
        } else if dialog.is_some() {
            TabState::DialogOpen
        } else if tab.is_loading() {
            TabState::Loading
        } else if taken_over_by.is_none() && tab.driver().is_frozen().await {
            TabState::Paused
        } else {
            TabState::Running
        };
        TabOverview {
            id: tab.id.clone(),
            url,
            title,
            state,
            taken_over_by,
            dialog: dialog.map(|d| DialogState {
                present: true,
                dialog_type: Some(d.dialog_type.clone()),
                message: Some(d.message.clone()),
                default_prompt: Some(d.default_prompt.clone()),
            }),
            failure,
            prompts,
        }
    }

    /// Whether the caller's tab runs: taken over, or not frozen (only a
    /// running page draws frames a screencast can send).
    pub async fn tab_runs(&self, caller: &Caller, tab_id: &str) -> Result<bool> {
        let tab = self.tab(caller, tab_id)?;
        Ok(self.input.taken_over_by(&tab.id).is_some() || !tab.driver().is_frozen().await)
    }

    /// The last frame an action captured on the caller's tab (its
    /// after-screenshot), if one did.
    pub fn latest_frame(&self, caller: &Caller, tab_id: &str) -> Result<Option<Screenshot>> {
        Ok(self
            .tab(caller, tab_id)?
            .last_frame()
            .and_then(|frame| frame.image))
    }

    /// Starts a screencast of the caller's tab: JPEG frames at most
    /// `max_width` × `max_height`, drawn only while its page runs (a frozen
    /// page draws nothing). Each frame is acknowledged at once (holding
    /// acknowledgements stalls the stream and loses the last change) and
    /// only the latest is kept.
    pub async fn screencast(
        &self,
        caller: &Caller,
        tab_id: &str,
        max_width: u32,
        max_height: u32,
    ) -> Result<Screencast> {
        let tab = self.tab(caller, tab_id)?;
        let mut events = tab.session.event_listener::<EventScreencastFrame>().await?;
        tab.session
            .raw_regardless(
                "Page.startScreencast",
                json!({
                    "format": "jpeg",
                    "quality": 60,
                    "maxWidth": max_width,
                    "maxHeight": max_height,
                    "everyNthFrame": 1,
                }),
                VIEWER_COMMAND_BOUND,
            )
            .await?;
        let (frames, latest) = watch::channel(None);
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let session = tab.session.clone();
        tokio::spawn(async move {
            let mut number = 0u64;
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    event = events.next() => {
                        let Some(event) = event else { break };
                        let ack = session.raw_regardless(
                            "Page.screencastFrameAck",
                            json!({ "sessionId": event.session_id }),
                            VIEWER_COMMAND_BOUND,
                        );
                        if ack.await.is_err() {
                            break;
                        }
                        number += 1;
                        let data: &str = event.data.as_ref();
                        frames.send_replace(Some(ScreencastFrame {
                            jpeg_base64: Arc::from(data),
                            device_width: event.metadata.device_width,
                            device_height: event.metadata.device_height,
                            number,
                        }));
                    }
                }
            }
            // The tab may be gone; nothing is left to stop then.
            let _ = session
                .raw_regardless("Page.stopScreencast", json!({}), VIEWER_COMMAND_BOUND)
                .await;
        });
        Ok(Screencast {
            frames: latest,
            _stop: stop,
        })
    }

    /// A person takes the caller's tab over: the agent's actions on it
    /// answer `HUMAN_MODE` until it is handed back, and its page runs so
    /// the person sees and uses it live.
    pub async fn take_over(&self, caller: &Caller, tab_id: &str, by: &str) -> Result<()> {
        let tab = self.live_tab(caller, tab_id).await?;
        let _turn = tab.turn(super::TURN_LIMIT).await?;
        if !self.input.take_over(&tab.id, by) {
            return Ok(());
        }
        if tab.driver().is_frozen().await {
            if let Err(err) = tab.driver().thaw().await {
                self.input.hand_back(&tab.id);
                return Err(err);
            }
            self.input.thawed(&tab.id);
        }
        Ok(())
    }

    /// The agent has the caller's tab again; a page the take-over thawed is
    /// frozen again.
    pub async fn hand_back(&self, caller: &Caller, tab_id: &str) -> Result<()> {
        let tab = self.tab(caller, tab_id)?;
        if !self.input.hand_back(&tab.id) {
            return Ok(());
        }
        if self.input.take_thawed_one(&tab.id) && self.input_mode() == super::InputMode::Agent {
            tab.driver().freeze().await?;
        }
        // What the person did is not the last action's frame.
        tab.set_last_frame(None);
        Ok(())
    }

    /// Who took the caller's tab over, if someone did.
    pub fn taken_over_by(&self, caller: &Caller, tab_id: &str) -> Result<Option<String>> {
        let tab = self.tab(caller, tab_id)?;
        Ok(self.input.taken_over_by(&tab.id))
    }

    /// Forwards a person's input to the caller's tab, which they took over.
    pub async fn human_input(
        &self,
        caller: &Caller,
        tab_id: &str,
        input: &HumanInput,
    ) -> Result<()> {
        let tab = self.tab(caller, tab_id)?;
        if self.input.taken_over_by(&tab.id).is_none() {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!("tab {tab_id} is the agent's: take it over before sending input"),
            ));
        }
        let (method, params) = input.command()?;
        tab.session
            .raw_within(method, params, VIEWER_COMMAND_BOUND)
            .await?;
        Ok(())
    }
}
