//! The tab as the action loop and the plugins see it: `ActionTab` (what
//! the loop needs) and `PageHost` (the host capabilities a plugin calls,
//! after the plugin host checked its grants).

use super::*;
use crate::viewport::{VIEWPORT_JS, parse_viewport};

/// The time the document's finite running animations and transitions still
/// take, in ms (delays and end delays included; endless ones aside).
const ANIMATIONS_LEFT_JS: &str = include_str!("js/animations_left.js");

/// What the action loop needs of a tab (see `action.rs`).
#[async_trait]
impl crate::action::ActionTab for Tab {
    fn id(&self) -> &str {
        &self.id
    }
    fn owner(&self) -> Option<String> {
        Tab::owner(self)
    }
    fn in_flight_now(&self) -> Vec<crate::plugin::WaitSignal> {
        Tab::in_flight_now(self)
    }
    fn take_uncovered_navigation(&self) -> Option<String> {
        self.navigation.lock().take_uncovered()
    }
    fn navigations_seen(&self) {
        self.navigation.lock().seen_if_loaded();
    }
    fn loading(&self) -> bool {
        !self.loaded()
    }
    async fn turn(&self, limit: Duration) -> Result<crate::turn::ActionTurn<'_>> {
        Tab::turn(self, limit).await
    }
    fn invalidate_snapshot(&self) {
        self.bump_epoch();
    }
    fn pointer(&self) -> Option<(f64, f64)> {
        Tab::pointer(self)
    }
    fn dialog_pending(&self) -> bool {
        self.pending_dialog().is_some()
    }
    fn page_failure(&self) -> Option<String> {
        self.session.failure()
    }
    fn set_action_deadline(&self, deadline: Option<std::time::Instant>) {
        self.session.set_action_deadline(deadline);
    }
    fn take_noted(&self) -> Vec<crate::events::TabEvent> {
        Tab::take_noted(self)
    }
    fn last_frame(&self) -> Option<CachedFrame> {
        Tab::last_frame(self)
    }
    fn set_last_frame(&self, frame: Option<CachedFrame>) {
        Tab::set_last_frame(self, frame)
    }
    fn subscribe(&self) -> broadcast::Receiver<TabSignal> {
        Tab::subscribe(self)
    }
    async fn animations_left_ms(&self) -> Option<f64> {
        self.session
            .evaluate_isolated(ANIMATIONS_LEFT_JS)
            .await
            .ok()
            .and_then(|v| v.as_f64())
    }
    async fn thaw(&self) -> Result<()> {
        self.driver().thaw().await
    }
    async fn freeze(&self) -> Result<bool> {
        self.driver().freeze().await
    }
    async fn advance_clock(
        &self,
        budget_ms: f64,
        until_ms: f64,
    ) -> Result<Option<crate::action::ClockStep>> {
        Ok(self
            .clock_step(budget_ms, until_ms, false)
            .await?
            .map(|(step, _)| step))
    }
    async fn settle_clock(
        &self,
        budget_ms: f64,
        until_ms: f64,
    ) -> Result<Option<(crate::action::ClockStep, bool)>> {
        self.clock_step(budget_ms, until_ms, true).await
    }
    fn fast_forward_after(&self) -> Duration {
        // What a dispatch sets off in the page's own renderer (a request, a
        // navigation, a popup, a file chooser), and what the messages it
        // posted set off (the mark then answers a task later, `page_clock.js`),
        // reaches the engine before the mark's answer, which comes after it
        // on the same session (measured: every time, a file chooser by 0.07
        // ms at least); 1 ms more is a margin. Out-of-process frames signal through sessions of their
        // own (a select or a file chooser there comes by the browser),
        // later than the page's own events.
        let out_of_process = self
            .session
            .frame_targets()
            .is_some_and(|targets| !targets.roots().is_empty());
        Duration::from_millis(if out_of_process { 60 } else { 1 })
    }
    async fn mark_clock(&self) -> Result<bool> {
        if self.pending_dialog().is_some() {
            return Ok(false);
        }
        let marked = self.driver().mark().await;
        // What the dispatch set off (a request its click started) is
        // signalled before the first fast-forward, however late the pump runs.
        self.catch_up().await;
        marked
    }
    async fn capture(
        &self,
        registry: &dyn crate::plugin::PluginRegistry,
        options: &crate::capture::CaptureOptions,
    ) -> Result<(
        crate::capture::Screenshot,
        ViewportInfo,
        crate::capture::CaptureTiming,
    )> {
        let (shot, layout, timing) =
            capture::take_screenshot(&self.driver(), &self.refs(), registry, options).await?;
        Ok((shot, layout.viewport, timing))
    }
    async fn viewport(&self) -> Result<(ViewportInfo, f64)> {
        // Read as the page froze, if it is frozen since: it can't have moved.
        let value = match self.frames.frozen_viewport() {
            Some(value) => value,
            None => self.session.evaluate_json(VIEWPORT_JS).await?,
        };
        Ok((parse_viewport(&value), crate::clock::page_clock(&value)))
    }
    async fn bodies_settled(&self, limit: Duration) {
        Tab::bodies_settled(self, limit).await
    }
    async fn popups_settled(&self, limit: Duration) {
        Tab::popups_settled(self, limit).await
    }
    async fn focus_is_secret(&self) -> bool {
        // Out of the page's reach (an isolated world); unknown counts as
        // secret.
        match tokio::time::timeout(
            Duration::from_secs(2),
            self.session.evaluate_isolated(FOCUS_IS_SECRET_JS),
        )
        .await
        {
            Ok(Ok(Value::Bool(secret))) => secret,
            _ => true,
        }
    }
    fn network_calls_since(&self, since_ms: i64, types: &[String]) -> Vec<NetworkCall> {
        Tab::network_calls_since(self, since_ms, types)
    }
    fn console_since(&self, since_ms: f64) -> Vec<crate::action::record::ConsoleMessage> {
        Tab::console_since(self, since_ms)
    }
}

