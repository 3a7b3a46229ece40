//! Errors as a frontend says them. The core says what went wrong and what
//! the client can do next ([`NextStep`]) in the engine's terms; here each
//! frontend's voice names the route (REST) or the tool (MCP, the agent's
//! tools) that does it. An internal failure is never described to the
//! client: the text carries an id, and the log has the message under it.

use wabp_core::{Error, ErrorCode, NextStep};

/// Who reads the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Voice {
    /// A REST client: routes under `/api/v1`.
    Rest,
    /// A model or an MCP client: tools.
    Tools,
}

/// The engine's own unexpected failures (a browser command that broke, a
/// record that could not be written), whose message is for the operator's
/// log, not the client (paths, browser output). Failures the client can act
/// on keep their words: a plugin's (its author needs them), a browser that
/// could not start with the options the client gave (`BROWSER_INIT_FAILED`
/// names the path that is missing), a browser not ready or a timeout
/// (states, not failures).
pub fn is_internal(code: ErrorCode) -> bool {
    code == ErrorCode::Internal
}

/// How `voice` does `next`.
pub fn next_step(next: &NextStep, voice: Voice) -> String {
    match (next, voice) {
        (NextStep::AnswerDialog { tab_id }, Voice::Rest) => {
            format!("POST /api/v1/tabs/{tab_id}/dialog/accept or /dismiss")
        }
        (NextStep::AnswerDialog { tab_id }, Voice::Tools) => {
            format!("browser_dialog with tab_id {tab_id:?} and action accept or dismiss")
        }
        (NextStep::Snapshot { tab_id }, Voice::Rest) => {
            format!("GET /api/v1/tabs/{tab_id}/snapshot")
        }
        (NextStep::Snapshot { tab_id }, Voice::Tools) => {
            format!("browser_snapshot with tab_id {tab_id:?}")
        }
        (NextStep::ElementIndices { tab_id }, Voice::Rest) => {
            format!("GET /api/v1/tabs/{tab_id}/state")
        }
        (NextStep::ElementIndices { .. }, Voice::Tools) => {
            "the indices come from the page's state, which is read over REST".into()
        }
        (NextStep::TabScreenshot { tab_id }, Voice::Rest) => {
            format!("POST or GET /api/v1/tabs/{tab_id}/screenshot")
        }
        (NextStep::TabScreenshot { tab_id }, Voice::Tools) => {
            format!("browser_screenshot with tab_id {tab_id:?}")
        }
        (NextStep::ChooseOption, Voice::Rest) => "POST /api/v1/select/{id}".into(),
        (NextStep::ChooseOption, Voice::Tools) => "browser_select".into(),
        (NextStep::StartBrowser, Voice::Rest) => "POST /api/v1/browser/start".into(),
        (NextStep::StartBrowser, Voice::Tools) => "browser with action \"start\"".into(),
        (NextStep::BrowserStatus, Voice::Rest) => "GET /api/v1/browser/status".into(),
        (NextStep::BrowserStatus, Voice::Tools) => "try again in a moment".into(),
        (NextStep::AgentInputMode, Voice::Rest) => {
            "POST /api/v1/browser/input-mode {\"input_mode\": \"agent\"}".into()
        }
        (NextStep::AgentInputMode, Voice::Tools) => {
            "the person at the engine hands the browser back to the agent".into()
        }
        (NextStep::ListActions, Voice::Rest) => "GET /api/v1/plugins".into(),
        (NextStep::ListActions, Voice::Tools) => "list the tools again".into(),
    }
}

/// The error's text for `voice`: its message and, in brackets, how to do
/// its next step; for an internal failure, "internal error" and the id
/// under which the log keeps the message.
pub fn said(error: &Error, voice: Voice) -> String {
    if is_internal(error.code) {
        let id = wabp_core::ids::random_id("err");
        tracing::error!(error_id = %id, code = error.code.as_str(), "{}", error.message);
        return format!(
            "internal error ({}); the engine's log has it under {id}",
            error.code.as_str()
        );
    }
    match &error.next {
        Some(next) => format!("{} ({})", error.message, next_step(next, voice)),
        None => error.message.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_voice_names_its_own_way_forward() {
        let error = Error::dialog_blocks("tab_1");
        let rest = said(&error, Voice::Rest);
        let tools = said(&error, Voice::Tools);
        assert!(
            rest.contains("POST /api/v1/tabs/tab_1/dialog/accept"),
            "{rest}"
        );
        assert!(
            tools.contains("browser_dialog") && !tools.contains("POST"),
            "{tools}"
        );
        assert!(rest.starts_with(&error.message));
    }

    #[test]
    fn internal_failures_are_not_described() {
        let error = Error::internal("chromium at /opt/secret/path said no");
        let text = said(&error, Voice::Rest);
        assert!(!text.contains("/opt/secret"), "{text}");
        assert!(text.contains("err_"), "{text}");
        let plugin = Error::new(ErrorCode::PluginFailed, "plugin shop trapped");
        assert_eq!(said(&plugin, Voice::Tools), "plugin shop trapped");
    }

    /// Every tool a next step names is one the catalogue lists.
    #[test]
    fn tools_named_are_tools() {
        let catalogue = crate::ops::fixed();
        let tab_id = "t".to_string();
        for next in [
            NextStep::AnswerDialog {
                tab_id: tab_id.clone(),
            },
            NextStep::Snapshot {
                tab_id: tab_id.clone(),
            },
            NextStep::TabScreenshot { tab_id },
            NextStep::ChooseOption,
            NextStep::StartBrowser,
        ] {
            let text = next_step(&next, Voice::Tools);
            let tool = text.split_whitespace().next().unwrap();
            assert!(!text.contains("/api/v1"), "{text}");
            assert!(
                catalogue.iter().any(|op| op.tool.as_deref() == Some(tool)),
                "{tool} is not a tool"
            );
        }
    }
}
