//! The door's GLOBAL settings (spec 018), validated at SET and read without a lock:
//! `acl_max_result_rows`, `acl_flight_stream_idle`, `acl_node_stream_budget`.
use crate::error::{AclError, DoorProblem, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// `acl_flight_stream_idle`'s default, seconds.
pub const DEFAULT_STREAM_IDLE: u64 = 30;
/// The largest idle wait taken (a day).
const MAX_IDLE: u64 = 86_400;

/// A setting's value as kept, or why it is refused.
pub fn validate_setting(name: &str, value: &str) -> Result<u64> {
    let bad = |setting: &'static str, expected: &'static str| AclError::from(DoorProblem::Setting { setting, expected });
    // Digits only: Rust's parse also takes a leading `+`, and DuckDB no longer casts the text first.
    let t = value.trim();
    let n = match !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        true => t.parse::<u64>().map_err(|_| ()),
        false => Err(()),
    };
    match name {
        "acl_max_result_rows" => n.map_err(|_| bad("acl_max_result_rows", "a number of rows (0: no cap)")),
        "acl_flight_stream_idle" => match n {
            Ok(v) if (1..=MAX_IDLE).contains(&v) => Ok(v),
            _ => Err(bad("acl_flight_stream_idle", "a number of seconds from 1 to 86400")),
        },
        "acl_node_stream_budget" => match n {
            Ok(v) if v == 0 || v >= 1 << 20 => Ok(v),
            _ => Err(bad("acl_node_stream_budget", "a number of bytes from 1048576, or 0 for half of memory_limit")),
        },
        _ => Err(AclError::internal("not a door setting")),
    }
}

pub struct Limits {
    max_result_rows: AtomicU64,
    stream_idle: AtomicU64,
    budget: AtomicU64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_result_rows: AtomicU64::new(0), stream_idle: AtomicU64::new(DEFAULT_STREAM_IDLE), budget: AtomicU64::new(0) }
    }
}

impl Limits {
    /// Takes a validated value (the shim's `OnSet`); the value kept.
    pub fn set(&self, name: &str, value: &str) -> Result<u64> {
        let v = validate_setting(name, value)?;
        match name {
            "acl_max_result_rows" => self.max_result_rows.store(v, Ordering::Relaxed),
            "acl_flight_stream_idle" => self.stream_idle.store(v, Ordering::Relaxed),
            _ => self.budget.store(v, Ordering::Relaxed),
        }
        Ok(v)
    }

    /// `acl_max_result_rows` (`None`: no cap).
    pub fn max_result_rows(&self) -> Option<u64> {
        Some(self.max_result_rows.load(Ordering::Relaxed)).filter(|&n| n > 0)
    }

    pub fn stream_idle_secs(&self) -> u64 {
        self.stream_idle.load(Ordering::Relaxed)
    }

    /// `acl_node_stream_budget` as set (0: half of memory_limit).
    pub fn budget_setting(&self) -> u64 {
        self.budget.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_validated() {
        let l = Limits::default();
        assert_eq!(l.set("acl_max_result_rows", "10").unwrap(), 10);
        assert_eq!(l.max_result_rows(), Some(10));
        assert_eq!(l.set("acl_max_result_rows", "0").unwrap(), 0);
        assert_eq!(l.max_result_rows(), None);
        assert!(matches!(l.set("acl_max_result_rows", "-1"), Err(AclError::Door(DoorProblem::Setting { .. }))));
        assert!(l.set("acl_flight_stream_idle", "0").is_err());
        assert_eq!(l.stream_idle_secs(), DEFAULT_STREAM_IDLE);
        assert_eq!(l.set("acl_flight_stream_idle", "5").unwrap(), 5);
        assert!(l.set("acl_node_stream_budget", "1000").is_err());
        assert_eq!(l.set("acl_node_stream_budget", "0").unwrap(), 0);
        assert_eq!(l.set("acl_node_stream_budget", "2097152").unwrap(), 2097152);
    }
}
