//! The tab's input devices: the pointer, the mouse buttons and modifier
//! keys held, as a component (`Input`, behind its own lock), and the mouse
//! and key events the tab sends with them. Held buttons and keys outlast an
//! action: a drag, a selection or Shift held spans actions, as with a real
//! mouse and keyboard.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    MouseButton as CdpMouseButton,
};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::task::JoinHandle;

use super::Tab;
use crate::error::{Error, Result};
use crate::keys::{key_definition, key_definition_with};
use crate::plugin::{Modifiers, MouseButton};

/// How long after a modifier or middle click a new page with no opener is
/// taken for the one it opened.
const NEW_PAGE_EXPECTED_FOR: Duration = Duration::from_secs(3);
/// How long an action waits for the page a modifier click on a link opens.
const LINK_PAGE_LIMIT: Duration = Duration::from_secs(1);

/// What the input devices hold.
#[derive(Debug, Default)]
struct Held {
    pointer: Option<(f64, f64)>,
    /// Mouse buttons pressed and not yet released (DOM `buttons` bits: 1
    /// left, 2 right, 4 middle): a move carries them, so a drag, a slider or
    /// a text selection made over several actions sees the button held.
    buttons_held: i64,
    /// Modifier keys pressed with `keyboard/down` and not yet released:
    /// every later key, click, move and wheel event carries them, as a
    /// keyboard does (Shift held + ArrowLeft selects).
    modifiers_held: Modifiers,
    /// Until when a new page with no opener is this tab's: a click with
    /// Control, Meta or Shift, or with the middle button, opens a link in a
    /// new tab or window, which the browser creates without an opener.
    new_page_expected_until: Option<std::time::Instant>,
}

/// The tab's input devices.
#[derive(Debug, Default)]
pub(crate) struct Input {
    held: Mutex<Held>,
}

/// The answer of a move sent ahead, if one is kept in `slot`; the slot is
/// emptied only once it answered, so a waiter that gives up leaves it there.
async fn answer_of(slot: &mut Option<JoinHandle<Result<()>>>) -> Result<()> {
    let Some(answer) = slot.as_mut() else {
        return Ok(());
    };
    let answered = answer.await;
    *slot = None;
    answered.map_err(|e| Error::internal(format!("a mouse move's task: {e}")))?
}

impl Tab {
    /// Where the pointer is, once it moved.
    pub fn pointer(&self) -> Option<(f64, f64)> {
        self.input.held.lock().pointer
    }

    pub(super) fn set_pointer(&self, x: f64, y: f64) {
        self.input.held.lock().pointer = Some((x, y));
    }

