/// The refusal of a management statement inside an explicit transaction (also `acl_exec`'s).
pub const MANAGEMENT_IN_TRANSACTION: &str = "management statements run in their own transaction; COMMIT or ROLLBACK first";

/// Management statements run when DuckDB executes the batch (in order with the rest of it),
/// through the extension's `acl_exec` table function.
fn admin_call(stmt: &str) -> String {
    format!("SELECT * FROM acl_exec('{}')", stmt.replace('\'', "''"))
}

    /// Runs one management statement (already split from its batch) against a copy of the
    /// policy and publishes the copy only if it succeeded.
    pub fn execute_admin(&self, sql: &str) -> Result<String> {
        let cmd = crate::admin::parse(sql)?;
        let _w = self.writer.lock();
        let mut next = Policy::clone(&self.policy.load());
        let status = crate::admin::apply(&mut next, &cmd)?;
        self.policy.store(Arc::new(next));
        Ok(status)
    }
