use std::fmt;

/// The kind of an expected failure; the host maps each to an HTTP status and
/// an ABP error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 400 `INVALID_REQUEST`: params don't fit the schema.
    InvalidRequest,
    /// 404: the action, element or resource does not exist.
    NotFound,
    /// 404 `SELECTOR_NOT_FOUND`.
    SelectorNotFound,
    /// 400 `ELEMENT_NOT_VISIBLE`.
    ElementNotVisible,
    /// 400 `ELEMENT_NOT_INTERACTABLE`.
    ElementNotInteractable,
    /// 500 `NAVIGATION_FAILED`.
    NavigationFailed,
    /// 400 `EVALUATION_ERROR`.
    EvaluationError,
    /// 500 `TIMEOUT`.
    Timeout,
    /// 500: anything else.
    Failed,
    /// 409 `STALE_REF`: the ref no longer names a live element.
    StaleRef,
}

/// An error a plugin returns to the host: a code and a human-readable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginError {
    /// What kind of failure it is.
    pub code: ErrorCode,
    /// Shown to the client as the error message.
    pub message: String,
}

impl PluginError {
    /// An error with an explicit code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        PluginError { code, message: message.into() }
    }

    /// `invalid-request`: the params are wrong.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, message)
    }

    /// `not-found`: no such action, wait type, element or resource.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// `failed`: anything that is not the caller's fault.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Failed, message)
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)
    }
}

impl std::error::Error for PluginError {}

/// Converts into one world's generated error type; every world has its own
/// copy of `wabp:plugin/types`.
#[cfg(any(feature = "action", feature = "markup", feature = "wait", feature = "policy", feature = "interceptor"))]
macro_rules! into_wit_error {
    ($world:ident) => {
        impl From<PluginError> for crate::bindings::$world::wabp::plugin::types::PluginError {
            fn from(e: PluginError) -> Self {
                use crate::bindings::$world::wabp::plugin::types as wit;
                use wit::ErrorCode as W;
                let code = match e.code {
                    ErrorCode::InvalidRequest => W::InvalidRequest,
                    ErrorCode::NotFound => W::NotFound,
                    ErrorCode::SelectorNotFound => W::SelectorNotFound,
                    ErrorCode::ElementNotVisible => W::ElementNotVisible,
                    ErrorCode::ElementNotInteractable => W::ElementNotInteractable,
                    ErrorCode::NavigationFailed => W::NavigationFailed,
                    ErrorCode::EvaluationError => W::EvaluationError,
                    ErrorCode::Timeout => W::Timeout,
                    ErrorCode::Failed => W::Failed,
                    ErrorCode::StaleRef => W::StaleRef,
                };
                wit::PluginError { code, message: e.message }
            }
        }
    };
}

#[cfg(feature = "action")]
into_wit_error!(action);
#[cfg(feature = "markup")]
into_wit_error!(markup);
#[cfg(feature = "wait")]
into_wit_error!(wait);
#[cfg(feature = "policy")]
into_wit_error!(policy);
#[cfg(feature = "interceptor")]
into_wit_error!(interceptor);

#[cfg(feature = "action")]
impl From<crate::host::HostError> for PluginError {
    fn from(e: crate::host::HostError) -> Self {
        use crate::host::HostError;
        match e {
            HostError::Invalid(m) => PluginError::invalid(m),
            HostError::Failed(m) => PluginError::failed(m),
            HostError::Denied(m) => PluginError::failed(format!("capability denied: {m}")),
            HostError::StaleRef(m) => PluginError::new(ErrorCode::StaleRef, m),
            HostError::SelectorNotFound(m) => PluginError::new(ErrorCode::SelectorNotFound, m),
            HostError::ElementNotVisible(m) => PluginError::new(ErrorCode::ElementNotVisible, m),
            HostError::ElementNotInteractable(m) => PluginError::new(ErrorCode::ElementNotInteractable, m),
        }
    }
}