    pub(super) async fn mouse(
        &self,
        kind: DispatchMouseEventType,
        x: f64,
        y: f64,
        button: MouseButton,
        click_count: u32,
        modifiers: Modifiers,
    ) -> Result<()> {
        check_point(x, y)?;
        // Refused before the buttons held change: an event a dialog stops
        // never reaches the page.
        if self.session.dialog_open() {
            return Err(Error::dialog_blocks(&self.id));
        }
        let mut opens_page = false;
        let (cdp_button, buttons, modifiers) = {
            let mut state = self.input.held.lock();
            let modifiers = modifiers.union(state.modifiers_held);
            if kind == DispatchMouseEventType::MouseReleased
                && (modifiers.control
                    || modifiers.meta
                    || modifiers.shift
                    || button == MouseButton::Middle)
            {
                // Set before the release: the browser may announce the new
                // page before the release is answered.
                state.new_page_expected_until =
                    Some(std::time::Instant::now() + NEW_PAGE_EXPECTED_FOR);
                opens_page = true;
            }
            let bit = button_bit(button);
            match kind {
                DispatchMouseEventType::MousePressed => state.buttons_held |= bit,
                DispatchMouseEventType::MouseReleased => state.buttons_held &= !bit,
                _ => {}
            }
            let held = state.buttons_held;
            // A move names the first button held, as a browser reports it.
            let cdp_button = if kind == DispatchMouseEventType::MouseMoved {
                [
                    (1, CdpMouseButton::Left),
                    (2, CdpMouseButton::Right),
                    (4, CdpMouseButton::Middle),
                ]
                .into_iter()
                .find(|(b, _)| held & b != 0)
                .map_or(CdpMouseButton::None, |(_, cdp)| cdp)
            } else {
                cdp_button_of(button)
            };
            (cdp_button, held, modifiers)
        };
        let is_move = kind == DispatchMouseEventType::MouseMoved;
        let params = DispatchMouseEventParams::builder()
            .r#type(kind)
            .x(x)
            .y(y)
            .button(cdp_button)
            .buttons(buttons)
            .click_count(click_count as i64)
            .modifiers(modifiers.cdp_mask())
            .build()
            .map_err(Error::internal)?;
        self.set_pointer(x, y);
        if is_move {
            // A renderer answers a move at its next frame (moves are
            // aligned to frames): up to 16 ms spent on nothing when a press
            // or a key follows, since those queue behind the move in the
            // renderer and flush it. So the move takes its place in the
            // session's order now, and its answer is awaited by the next
            // input event, the plugin's next call to the page (which would
            // not wait for the move) or the end of the dispatch. One move at
            // a time: moves queued together would reach the page coalesced.
            let mut unanswered = self.move_unanswered.lock().await;
            answer_of(&mut unanswered).await?;
            let (session, frames) = (self.session.clone(), self.frames.clone());
            // Unconstrained: a task out of its scheduling budget would
            // otherwise return before the first poll hands the command on.
            let mut send = Box::pin(tokio::task::unconstrained(async move {
                session
                    .execute_unless_dialog(params, Some(&frames.nudge))
                    .await
                    .map(|_| ())
            }));
            // The first poll hands the command to the connection.
            if let std::task::Poll::Ready(sent) = futures::poll!(send.as_mut()) {
                return sent;
            }
            *unanswered = Some(tokio::spawn(send));
            return Ok(());
        }
        self.session
            .execute_unless_dialog(params, Some(&self.frames.nudge))
            .await?;
        if opens_page {
            self.hold_for_link_page(x, y).await;
        }
        self.input_answered().await
    }

