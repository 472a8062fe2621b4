//! The types of the C boundary with the shim (cpp/), passed by pointer or by value.
use crate::rewrite;
use crate::state::State;
use std::ffi::c_void;
use std::panic::catch_unwind;

#[repr(C)]
pub struct AclToken {
    pub(super) start: u64,
    pub(super) kind: u8,
}

#[repr(C)]
pub struct AclBuf {
    pub(super) ptr: *mut u8,
    pub(super) len: usize,
}

#[repr(C)]
pub struct AclOut {
    /// The rewritten SQL, or the refusal's message.
    pub(super) text: AclBuf,
    /// `rewrite::Output::names`: for translating DuckDB's errors about the statements.
    pub(super) names: AclBuf,
    pub(super) n_statements: u64,
    /// `Checks` (the second check's allowed sets) or null; freed with the rest.
    pub(super) check: *mut c_void,
    /// The policy version the batch was decided under.
    pub(super) version: u64,
    /// Unix seconds after which the batch's statements must not run any more (the token's `exp`);
    /// 0: no such limit.
    pub(super) expires: i64,
    /// Who the batch runs as (empty for `ACL ADMIN`), for what the shim keeps per connection.
    pub(super) principal: AclBuf,
}

/// The caller's settings the shim reads from its context for each batch.
#[repr(C)]
pub struct AclSettings {
    /// `acl_jwt_clock_skew`, seconds.
    pub(super) clock_skew: u64,
    /// `acl_max_rewrite_bytes`.
    pub(super) max_rewrite_bytes: u64,
    /// 1 when an explicit transaction is open on the caller's connection.
    pub(super) in_transaction: u8,
}

impl AclSettings {
    pub(super) fn read(&self, state: &State) -> rewrite::Settings {
        rewrite::Settings {
            clock_skew: self.clock_skew,
            max_rewrite_bytes: self.max_rewrite_bytes,
            in_transaction: self.in_transaction != 0,
            faults: state.faults,
        }
    }
}

/// What the shim hands `acl_rs_check`: one name DuckDB's parse contains, as `count` strings
/// starting at `first` in the string array.
#[repr(C)]
pub struct AclRef {
    pub(super) kind: u8,
    pub(super) first: u32,
    pub(super) count: u32,
    /// The region of policy SQL it sits in (0: outside every region; see `rewrite::defence`).
    pub(super) region: u32,
}

#[repr(C)]
pub struct AclStr {
    pub(super) ptr: *const u8,
    pub(super) len: usize,
}

impl AclBuf {
    pub(super) fn from(s: String) -> AclBuf {
        let b = s.into_bytes().into_boxed_slice();
        let len = b.len();
        AclBuf { ptr: Box::into_raw(b) as *mut u8, len }
    }

    pub(super) fn free(&mut self) {
        if !self.ptr.is_null() {
            let (ptr, len) = (self.ptr, self.len);
            let _ = catch_unwind(|| unsafe { drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len))) });
            self.ptr = std::ptr::null_mut();
            self.len = 0;
        }
    }
}
