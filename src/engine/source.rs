//! The policy source (spec 006): `acl_use_db` brings a store into use, `acl_reload` reads it
//! again, `acl_status` says what the node holds. Management batches go through it in
//! `admin::execute_all`; the statement path never does.
use super::State;
use crate::error::{AclError, Result, StatementNotPermitted, StoreError};
use crate::policy::Policy;
use crate::store::{Opened, Store};
use std::sync::Arc;

/// `acl_version_check_interval`'s default, milliseconds.
pub const DEFAULT_VERSION_CHECK_MS: u64 = 1000;

/// `acl_use_db`: `store` comes into use. With `create` and no store at its location, the tables
/// are made and the memory policy is written into them; a store that holds a policy replaces the
/// memory's. The store already in use is read again; another one is refused.
pub fn use_store(state: &State, store: Store, create: bool, in_transaction: bool) -> Result<String> {
    if in_transaction {
        return Err(AclError::from(StatementNotPermitted::ManagementInTransaction));
    }
    let w = state.writer();
    if let Some(current) = state.store() {
        // The same store: the same kind, location and server (two PostgreSQL servers may hold
        // one schema name each).
        if current.kind() == store.kind() && current.location() == store.location() && current.describe() == store.describe() {
            drop(w);
            return reload(state, false);
        }
        return Err(StoreError::InUse { current: current.describe(), requested: store.describe() }.into());
    }
    let memory = w.current();
    let store = Arc::new(store);
    match store.open(create, &memory)? {
        Opened::Created { version } => {
            w.set_store(store.clone(), version);
            // The same policy, now knowing the store's schema (never a source).
            w.publish(Policy::clone(&memory));
            Ok(format!("created the policy store {} and wrote the policy in memory into it", store.describe()))
        }
        Opened::Loaded { policy, version } => {
            w.set_store(store.clone(), version);
            w.publish(policy);
            Ok(format!("loaded the policy store {} (policy version {version})", store.describe()))
        }
    }
}

/// `acl_reload()`: the store's policy replaces the node's (after direct edits to its tables).
/// Not inside an explicit transaction: the store is read on a connection of its own, which would
/// not see the transaction's own uncommitted edits, and a ROLLBACK would not undo the reload.
pub fn reload(state: &State, in_transaction: bool) -> Result<String> {
    if in_transaction {
        return Err(AclError::from(StatementNotPermitted::ManagementInTransaction));
    }
    let w = state.writer();
    let store = state.store().ok_or(StoreError::MemoryMode)?;
    match store.load(&state.host_functions()) {
        Ok((policy, version)) => {
            w.publish(policy);
            state.note_store(Ok(version));
            Ok(format!("reloaded the policy store {} (policy version {version})", store.describe()))
        }
        Err(e) => {
            state.note_store(Err(&e));
            Err(e)
        }
    }
}

/// What the background thread of a shared store (PostgreSQL, `engine::watch`) does on a notice
/// and every `acl_version_check_interval` ms: reads the store's policy version and, when it is
/// not the one the node holds (another node committed, or an operator moved it), loads the
/// store's policy and publishes it. `Ok(true)`: a new policy was published. Under the writer
/// lock, so this node's own batch, committed but not yet noted, is not read back as another's.
/// The statement path never waits for it: it keeps reading the snapshot published before.
pub fn refresh(state: &State) -> Result<bool> {
    let w = state.writer();
    let Some(store) = state.store() else { return Ok(false) };
    let seen = state.store_status().policy_version;
    match store.version() {
        Ok(v) if v == seen => {
            state.note_health(Ok(()));
            Ok(false)
        }
        Ok(_) => match store.load(&state.host_functions()) {
            Ok((policy, version)) => {
                // Published first, noted second: whoever sees the new version in acl_status()
                // finds its policy in force.
                w.publish(policy);
                state.note_store(Ok(version));
                Ok(true)
            }
            Err(e) => {
                state.note_store(Err(&e));
                Err(e)
            }
        },
        Err(e) => {
            state.note_health(Err(&e));
            Err(e)
        }
    }
}

/// One row of `acl_status()`: `(column, value)` in order; values as text (NULL: `None`).
pub fn status(state: &State) -> Vec<(&'static str, Option<String>)> {
    // Ask the store (outside the writer lock), so that a store that went away shows now.
    let mut stale = None;
    if let Some(store) = state.store() {
        let seen = state.store_status().policy_version;
        match store.version() {
            Ok(v) => {
                // A version past the node's: another writer or a direct edit (acl_reload reads it).
                stale = Some(v != seen);
                state.note_health(Ok(()));
            }
            Err(e) => state.note_health(Err(&e)),
        }
    }
    let s = state.store_status();
    let p = state.policy();
    let roles = p.roles.values();
    let (mut catalog_grants, mut object_grants, mut schema_grants) = (0, 0, 0);
    for r in roles {
        catalog_grants += r.catalog_grants.len();
        object_grants += r.object_grants.len();
        schema_grants += r.schema_grants.len();
    }
    let n = |x: usize| Some(x.to_string());
    let in_use = state.store().is_some();
    vec![
        ("mode", Some(if in_use { "store" } else { "memory" }.to_string())),
        ("store_kind", Some(s.kind.clone())),
        ("store_location", in_use.then(|| s.location.clone())),
        ("policy_version", Some(p.version.to_string())),
        ("store_policy_version", in_use.then(|| s.policy_version.to_string())),
        ("store_changed_since_load", stale.map(|b| b.to_string())),
        // Microseconds since the epoch (a TIMESTAMP WITH TIME ZONE column).
        ("last_refresh", (in_use && s.last_refresh_ms > 0).then(|| (s.last_refresh_ms * 1000).to_string())),
        ("store_healthy", Some(s.healthy.to_string())),
        ("store_error", s.last_error.clone()),
        ("catalogs", n(p.catalogs.len())),
        ("objects", n(p.catalogs.values().map(|c| c.objects.len()).sum())),
        ("schemas", n(p.catalogs.values().map(|c| c.schemas.len()).sum())),
        ("roles", n(p.roles.len())),
        ("catalog_grants", n(catalog_grants)),
        ("object_grants", n(object_grants)),
        ("schema_grants", n(schema_grants)),
        ("issuers", n(p.issuers.len())),
        ("function_categories", n(p.functions.categories.len())),
        ("virtual_functions", n(p.functions.virtuals.len())),
        ("process_instances", n(super::live_states())),
        ("shape_parse_copies", Some(state.shapes.stats.copies.load(std::sync::atomic::Ordering::Relaxed).to_string())),
        ("shape_parse_fallbacks", Some(state.shapes.stats.fallbacks.load(std::sync::atomic::Ordering::Relaxed).to_string())),
    ]
}
