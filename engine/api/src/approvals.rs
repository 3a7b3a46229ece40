//! Approval policies at the catalogue's door: every operation is put to the
//! loaded policy plugins before it runs. A denial answers 403
//! `POLICY_DENIED`; an "ask" answers 403 `APPROVAL_REQUIRED` with an
//! `approval_id` that an admin decides (`POST /approvals/{id}`), after which
//! the same request sent again with `"approval_id"` runs once. A policy that
//! fails (trap, timeout, error) denies: the door fails closed.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use wabp_core::plugin::{Category, PolicyRequest, Verdict};
use wabp_core::{Caller, Error, ErrorCode, Result};

/// The operations that list and decide approvals (`GET /approvals`,
/// `POST /approvals/{id}`): the policies' own way out, never put to them.
pub(crate) const LIST_OPERATION: &str = "approvals";
pub(crate) const APPROVE_OPERATION: &str = "approve";

/// How long an approval waits for its decision, then for its retry.
const APPROVAL_LIFETIME: Duration = Duration::from_secs(600);
/// Pending approvals kept at most (the oldest go first).
const MAX_APPROVALS: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Pending,
    Approved,
    Rejected,
}

struct Approval {
    operation: String,
    /// The request's input (without `approval_id`), hashed: the retry must
    /// be the same request.
    input: [u8; 32],
    user: Option<String>,
    prompt: String,
    decision: Decision,
    created: Instant,
}

/// `GET /approvals`: the approvals asked for, oldest first.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct PendingApprovals {
    pub approvals: Vec<PendingApproval>,
}

#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct PendingApproval {
    pub approval_id: String,
    /// The operation that asks (`navigate`, `click`, ...).
    pub operation: String,
    /// What the policy asks a person to decide.
    pub prompt: String,
    /// The `userId` whose request it is.
    pub user: Option<String>,
    /// Approved or rejected until the retry uses it.
    pub decision: Decision,
    pub age_ms: u64,
}

/// `POST /approvals/{id}`: the decision taken.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Decided {
    pub approval_id: String,
    pub approved: bool,
    pub operation: String,
    pub prompt: String,
    pub user: Option<String>,
}

/// The approvals asked for and not yet used.
#[derive(Default)]
pub struct Approvals {
    asked: Mutex<HashMap<String, Approval>>,
}

fn input_digest(input: &Value) -> [u8; 32] {
    let mut input = input.clone();
    if let Some(fields) = input.as_object_mut() {
        fields.remove("approval_id");
    }
    // serde_json's maps are ordered: the same input hashes the same.
    Sha256::digest(input.to_string().as_bytes()).into()
}

fn approval_required(id: &str, prompt: &str) -> Error {
    let mut details = Map::new();
    details.insert("approval_required".into(), json!(true));
    details.insert("prompt".into(), json!(prompt));
    details.insert("approval_id".into(), json!(id));
    Error::new(
        ErrorCode::ApprovalRequired,
        format!("Approval required: {prompt}"),
    )
    .with_details(details)
}

fn denied(reason: &str) -> Error {
    Error::new(
        ErrorCode::PolicyDenied,
        format!("Action denied by approval policy: {reason}"),
    )
}

impl Approvals {
    fn asked(&self) -> parking_lot::MutexGuard<'_, HashMap<String, Approval>> {
        let mut asked = self.asked.lock();
        asked.retain(|_, a| a.created.elapsed() < APPROVAL_LIFETIME);
        asked
    }

    fn ask(
        &self,
        engine: &wabp_core::ids::EngineId,
        operation: &str,
        input: &Value,
        caller: &Caller,
        prompt: &str,
    ) -> Error {
        let id = engine.new_id("apr");
        let mut asked = self.asked();
        if asked.len() >= MAX_APPROVALS
            && let Some(oldest) = asked
                .iter()
                .min_by_key(|(_, a)| a.created)
                .map(|(id, _)| id.clone())
        {
            asked.remove(&oldest);
        }
        asked.insert(
            id.clone(),
            Approval {
                operation: operation.to_string(),
                input: input_digest(input),
                user: caller.user_id().map(str::to_string),
                prompt: prompt.to_string(),
                decision: Decision::Pending,
                created: Instant::now(),
            },
        );
        // Operators see what waits for them (the prompt names no secrets:
        // the policy wrote it from the operation and its URLs).
        tracing::info!(approval = %id, operation, user = ?caller.user_id(), prompt = %wabp_core::error::cut(prompt), "approval asked");
        approval_required(&id, prompt)
    }

    /// The approvals not used yet (waiting, or decided and waiting for
    /// their retry), oldest first.
    pub fn pending(&self) -> PendingApprovals {
        let asked = self.asked();
        let mut waiting: Vec<(&String, &Approval)> = asked.iter().collect();
        waiting.sort_by_key(|(_, a)| a.created);
        let approvals = waiting
            .into_iter()
            .map(|(id, a)| PendingApproval {
                approval_id: id.clone(),
                operation: a.operation.clone(),
                prompt: a.prompt.clone(),
                user: a.user.clone(),
                decision: a.decision,
                age_ms: a.created.elapsed().as_millis() as u64,
            })
            .collect();
        PendingApprovals { approvals }
    }

    /// An admin's decision on approval `id`; it may be changed until the
    /// approved request has run.
    pub fn decide(&self, id: &str, approve: bool) -> Result<Decided> {
        let mut asked = self.asked();
        let approval = asked.get_mut(id).ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!(
                    "no approval {} is waiting (unknown, used or expired)",
                    wabp_core::error::cut(id)
                ),
            )
        })?;
        // Until the retry uses it, a decision may be changed (revoked).
        approval.decision = if approve {
            Decision::Approved
        } else {
            Decision::Rejected
        };
        Ok(Decided {
            approval_id: id.to_string(),
            approved: approve,
            operation: approval.operation.clone(),
            prompt: approval.prompt.clone(),
            user: approval.user.clone(),
        })
    }

    /// A retry that names `id`: runs once if approved for exactly this
    /// request and caller.
    fn redeem(&self, id: &str, operation: &str, input: &Value, caller: &Caller) -> Result<()> {
        let mut asked = self.asked();
        let Some(approval) = asked.get(id) else {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!(
                    "no approval {} is waiting (unknown, used or expired)",
                    wabp_core::error::cut(id)
                ),
            ));
        };
        if approval.operation != operation
            || approval.input != input_digest(input)
            || approval.user.as_deref() != caller.user_id()
        {
            return Err(Error::new(
                ErrorCode::PolicyDenied,
                format!(
                    "approval {id} was given for another request; send the approved one as it was"
                ),
            ));
        }
        match approval.decision {
            Decision::Pending => Err(approval_required(id, &approval.prompt)),
            Decision::Rejected => {
                asked.remove(id);
                Err(denied("an approver rejected it"))
            }
            Decision::Approved => {
                asked.remove(id);
                Ok(())
            }
        }
    }
}

