//! Execution control (a tab paused or running, its virtual time) and the
//! input mode: in human mode a person uses the browser and every frozen
//! page runs; back in agent mode the pages it thawed freeze again.

use parking_lot::Mutex;
use serde::Serialize;

use super::Engine;
use super::TURN_LIMIT;
use crate::caller::Caller;
use crate::error::{Error, ErrorCode, NextStep, Result};
use crate::tab::frames::ExecutionState;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum InputMode {
    Agent,
    Human,
}

/// Who drives the browser, the tabs people took over one by one, and the
/// tabs human mode or a take-over thawed.
pub(crate) struct InputModes {
    mode: Mutex<InputMode>,
    /// Tab id → who took it over (the web UI's take-over).
    taken_over: Mutex<std::collections::HashMap<String, String>>,
    /// Refrozen when the agent is back.
    thawed_for_human: Mutex<Vec<String>>,
}

impl Default for InputModes {
    fn default() -> Self {
        InputModes {
            mode: Mutex::new(InputMode::Agent),
            taken_over: Mutex::new(Default::default()),
            thawed_for_human: Mutex::new(Vec::new()),
        }
    }
}

impl InputModes {
    pub(crate) fn mode(&self) -> InputMode {
        *self.mode.lock()
    }

    /// The mode before.
    fn switch(&self, mode: InputMode) -> InputMode {
        std::mem::replace(&mut *self.mode.lock(), mode)
    }

    pub(super) fn thawed(&self, tab_id: &str) {
        let mut thawed = self.thawed_for_human.lock();
        if !thawed.iter().any(|t| t == tab_id) {
            thawed.push(tab_id.to_string());
        }
    }

    /// The thawed tabs the agent may freeze again: not those a person
    /// still holds.
    fn take_thawed(&self) -> Vec<String> {
        let taken = self.taken_over.lock();
        let mut thawed = self.thawed_for_human.lock();
        let (held, back): (Vec<String>, Vec<String>) =
            thawed.drain(..).partition(|t| taken.contains_key(t));
        *thawed = held;
        back
    }

    /// Whether `tab_id` was thawed for people (and is no longer listed).
    pub(super) fn take_thawed_one(&self, tab_id: &str) -> bool {
        let mut thawed = self.thawed_for_human.lock();
        let before = thawed.len();
        thawed.retain(|t| t != tab_id);
        thawed.len() != before
    }

    /// False when it was taken over already.
    pub(super) fn take_over(&self, tab_id: &str, by: &str) -> bool {
        self.taken_over
            .lock()
            .insert(tab_id.to_string(), by.to_string())
            .is_none()
    }

    /// False when it was not taken over.
    pub(super) fn hand_back(&self, tab_id: &str) -> bool {
        self.taken_over.lock().remove(tab_id).is_some()
    }

    pub(super) fn taken_over_by(&self, tab_id: &str) -> Option<String> {
        self.taken_over.lock().get(tab_id).cloned()
    }
}

impl Engine {
    pub fn input_mode(&self) -> InputMode {
        self.input.mode()
    }

    pub(crate) fn ensure_agent_mode(&self) -> Result<()> {
        match self.input_mode() {
            InputMode::Agent => Ok(()),
            InputMode::Human => Err(Error::new(
                ErrorCode::HumanMode,
                "input mode is \"human\": actions are blocked until the input mode is \"agent\" again",
            )
            .then(NextStep::AgentInputMode)),
        }
    }

    /// As [`Engine::ensure_agent_mode`], and `tab_id` is not held by a
    /// person who took it over.
    pub(crate) fn ensure_agent_for(&self, tab_id: &str) -> Result<()> {
        self.ensure_agent_mode()?;
        match self.input.taken_over_by(tab_id) {
            None => Ok(()),
            Some(by) => Err(Error::new(
                ErrorCode::HumanMode,
                format!(
                    "tab {tab_id} is taken over by a person ({by}) in the web UI: the agent's actions on it wait until it is handed back"
                ),
            )),
        }
    }

    pub async fn execution(&self, caller: &Caller, tab_id: &str) -> Result<ExecutionState> {
        let tab = self.tab(caller, tab_id)?;
        let state = tab.frames.execution.lock().await.state();
        Ok(state)
    }

    /// `POST /execution`: enables control on first use, then pauses or resumes.
    pub async fn set_execution(
        &self,
        caller: &Caller,
        tab_id: &str,
        paused: bool,
        initial_virtual_time: Option<f64>,
    ) -> Result<ExecutionState> {
        self.ensure_agent_for(tab_id)?;
        let tab = self.live_tab(caller, tab_id).await?;
        let _turn = tab.turn(TURN_LIMIT).await?;
        let enabled = tab.frames.execution.lock().await.enabled;
        if !enabled {
            tab.driver().enable(initial_virtual_time).await?;
        }
        if paused {
            tab.driver().freeze().await?;
        } else {
            tab.driver().thaw().await?;
        }
        let state = tab.frames.execution.lock().await.state();
        Ok(state)
    }

    /// Human mode resumes every frozen page so a person can use it; agent
    /// mode freezes again the ones it resumed.
    pub async fn set_input_mode(&self, mode: InputMode) -> Result<()> {
        let previous = self.input.switch(mode);
        if previous == mode {
            return Ok(());
        }
        let tabs = self.tabs.all();
        match mode {
            InputMode::Human => {
                for tab in tabs {
                    if tab.driver().is_frozen().await {
                        match tab.driver().thaw().await {
                            Ok(()) => self.input.thawed(&tab.id),
                            Err(err) => {
                                tracing::warn!(tab = %tab.id, "not thawed for human mode: {}", err.message)
                            }
                        }
                    }
                }
            }
            InputMode::Agent => {
                let thawed = self.input.take_thawed();
                for tab in tabs.iter().filter(|t| thawed.contains(&t.id)) {
                    if let Err(err) = tab.driver().freeze().await {
                        tracing::warn!(tab = %tab.id, "not refrozen for agent mode: {}", err.message);
                    }
                    tab.set_last_frame(None);
                }
            }
        }
        Ok(())
    }
}
