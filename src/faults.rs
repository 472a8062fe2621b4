//! Test-only faults (spec 011): deliberate rewriter bugs that prove the second line of defence
//! catches what the rules miss. Compiled in only with the `test-faults` cargo feature (the
//! `make faults` build used by test/python/test_defence.py); a release build has no switch at
//! all. With the feature, `ACL_TEST_FAULT` (comma-separated) is read when a database loads the
//! extension; a principal has no way to reach it.

/// The faults in force for one database instance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Skip the table rule and the post-check: virtual names reach DuckDB as written.
    pub skip_relations: bool,
    /// The function gate admits calls but leaves them unqualified.
    pub unqualified_functions: bool,
    /// The second check accepts everything.
    pub no_defence: bool,
    /// The table rule (and the post-check) do not look inside a virtual function's arguments:
    /// their table names reach DuckDB as written.
    pub vfn_args_unresolved: bool,
    /// A virtual function's arguments are substituted in place inside its body (the behaviour
    /// before issue 10: the principal's names bind against the body's tables).
    pub vfn_args_in_place: bool,
    /// Management does not judge the policy SQL a batch brings (spec 007, "Policy SQL is input"):
    /// what it writes reaches the statement path as a store edited by hand would.
    pub unchecked_policy_sql: bool,
    /// Every read of a `KEYS FROM` file sleeps 3 s first (longer than a publish waits): a file
    /// system that is slow to answer (test_keys.py).
    pub slow_keys_file: bool,
    /// A slice the statement names more than once gets its CTE where its first reference stood
    /// (`(WITH "__acl_s<j>" AS (<slice>) SELECT * FROM "__acl_s<j>") AS alias`) instead of on the
    /// statement's top: the other references are outside its scope and bind to the catalog.
    pub shared_cte_nested: bool,
}

impl Faults {
    #[cfg(feature = "test-faults")]
    pub fn from_env() -> Faults {
        let v = std::env::var("ACL_TEST_FAULT").unwrap_or_default();
        let on = |name: &str| v.split(',').any(|f| f.trim() == name);
        Faults {
            skip_relations: on("skip_relations"),
            unqualified_functions: on("unqualified_functions"),
            no_defence: on("no_defence"),
            vfn_args_unresolved: on("vfn_args_unresolved"),
            vfn_args_in_place: on("vfn_args_in_place"),
            unchecked_policy_sql: on("unchecked_policy_sql"),
            slow_keys_file: on("slow_keys_file"),
            shared_cte_nested: on("shared_cte_nested"),
        }
    }

    #[cfg(not(feature = "test-faults"))]
    pub fn from_env() -> Faults {
        Faults::default()
    }
}