impl Tab {
    /// One fast-forward of a wait (see `ActionTab::advance_clock`); with
    /// `settle`, one that freezes the page when nothing came due (see
    /// `ActionTab::settle_clock`). `None` while a dialog holds the page.
    async fn clock_step(
        &self,
        budget_ms: f64,
        until_ms: f64,
        settle: bool,
    ) -> Result<Option<(crate::action::ClockStep, bool)>> {
        if self.pending_dialog().is_some() {
            return Ok(None);
        }
        let driver = self.driver();
        let step = if settle {
            driver.settle(budget_ms, until_ms).await?
        } else {
            driver
                .advance(budget_ms, until_ms)
                .await?
                .map(|step| (step, false))
        };
        // Callbacks ran: what they started (a request, a navigation) is
        // signalled before the wait goes on, however late the pump runs.
        if step.is_some_and(|(step, _)| step.callbacks > 0) {
            self.catch_up().await;
        }
        Ok(step)
    }
}

/// Calls other than input events first await the answer of a mouse move
/// sent ahead of it (see `Tab::mouse`): what the move set off comes first.
#[async_trait]
impl PageHost for Tab {
    async fn mouse_move(&self, x: f64, y: f64) -> HostResult<()> {
        Ok(self
            .mouse(
                DispatchMouseEventType::MouseMoved,
                x,
                y,
                MouseButton::None,
                0,
                Modifiers::default(),
            )
            .await?)
    }
    async fn mouse_down(
        &self,
        x: f64,
        y: f64,
        button: MouseButton,
        click_count: u32,
        modifiers: Modifiers,
    ) -> HostResult<()> {
        Ok(self
            .mouse(
                DispatchMouseEventType::MousePressed,
                x,
                y,
                button,
                click_count,
                modifiers,
            )
            .await?)
    }
    async fn mouse_up(
        &self,
        x: f64,
        y: f64,
        button: MouseButton,
        click_count: u32,
        modifiers: Modifiers,
    ) -> HostResult<()> {
        Ok(self
            .mouse(
                DispatchMouseEventType::MouseReleased,
                x,
                y,
                button,
                click_count,
                modifiers,
            )
            .await?)
    }
    async fn mouse_wheel(
        &self,
        x: f64,
        y: f64,
        delta_x: f64,
        delta_y: f64,
        modifiers: Modifiers,
    ) -> HostResult<()> {
        self.input_answered().await?;
        super::input::check_point(x, y)?;
        super::input::check_point(delta_x, delta_y)?;
        let params = DispatchMouseEventParams::builder()
            .r#type(DispatchMouseEventType::MouseWheel)
            .x(x)
            .y(y)
            .delta_x(delta_x)
            .delta_y(delta_y)
            .modifiers(modifiers.union(self.modifiers_held()).cdp_mask())
            .build()
            .map_err(HostError::Failed)?;
        self.set_pointer(x, y);
        self.session
            .execute_unless_dialog(params, Some(&self.frames.nudge))
            .await?;
        // The compositor scrolls on its own thread and answers the event at
        // once; the page's script (and the envelope's scroll state) sees the
        // new offset only from its next frame on. An animation frame of the
        // engine's world comes after that (the page's own may be held).
        let next_frame = self
            .session
            .evaluate_isolated("new Promise(done => requestAnimationFrame(() => done(0)))");
        if tokio::time::timeout(WHEEL_SETTLE_LIMIT, next_frame)
            .await
            .is_err()
        {
            tracing::debug!(tab = %self.id, "no frame after a wheel event");
        }
        Ok(())
    }
    async fn key_down(&self, key: &str, modifiers: Modifiers) -> HostResult<()> {
        Ok(self
            .key(DispatchKeyEventType::KeyDown, key, modifiers)
            .await?)
    }
    async fn key_up(&self, key: &str, modifiers: Modifiers) -> HostResult<()> {
        Ok(self
            .key(DispatchKeyEventType::KeyUp, key, modifiers)
            .await?)
    }
    async fn key_press(&self, key: &str, modifiers: Modifiers) -> HostResult<()> {
        if key_definition(key).is_none() && key.chars().count() > 1 {
            return Err(HostError::Invalid(format!("unknown key {key:?}")));
        }
        if key_definition(key).is_none() {
            // A character with no key (e.g. a control character): type it.
            return self.insert_text(key).await;
        }
        // Sent together: the session keeps their order, the press and the
        // release are one round trip, and the release's answer comes after
        // the press was handled. Biased and unconstrained, so that the
        // first poll sends both, the press first.
        let (down, up) = tokio::task::unconstrained(async {
            tokio::join!(
                biased;
                self.key(DispatchKeyEventType::KeyDown, key, modifiers),
                self.key(DispatchKeyEventType::KeyUp, key, modifiers)
            )
        })
        .await;
        down?;
        Ok(up?)
    }
    async fn insert_text(&self, text: &str) -> HostResult<()> {
        self.input_answered().await?;
        // Chromium's editing inserts a text line by line, each line break
        // costing more than the last (2,000 lines: 14 s). Into a focused
        // <textarea> a long many-line text goes in one step instead, as the
        // same `input` event; anywhere else, through the editor.
        if text.len() > LONG_INSERT && text.contains('\n') {
            let arg = serde_json::to_string(text).map_err(|e| HostError::Failed(e.to_string()))?;
            if let Ok(Value::Bool(true)) = self
                .session
                .evaluate_isolated(&format!("({INSERT_INTO_TEXTAREA_JS})({arg})"))
                .await
            {
                return Ok(());
            }
        }
        self.session
            .execute_unless_dialog(InsertTextParams::new(text), Some(&self.frames.nudge))
            .await?;
        Ok(())
    }
    async fn pause(&self, ms: u32) -> HostResult<()> {
        self.input_answered().await?;
        if ms == 0 {
            return Ok(());
        }
        match self.driver().pass_time(f64::from(ms)).await {
            Ok(true) => {}
            // No page clock here, or none to ask any more (a keystroke's
            // navigation replaced the document): the time passes for real.
            Ok(false) | Err(_) => tokio::time::sleep(Duration::from_millis(u64::from(ms))).await,
        }
        Ok(())
    }
    async fn query_selector_all(&self, selector: &str) -> HostResult<Vec<ElementBox>> {
        self.input_answered().await?;
        let function = format!(
            "(sel) => {{ {BOX_OF}; let els; try {{ els = Array.from(document.querySelectorAll(sel)).slice(0, 1000); }} catch (e) {{ return {{ error: 'invalid selector ' + JSON.stringify(sel) + ': ' + e.message }}; }} return els.map(boxOf); }}"
        );
        let value = self
            .call_page(&function, &Value::String(selector.to_string()))
            .await?;
        if let Some(err) = page_error(&value) {
            return Err(err);
        }
        Ok(value
            .as_array()
            .map(|a| a.iter().filter_map(parse_box).collect())
            .unwrap_or_default())
    }
    async fn element_at(&self, x: f64, y: f64) -> HostResult<Option<ElementBox>> {
        self.input_answered().await?;
        let function = format!(
            "(p) => {{ {BOX_OF}; const el = document.elementFromPoint(p[0], p[1]); return el ? boxOf(el) : null; }}"
        );
        let value = self
            .call_page(&function, &serde_json::json!([x, y]))
            .await?;
        Ok(parse_box(&value))
    }
    async fn viewport(&self) -> HostResult<ViewportInfo> {
        self.input_answered().await?;
        Ok(parse_viewport(
            &self.session.evaluate_json(VIEWPORT_JS).await?,
        ))
    }
    async fn scroll_into_view(&self, selector: &str) -> HostResult<ElementBox> {
        self.input_answered().await?;
        let function = format!(
            "(sel) => {{ {BOX_OF}; let el; try {{ el = document.querySelector(sel); }} catch (e) {{ return {{ error: 'invalid selector: ' + e.message }}; }} if (!el) return {{ error: 'no element matches ' + JSON.stringify(sel) }}; el.scrollIntoView({{ block: 'center', inline: 'center', behavior: 'instant' }}); return boxOf(el); }}"
        );
        let value = self
            .call_page(&function, &Value::String(selector.to_string()))
            .await?;
        if let Some(err) = page_error(&value) {
            return Err(err);
        }
        parse_box(&value).ok_or_else(|| HostError::Failed("no element box".into()))
    }
    async fn locate(&self, target: &Target) -> HostResult<Located> {
        self.input_answered().await?;
        self.refs().locate_target(target).await
    }
    async fn focus(&self, target: &Target, select_all: bool) -> HostResult<ElementBox> {
        self.input_answered().await?;
        self.refs().focus_target(target, select_all).await
    }
    async fn dispatch_change(&self, target: &Target) -> HostResult<()> {
        self.input_answered().await?;
        self.refs().dispatch_change_on(target).await
    }
    async fn set_value(&self, target: &Target, value: &str) -> HostResult<bool> {
        self.input_answered().await?;
        self.refs().set_value_on(target, value).await
    }
    async fn value_of(&self, target: &Target) -> HostResult<Option<String>> {
        self.input_answered().await?;
        self.refs().value_of(target).await
    }
    async fn evaluate(&self, expression: &str) -> HostResult<String> {
        self.input_answered().await?;
        let (value, _) = self.session.evaluate_value(expression).await?;
        Ok(value.to_string())
    }
    async fn navigate(&self, url: &str, referrer: Option<&str>) -> HostResult<()> {
        self.input_answered().await?;
        Ok(self.navigate_to(url, referrer, false).await?)
    }
    async fn back(&self) -> HostResult<()> {
        self.input_answered().await?;
        Ok(self.history_step(-1).await?)
    }
    async fn forward(&self) -> HostResult<()> {
        self.input_answered().await?;
        Ok(self.history_step(1).await?)
    }
    async fn reload(&self) -> HostResult<()> {
        self.input_answered().await?;
        Ok(self.reload_page().await?)
    }
}

