//! Test fixtures. `state` sits above `rewrite` (it holds rewrite's caches), so the batch tests
//! take this stand-in for the part of `state::State` they use: a policy written as management
//! statements (applied by `admin`, which rewrite's tests may use: test/check_layers.py) and the
//! caches `batch` and the shapes take.
use crate::error::Result;
use crate::policy::Policy;
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub(crate) struct State {
    policy: Mutex<Arc<Policy>>,
    pub tokens: crate::auth::TokenCache,
    pub rewrites: super::RewriteCache,
    pub shapes: super::ShapeCache,
}

impl State {
    pub fn new() -> State {
        State::default()
    }

    pub fn policy(&self) -> Arc<Policy> {
        self.policy.lock().unwrap().clone()
    }

    /// `state::State::execute_admin`: applies one management statement to a copy of the policy
    /// and publishes the copy only if it succeeded.
    pub fn execute_admin(&self, sql: &str) -> Result<String> {
        let cmd = crate::admin::parse(sql)?;
        let mut current = self.policy.lock().unwrap();
        let mut next = Policy::clone(&current);
        let status = crate::admin::apply(&mut next, &cmd)?;
        *current = Arc::new(next);
        Ok(status)
    }
}
