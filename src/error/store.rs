//! Failures of the policy store (spec 006). None carries a credential: a location is what the
//! backend's `describe` gives (for PostgreSQL: host, port, database and schema only), and a
//! backend's own message is cut and stripped of the connection string before it gets here.
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StoreError {
    /// The store could not be reached (the catalog was detached, the database is gone, the
    /// connection failed). Statements keep the last snapshot; management waits for the store.
    #[error("policy store unavailable: {location} ({why})")]
    Unavailable { location: String, why: String },
    /// The store's tables were written by another layout.
    #[error("the policy store {location} has schema version {found}; this extension reads schema version {expected}")]
    SchemaVersion { location: String, found: String, expected: u64 },
    /// No store at this location, and `init` was not asked for.
    #[error("there is no policy store in {location}; acl_use_db(…, init := true) creates one")]
    Missing { location: String },
    /// `acl_use_db` with another store while one is in use.
    #[error("the policy store {current} is in use; a node uses one store (start a new instance to use {requested})")]
    InUse { current: String, requested: String },
    /// A record the store holds cannot be read back into a policy (a direct edit, most likely).
    #[error("the policy store {location} holds a record that cannot be read: {table}: {why}")]
    Corrupt { location: String, table: &'static str, why: String },
    /// The store holds policy SQL that would be refused if it were written now (a direct edit,
    /// or a policy written before the rule): refused as a whole, every finding named.
    #[error("the policy store {location} holds policy SQL that is refused: {}; correct or remove those records and call acl_reload()", .findings.join("; "))]
    PolicySql { location: String, findings: Vec<String> },
    /// The store refused the change (a conflicting writer, a constraint, a full disk): nothing of
    /// the batch was committed.
    #[error("the policy store {location} did not take the change: {why}")]
    Failed { location: String, why: String },
    /// The catalog named in `acl_use_db` is not attached (or the call named none).
    #[error("no attached database named \"{catalog}\" to hold the policy store")]
    NoCatalog { catalog: String },
    /// `acl_use_postgres` with a connection string the client cannot read (`why` repeats none
    /// of it).
    #[error("the PostgreSQL connection string cannot be used: {why}")]
    BadConnection { why: String },
    /// `acl_use_db` / `acl_use_postgres` while `allow_parser_override_extension` is `DEFAULT`:
    /// no prefix would be read, so no principal would be judged (as the reference refuses it).
    #[error("the parser override is off (allow_parser_override_extension = 'DEFAULT'): SET allow_parser_override_extension = 'STRICT' before acl_use_db")]
    ParserOverrideOff,
    /// `acl_reload()` in memory mode.
    #[error("no policy store is in use (memory mode): acl_use_db('<attached database>') names one")]
    MemoryMode,
}

/// At most this many characters of a backend's own message are kept.
const WHY_CHARS: usize = 200;

/// A backend's message, cut to `WHY_CHARS` and on one line.
pub fn why(message: &str) -> String {
    let one_line: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(WHY_CHARS) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}