/// Whether the deepest focused element (through shadow roots and
/// same-origin frames) takes a secret.
const FOCUS_IS_SECRET_JS: &str = r#"(() => {
  let e = document.activeElement;
  for (let depth = 0; e && depth < 32; depth++) {
    let inner = null;
    try { inner = (e.shadowRoot && e.shadowRoot.activeElement) || (e.contentDocument && e.contentDocument.activeElement); } catch (_) {}
    if (!inner) break;
    e = inner;
  }
  if (!e) return false;
  const auto = (e.getAttribute('autocomplete') || '').toLowerCase();
  return (e.localName === 'input' && e.type === 'password') || /password|cc-number|cc-csc|one-time-code/.test(auto);
})()"#;

/// Texts longer than this (with line breaks) skip the editor's line-by-line
/// insertion where they can.
const LONG_INSERT: usize = 2000;

/// Inserts a text at the caret of the focused `<textarea>` (through open
/// shadow roots), replacing the selection, and fires `input` as typing
/// would; false when the focus is elsewhere.
const INSERT_INTO_TEXTAREA_JS: &str = r#"(text) => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!(el instanceof HTMLTextAreaElement) || el.readOnly || el.disabled) return false;
  el.setRangeText(text, el.selectionStart, el.selectionEnd, 'end');
  el.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType: 'insertText', data: text }));
  return true;
}"#;

/// How long a wheel event waits for the frame that shows the page its
/// scroll: a few frames on a busy page; past it the action goes on.
const WHEEL_SETTLE_LIMIT: Duration = Duration::from_millis(200);

/// What the engine's tab table knows of a tab.
impl crate::tab_table::Listed for Tab {
    fn id(&self) -> &str {
        &self.id
    }
    fn owner(&self) -> Option<String> {
        Tab::owner(self)
    }
    fn target(&self) -> &str {
        self.target_id.inner()
    }
    fn has_frame(&self, frame: &str) -> bool {
        Tab::has_frame(self, frame)
    }
    fn pinned(&self) -> bool {
        Tab::pinned(self)
    }
}
