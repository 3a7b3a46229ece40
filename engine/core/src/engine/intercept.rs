//! The caller's interception rules (`/network/intercept`): kept here,
//! shared with every tab, which pauses its requests while one may apply
//! (`tab/intercept.rs`).

use std::collections::BTreeMap;

use super::Engine;
use crate::caller::Caller;
use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use crate::intercept::{InterceptAction, InterceptRule, MAX_RULES};
use std::sync::Arc;

/// A rule as a client asks for it.
#[derive(Debug, Clone)]
pub struct NewRule {
    pub url_pattern: String,
    pub tab_id: Option<String>,
    pub action: InterceptAction,
    pub status: Option<u16>,
    pub headers: Option<BTreeMap<String, String>>,
    pub body: Option<String>,
}

impl Engine {
    /// Adds a rule for the caller's tabs (or one of them); it applies to
    /// the requests they make from now on.
    pub async fn add_intercept_rule(
        &self,
        caller: &Caller,
        rule: NewRule,
    ) -> Result<InterceptRule> {
        if let Some(tab) = &rule.tab_id {
            self.tab(caller, tab)?;
        }
        let user = caller.user_id().map(str::to_string);
        let rule = InterceptRule {
            id: crate::ids::random_id("rule"),
            url_pattern: rule.url_pattern,
            tab_id: rule.tab_id,
            action: rule.action,
            status: rule.status,
            headers: rule.headers,
            body: rule.body,
            hits: 0,
            user,
        };
        rule.check()?;
        {
            let mut rules = self.interception.rules.lock();
            if rules.iter().filter(|r| r.user == rule.user).count() >= MAX_RULES {
                return Err(Error::new(
                    ErrorCode::LimitReached,
                    format!("at most {MAX_RULES} interception rules per user"),
                ));
            }
            rules.push(rule.clone());
        }
        self.sync_interception(caller).await?;
        Ok(rule)
    }

    /// The caller's rules, in the order they are tried.
    pub fn intercept_rules(&self, caller: &Caller) -> Vec<InterceptRule> {
        let user = caller.user_id();
        self.interception
            .rules
            .lock()
            .iter()
            .filter(|r| r.user.as_deref() == user)
            .cloned()
            .collect()
    }

    /// Removes the caller's rules: one by id, those of a tab, or all; how
    /// many went.
    pub async fn delete_intercept_rules(
        &self,
        caller: &Caller,
        id: Option<&str>,
        tab_id: Option<&str>,
    ) -> Result<usize> {
        let user = caller.user_id().map(str::to_string);
        let removed = {
            let mut rules = self.interception.rules.lock();
            let before = rules.len();
            rules.retain(|r| {
                let doomed = r.user == user
                    && id.is_none_or(|id| r.id == id)
                    && tab_id.is_none_or(|t| r.tab_id.as_deref() == Some(t));
                !doomed
            });
            before - rules.len()
        };
        if let Some(id) = id
            && removed == 0
        {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!("interception rule {id} not found"),
            ));
        }
        self.sync_interception(caller).await?;
        Ok(removed)
    }

    /// Each of the caller's tabs pauses its requests exactly while a rule
    /// may apply to it.
    async fn sync_interception(&self, caller: &Caller) -> Result<()> {
        for tab in self.tabs_of(caller) {
            tab.sync_interception().await?;
        }
        Ok(())
    }

    /// Interceptor plugins come and go with hot reloads: every tab pauses
    /// its requests while one is loaded (or a rule applies to it).
    pub(super) fn follow_interceptors(self: &Arc<Self>) {
        let mut changes = self.registry.subscribe_changes();
        let engine = Arc::downgrade(self);
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                let Some(engine) = engine.upgrade() else {
                    return;
                };
                let tabs = engine.tabs.all();
                for tab in tabs {
                    if let Err(e) = tab.sync_interception().await {
                        tracing::debug!(tab = %tab.id, "interception not updated: {}", e.message);
                    }
                }
            }
        });
    }
}