    /// After a modifier or middle click: on a link, the action waits
    /// (bounded) for the page the browser opens for it, which it announces
    /// a little after the click is answered; elsewhere no page comes.
    async fn hold_for_link_page(&self, x: f64, y: f64) {
        let on = self
            .session
            .evaluate_isolated(&format!(
                "(() => {{ const e = document.elementFromPoint({x}, {y});                  return !e ? 'none' : e.closest('a[href], area[href]') ? 'link'                  : /^i?frame$/i.test(e.tagName) ? 'frame' : 'none'; }})()"
            ))
            .await;
        match on.ok().as_ref().and_then(Value::as_str) {
            Some("link") => {
                let Some(me) = self.self_ref.upgrade() else {
                    return;
                };
                let adoption = me.popup_adoption();
                tokio::spawn(async move {
                    let until = tokio::time::Instant::now() + LINK_PAGE_LIMIT;
                    while me.new_page_expected() && tokio::time::Instant::now() < until {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    drop(adoption);
                });
            }
            // A link in a frame may open one too: expected, not waited for.
            Some("frame") => {}
            _ => self.input.held.lock().new_page_expected_until = None,
        }
    }

    /// Awaits the answer of a mouse move sent ahead of it (see
    /// [`Tab::mouse`]): its error, if any, is the caller's.
    pub async fn input_answered(&self) -> Result<()> {
        answer_of(&mut *self.move_unanswered.lock().await).await
    }

    /// Whether a page with no opener that appears now may be this tab's
    /// (see `Held::new_page_expected_until`).
    pub fn new_page_expected(&self) -> bool {
        self.input
            .held
            .lock()
            .new_page_expected_until
            .is_some_and(|until| until > std::time::Instant::now())
    }

    /// [`Tab::new_page_expected`], once.
    pub fn take_new_page_expected(&self) -> bool {
        let mut state = self.input.held.lock();
        match state.new_page_expected_until.take() {
            Some(until) => until > std::time::Instant::now(),
            None => false,
        }
    }

    /// Modifier keys held since `keyboard/down`, for events sent outside
    /// [`Tab::mouse`] and [`Tab::key`] (the wheel).
    pub(crate) fn modifiers_held(&self) -> Modifiers {
        self.input.held.lock().modifiers_held
    }

    pub(super) async fn key(
        &self,
        kind: DispatchKeyEventType,
        key: &str,
        modifiers: Modifiers,
    ) -> Result<()> {
        // A press a dialog refuses holds nothing; a release lets go anyway.
        if kind != DispatchKeyEventType::KeyUp && self.session.dialog_open() {
            return Err(Error::dialog_blocks(&self.id));
        }
        // A modifier's own keydown already carries its flag, its keyup no
        // longer does, as a keyboard reports them; the held set changes
        // first.
        let modifiers = {
            let mut state = self.input.held.lock();
            if let Some(def) = key_definition(key) {
                if let Some(modifier) = def.modifier() {
                    state
                        .modifiers_held
                        .set(modifier, kind != DispatchKeyEventType::KeyUp);
                }
            }
            modifiers.union(state.modifiers_held)
        };
        let def = key_definition_with(key, modifiers.shift)
            .ok_or_else(|| Error::invalid(format!("unknown key {key:?}")))?;
        // A held Control/Alt/Meta makes the key a shortcut: it types nothing.
        let text = if modifiers.control || modifiers.alt || modifiers.meta {
            None
        } else {
            def.text.clone()
        };
        let kind = match (&kind, &text) {
            (DispatchKeyEventType::KeyDown, None) => DispatchKeyEventType::RawKeyDown,
            _ => kind,
        };
        let mut builder = DispatchKeyEventParams::builder()
            .r#type(kind.clone())
            .key(def.key.clone())
            .code(def.code.clone())
            .windows_virtual_key_code(def.key_code)
            .native_virtual_key_code(def.key_code)
            .modifiers(modifiers.cdp_mask())
            .location(def.location);
        if kind == DispatchKeyEventType::KeyDown {
            if let Some(text) = &text {
                builder = builder.text(text.clone()).unmodified_text(text.clone());
            }
        }
        self.session
            .execute_unless_dialog(
                builder.build().map_err(Error::internal)?,
                Some(&self.frames.nudge),
            )
            .await?;
        self.input_answered().await
    }
}

/// A button's bit in the DOM's `buttons` mask.
fn button_bit(button: MouseButton) -> i64 {
    match button {
        MouseButton::None => 0,
        MouseButton::Left => 1,
        MouseButton::Right => 2,
        MouseButton::Middle => 4,
    }
}

fn cdp_button_of(button: MouseButton) -> CdpMouseButton {
    match button {
        MouseButton::None => CdpMouseButton::None,
        MouseButton::Left => CdpMouseButton::Left,
        MouseButton::Right => CdpMouseButton::Right,
        MouseButton::Middle => CdpMouseButton::Middle,
    }
}

/// Input coordinates (and wheel deltas) past this many CSS pixels are refused:
/// Chromium stops answering the tab's input after an event far out of range.
const MAX_COORDINATE: f64 = 1_000_000.0;

pub(super) fn check_point(x: f64, y: f64) -> Result<()> {
    if x.is_finite() && y.is_finite() && x.abs() <= MAX_COORDINATE && y.abs() <= MAX_COORDINATE {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "coordinates must be finite numbers within ±{MAX_COORDINATE} px, got ({x:?}, {y:?})"
        )))
    }
}
