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

/// Who drives the browser, and the tabs human mode thawed.
pub(crate) struct InputModes {
    mode: Mutex<InputMode>,
    /// Refrozen when the agent is back.
    thawed_for_human: Mutex<Vec<String>>,
}

impl Default for InputModes {
    fn default() -> Self {
        InputModes {
            mode: Mutex::new(InputMode::Agent),
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

    fn thawed(&self, tab_id: &str) {
        self.thawed_for_human.lock().push(tab_id.to_string());
    }

    fn take_thawed(&self) -> Vec<String> {
        std::mem::take(&mut *self.thawed_for_human.lock())
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
        self.ensure_agent_mode()?;
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