/// What the door needs to know about one call.
pub struct Door<'a> {
    pub operation: &'a str,
    pub category: Category,
    pub input: &'a Value,
    pub caller: &'a Caller,
}

impl crate::Ctx {
    /// Puts the call to every loaded policy (fails closed); Ok to run it.
    pub async fn pass_policies(&self, door: Door<'_>) -> Result<()> {
        // Deciding an approval is the policies' own way out: asking them
        // about it could leave nobody able to approve anything.
        if door.operation == APPROVE_OPERATION || door.operation == LIST_OPERATION {
            return Ok(());
        }
        if let Some(id) = door.input.get("approval_id").and_then(Value::as_str) {
            return self
                .approvals
                .redeem(id, door.operation, door.input, door.caller);
        }
        let policies = self.engine.registry().policies();
        if policies.is_empty() {
            return Ok(());
        }
        let request = PolicyRequest {
            category: door.category,
            operation: door.operation.to_string(),
            target_url: door
                .input
                .get("url")
                .and_then(Value::as_str)
                .map(wabp_core::rules::url::canonical_url),
            tab_url: self.tab_url(door.input),
            user: door.caller.user_id().map(str::to_string),
        };
        let mut ask = None;
        for policy in policies {
            match policy.decide(&self.policy_settings, &request).await {
                Ok(Verdict::Allow) => {}
                Ok(Verdict::Deny(reason)) => return Err(denied(&reason)),
                Ok(Verdict::Ask(prompt)) => {
                    ask.get_or_insert(prompt);
                }
                Err(failure) => {
                    return Err(denied(&format!(
                        "policy {} failed ({}), so the operation is refused",
                        failure.plugin, failure.message
                    )));
                }
            }
        }
        match ask {
            Some(prompt) => Err(self.approvals.ask(
                &self.engine.engine_id(),
                door.operation,
                door.input,
                door.caller,
                &prompt,
            )),
            None => Ok(()),
        }
    }

    /// The URL of the tab a call acts on (its `tab_id`, else the caller's
    /// active tab), if it has one the caller may see.
    fn tab_url(&self, input: &Value) -> Option<String> {
        let tab = match input.get("tab_id").and_then(Value::as_str) {
            Some(id) => id.to_string(),
            None => self.engine.active_tab(&self.caller)?,
        };
        self.engine.tab_url(&self.caller, &tab)
    }
}

#[cfg(test)]
mod tests {
    use wabp_core::rules::url::canonical_url;

    #[test]
    fn hosts_are_read_as_the_browser_reads_them() {
        for (given, host) in [
            ("http://127.0.0.2\\x.example.com/index.html", "127.0.0.2"),
            ("http:/\\127.0.0.2:8798/", "127.0.0.2"),
            ("http:127.0.0.2:8798/", "127.0.0.2"),
            ("http://127.0.0.2.:8798/", "127.0.0.2"),
            ("http://0177.0.0.2:8798/", "127.0.0.2"),
            ("http://2130706434:8798/", "127.0.0.2"),
            ("http://127.2:8798/", "127.0.0.2"),
            ("http://0x7f000002:8798/", "127.0.0.2"),
            ("http://[::ffff:127.0.0.2]:8798/", "127.0.0.2"),
            ("http://ads.example.com./", "ads.example.com"),
            ("http://ads%2Eexample.com/", "ads.example.com"),
            (
                "http://\u{ff41}\u{ff44}\u{ff53}.example.com/",
                "ads.example.com",
            ),
            ("http://evil.com\\\\.example.com/", "evil.com"),
        ] {
            let canonical = canonical_url(given);
            let parsed = url::Url::parse(&canonical).unwrap();
            assert_eq!(parsed.host_str(), Some(host), "{given} -> {canonical}");
        }
        assert_eq!(canonical_url("not a url"), "not a url");
        assert_eq!(canonical_url("about:blank"), "about:blank");
    }
}
