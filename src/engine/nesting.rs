//! What a bind of ours that DuckDB can reach from inside what it binds checks first (spec 011,
//! "Nesting"): `acl_meta` binds every object it lists, in the caller's context with a binder of
//! its own (`acl_shim_describe`), so DuckDB's own checks — a view bound inside itself, the
//! binder's depth — start over there. A view that reads a listing (one stored before they were
//! refused, or an operator's) made every listing of its catalog describe the view, whose listing
//! described the catalog again: unbounded recursion, SIGSEGV (issue 31, finding 8).
//!
//! - Re-entry: a listing (or a view guard) bound while another one is being bound on the same
//!   thread is refused. Binding is synchronous, so everything bound below a bind of ours runs on
//!   its thread before it returns; the flag is per thread and cleared when the bind returns or
//!   unwinds. The refused inner listing makes the outer one list that object without columns.
//! - Depth: before DuckDB goes on binding below a view guard or a listing, the caller's stack must
//!   keep `need(size)` free; the guard's bind runs once per nested view, deeper each time, so a
//!   chain of views is refused where it would have run the thread out of stack.
use crate::error::{AclError, Nesting};
use std::cell::Cell;

thread_local! {
    static LISTING: Cell<bool> = const { Cell::new(false) };
    static GUARD: Cell<bool> = const { Cell::new(false) };
}

/// The binds that must not be reached again from inside themselves.
#[derive(Clone, Copy)]
pub enum Bind {
    Listing,
    Guard,
}

impl Bind {
    fn flag(self) -> &'static std::thread::LocalKey<Cell<bool>> {
        match self {
            Bind::Listing => &LISTING,
            Bind::Guard => &GUARD,
        }
    }
}

/// A bind in progress on this thread; dropping it (return or unwind) ends it.
pub struct Entered(Bind);

impl Drop for Entered {
    fn drop(&mut self) {
        self.0.flag().set(false);
    }
}

/// Starts `bind` on this thread, unless one is in progress here already.
pub fn enter(bind: Bind) -> Result<Entered, AclError> {
    if bind.flag().replace(true) {
        return Err(match bind {
            Bind::Listing => Nesting::ListingInListing,
            Bind::Guard => Nesting::GuardInGuard,
        }
        .into());
    }
    Ok(Entered(bind))
}

/// Stack to keep free below a bind of ours on a stack of `size` bytes: three quarters of it, at
/// least `MIN_FREE`. Binding down to the innermost view's guard may use the first quarter; what
/// DuckDB then binds below it (the innermost view's own body), plans, optimises and runs over the
/// same depth takes more per level than binding did (a join of two chains with an IN subquery over
/// a third crashed a 512 KiB thread when binding was allowed three quarters). Measured (spec 011,
/// "Nesting"): at this bound, chains of views read in joins, subqueries, unions and windows on
/// threads of 256 KiB to 8 MiB.
fn need(size: usize) -> usize {
    (size / 4 * 3).max(MIN_FREE)
}
const MIN_FREE: usize = 192 << 10;

/// `Err(Nesting::Stack)` when the stack the caller runs on has less than `need` free; called on
/// the caller's own stack, before the bind switches to the thread's region (`stack::run`).
pub fn stack_room() -> Result<(), AclError> {
    match crate::stack::room() {
        Some((left, size)) if left < need(size) => Err(Nesting::Stack.into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bind_is_refused_inside_itself_and_free_again_after() {
        let outer = enter(Bind::Listing).unwrap();
        assert_eq!(enter(Bind::Listing).err(), Some(AclError::Nesting(Nesting::ListingInListing)));
        // a guard inside a listing (a listed view's guard) is not re-entry
        let guard = enter(Bind::Guard).unwrap();
        assert_eq!(enter(Bind::Guard).err(), Some(AclError::Nesting(Nesting::GuardInGuard)));
        drop(guard);
        drop(outer);
        assert!(enter(Bind::Listing).is_ok());
        // an unwinding bind ends too
        let _ = std::panic::catch_unwind(|| {
            let _e = enter(Bind::Listing).unwrap();
            panic!("inside");
        });
        assert!(enter(Bind::Listing).is_ok());
    }

    #[test]
    fn another_thread_is_not_inside() {
        let _outer = enter(Bind::Listing).unwrap();
        assert!(std::thread::spawn(|| enter(Bind::Listing).is_ok()).join().unwrap());
    }

    fn deep(n: usize) -> bool {
        let pad = std::hint::black_box([0u8; 1024]);
        if n == 0 || stack_room().is_err() {
            return stack_room().is_err() && pad[0] == 0;
        }
        deep(n - 1) && pad[1] == 0
    }

    #[test]
    fn the_stack_is_refused_before_it_runs_out() {
        // 1 MiB of thread stack, 1 KiB a level: refused well before 1 024 levels, never overflowed
        let refused = std::thread::Builder::new().stack_size(1 << 20).spawn(|| deep(4_096)).unwrap().join().unwrap();
        assert!(refused);
        let shallow = std::thread::Builder::new().stack_size(1 << 20).spawn(|| stack_room().is_ok()).unwrap().join().unwrap();
        assert!(shallow);
    }
}
