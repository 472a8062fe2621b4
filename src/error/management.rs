//! Syntax errors (the prefix, a principal's statement, a management statement) and invalid
//! management statements.
use thiserror::Error;

/// How every syntax error of a management statement starts.
const MANAGEMENT: &str = "could not parse management statement";

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Syntax {
    #[error("nothing to run after the ACL prefix")]
    NothingAfterPrefix,
    #[error("expected ROLE \"<role>\", TOKEN '<jwt>', SESSION '<handle>' or ADMIN after ACL")]
    PrefixKind,
    #[error("expected a role name after ACL ROLE")]
    PrefixRole,
    /// `ACL ROLE 'analyst'`: a string where a name belongs (SQL quotes names with double quotes).
    #[error("expected a role name after ACL ROLE, not a string: write ACL ROLE \"{0}\" (a name takes double quotes)")]
    PrefixRoleString(String),
    #[error("expected a quoted token after ACL TOKEN")]
    PrefixToken,
    #[error("expected a quoted handle after ACL SESSION")]
    PrefixSession,
    #[error("expected a plain single-quoted string")]
    PlainString,
    #[error("the statement is not valid UTF-8")]
    NotUtf8,
    /// sqlparser's own message quotes the input; only where it failed is kept.
    #[error("could not parse the statement{}", .at.as_ref().map(|a| format!(" ({a})")).unwrap_or_default())]
    Statement { at: Option<String> },
    #[error("the statement is nested too deeply")]
    TooDeep,
    /// DuckDB's own parser refused the principal's text too: its message (first line), which
    /// quotes only that text.
    #[error("could not parse the statement: {message}")]
    Host { message: String },
    #[error("could not parse the statement as a single statement")]
    NotOneStatement,
    #[error("{MANAGEMENT}{0}")]
    Management(Management),
    /// A management statement of a form planned but not built.
    #[error("{what} is not supported yet")]
    NotYet { what: String },
}

/// After `could not parse management statement`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Management {
    #[error("")]
    Bare,
    /// The tokenizer's message (short, names a position, not the input).
    #[error(": {0}")]
    Tokenizer(String),
    #[error(": expected {expected}, found {found}")]
    Expected { expected: String, found: String },
    /// An expected part that did not parse (nothing is said of what was found).
    #[error(": expected {expected}")]
    Missing { expected: String },
    #[error(": {clause} given twice")]
    Twice { clause: &'static str },
    #[error(": MAIN applies only to GRANT CATALOG")]
    MainOutsideCatalogGrant,
    #[error(": OR REPLACE and IF NOT EXISTS cannot be combined")]
    ReplaceAndIfNotExists,
    #[error(": a name must not be empty")]
    EmptyName,
    #[error(": {what} has a single part (quote it to use a dot)")]
    SinglePart { what: String },
}

/// What kind of policy object a management statement named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Noun {
    #[error("virtual catalog")]
    Catalog,
    #[error("virtual schema")]
    Schema,
    #[error("virtual table")]
    Table,
    #[error("virtual view")]
    View,
    #[error("virtual object")]
    Object,
    #[error("virtual scalar")]
    ScalarFunction,
    #[error("virtual table function")]
    TableFunction,
    #[error("role")]
    Role,
    #[error("issuer")]
    Issuer,
    #[error("function category")]
    Category,
    #[error("virtual reference")]
    Reference,
    #[error("grant")]
    Grant,
    #[error("column")]
    Column,
    #[error("resource group")]
    ResourceGroup,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Invalid {
    #[error("{noun} \"{name}\" does not exist")]
    Missing { noun: Noun, name: String },
    #[error("{noun} \"{name}\" already exists")]
    Exists { noun: Noun, name: String },
    #[error("{0}")]
    Duplicate(Duplicate),
    #[error("virtual catalog \"{name}\" is not empty (use CASCADE)")]
    NotEmpty { name: String },
    /// `DROP VIRTUAL SCHEMA` of an expanded schema that still holds objects, without CASCADE.
    #[error("virtual schema \"{name}\" still holds {objects} object{} (use CASCADE)", if *.objects == 1 { "" } else { "s" })]
    SchemaNotEmpty { name: String, objects: usize },
    /// `DROP VIRTUAL CATALOG` without CASCADE while roles hold grants on it.
    #[error("virtual catalog \"{name}\" is still granted to {} (revoke the grants or use CASCADE)",
        .roles.iter().map(|r| format!("role \"{r}\"")).collect::<Vec<_>>().join(", "))]
    StillGranted { name: String, roles: Vec<String> },
    #[error("function category \"{name}\" is shipped and cannot be {}", if *.dropped { "dropped" } else { "replaced" })]
    Shipped { name: String, dropped: bool },
    #[error("unknown capability \"{word}\" (known: select, insert, update, delete, merge, create, drop, temp, explain, secrets, lineage, manage, reader, writer, admin)")]
    UnknownCapability { word: String },
    #[error("capability {capability} can only be granted on a catalog")]
    CatalogOnly { capability: String },
    /// `CAPS '<json>'` that is not an object of capability names to booleans.
    #[error("CAPS must be a JSON object of capability names to true or false, e.g. CAPS '{{\"select\": true}}'")]
    CapsJson,
    #[error("CAPS: \"{word}\" is not a capability (known: select, insert, update, delete, merge, create, drop, temp, explain, secrets, lineage, manage)")]
    CapsName { word: String },
    /// `CLAIMS '…'` that is not a list of `k=v` pairs.
    #[error("CLAIMS '…' must be name=value pairs separated by commas")]
    ClaimsList,
    /// The query of a virtual view with declared columns does not give them (the message is
    /// completed by the validation statement with what the query gives).
    #[error("the query of virtual view \"{view}\" does not give its declared columns")]
    ViewColumns { view: String },
    /// A declared column (PRIMARY KEY, a reference's ON) that the object does not expose.
    #[error("\"{column}\" is not a column of {object}")]
    NotAColumn { column: String, object: String },
    #[error("unknown cardinality \"{word}\" (known: ONE_TO_ONE, ONE_TO_MANY, MANY_TO_ONE, MANY_TO_MANY, 1:1, 1:n, n:1, n:m)")]
    Cardinality { word: String },
    #[error("function \"{name}\" is never callable{}", if *.alias { " and cannot be aliased" } else { "" })]
    NeverCallable { name: String, alias: bool },
    /// `ALIAS OF name` where `name` is no built-in of that kind.
    #[error("\"{name}\" is not a built-in {kind} function")]
    NotBuiltinOfKind { name: String, kind: &'static str },
    #[error("\"{name}\" is not a built-in function; name other functions as db.schema.name")]
    NotBuiltin { name: String },
    #[error("acl_arg({arg}) refers past the {params} declared parameter{}", if *.params == 1 { "" } else { "s" })]
    ArgumentPastParameters { arg: usize, params: usize },
    #[error("function \"{name}\" may not be used in a virtual function")]
    NotInVirtualFunction { name: String },
    #[error("schema \"{name}\" already holds virtual objects; a virtual schema must be a schema of its own")]
    SchemaHoldsObjects { name: String },
    /// `CREATE VIRTUAL SCHEMA … FROM` (or REFRESH) found nothing: the name, as written, is the
    /// operator's own.
    #[error("{name} holds no tables or views to expand (or does not exist)")]
    EmptySource { name: String },
    /// `CREATE VIRTUAL TABLE … AS <phys>` (or `SET PHYS`) naming no table or view: refused when
    /// written, not at a principal's first statement. The name, as written, is the operator's own.
    #[error("{name} is no table or view: create it first, or check the name")]
    NoSuchSource { name: String },
    /// Policy SQL that does not bind against its source (`admin::validate`): the virtual object
    /// (or grant) and DuckDB's first line, never the rewrite's own text.
    #[error("{what} does not bind: {why}")]
    DoesNotBind { what: String, why: String },
    #[error("cannot list {name}: {why}")]
    SourceUnreadable { name: String, why: String },
    /// A validation statement of a function-API call refused (`validate`): its own `acl:`
    /// message, or DuckDB's, first line.
    #[error("{why}")]
    Unbound { why: String },
    #[error("virtual schema {name} is not an expanded schema (CREATE VIRTUAL SCHEMA … FROM)")]
    NotExpanded { name: String },
    #[error("\"{name}\" is a virtual schema (a live alias); its objects are not listed one by one")]
    ObjectInVirtualSchema { name: String },
    #[error("{name} may not be a physical source: the temp and system databases and the extension's own names are not mapped")]
    PhysicalSource { name: String },
    /// A physical name that is, or may resolve to, a table of the policy store in use.
    #[error("{name} may not be a physical source: it is, or may name, a table of the policy store {store}")]
    StoreSource { name: String, store: String },
    #[error("column \"{column}\" is masked differently by the grant to role \"{role}\"; one principal holding both roles could not be given one mask")]
    MaskConflict { column: String, role: String },
    #[error("claim path \"{path}\" has an empty segment")]
    ClaimPath { path: String },
    #[error("cannot read keys file \"{path}\": {why}")]
    KeysFile { path: String, why: String },
    /// A problem with an issuer's keys, named by the issuer.
    #[error("issuer \"{iss}\": {problem}")]
    Issuer { iss: String, problem: Box<Invalid> },
    #[error("{0}")]
    Keys(KeyProblem),
    /// `acl_export()`'s placeholder for a shared secret it withheld (spec 023), named by the issuer.
    #[error("its shared secret was withheld by acl_export(); put the secret in place of the KEYS placeholder, or export with acl_export(secrets := true)")]
    SecretWithheld,
    /// A fixed rule of the management grammar (free text: see spec 001, "Errors").
    #[error("{0}")]
    Rule(&'static str),
    /// An argument of a function of the reference's API (`acl_grant_catalog(…)`, spec 007).
    #[error("{function}: argument {argument} {problem}")]
    CallArgument { function: String, argument: &'static str, problem: &'static str },
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Duplicate {
    #[error("parameter \"{0}\" is declared twice")]
    Parameter(String),
    #[error("claim {0} is mapped twice")]
    ClaimMapped(String),
    #[error("claim {0} is given twice")]
    Claim(String),
    #[error("column \"{0}\" is listed twice")]
    Column(String),
    #[error("capability \"{0}\" is given twice")]
    Capability(String),
    #[error("source {0} is listed twice")]
    Source(String),
    #[error("limit {0} is given twice")]
    Limit(String),
}

/// What is wrong with an issuer's `KEYS` or `ALGS` (`what` names the key: `the PEM key`,
/// `the JWK with kid "k1"`, …).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeyProblem {
    #[error("unknown algorithm {shown} (known: {})", .known.join(", "))]
    UnknownAlgorithm { shown: String, known: Vec<&'static str> },
    #[error("ALGS {alg}: none of the issuer's keys can verify it")]
    AlgorithmUnverifiable { alg: &'static str },
    #[error("an hmac: secret must be at least {min} bytes")]
    ShortSecret { min: usize },
    #[error("{what} appears twice in the JWKS")]
    Twice { what: String },
    #[error("{what}: unsupported key type or curve")]
    Unsupported { what: String },
    #[error("{what}: RSA keys must have at least 2048 bits")]
    ShortRsa { what: String },
    #[error("{what}: RSA keys of more than {max} bits cannot be verified")]
    LongRsa { what: String, max: usize },
    #[error("{what}: the RSA exponent must be odd, at least 3 and below 2^33")]
    RsaExponent { what: String },
    #[error("{what}: its alg does not fit its key type")]
    AlgorithmMismatch { what: String },
    #[error("{what} is not a valid key")]
    NotAKey { what: String },
    #[error("{what}: an HMAC key must be at least {min} bytes")]
    ShortHmac { what: String, min: usize },
    /// A fixed rule about the form of the keys (free text, as `Invalid::Rule`).
    #[error("{0}")]
    Rule(&'static str),
}

impl From<Management> for Syntax {
    fn from(m: Management) -> Syntax {
        Syntax::Management(m)
    }
}

impl From<Management> for super::AclError {
    fn from(m: Management) -> super::AclError {
        super::AclError::Syntax(Syntax::Management(m))
    }
}

impl From<Duplicate> for super::AclError {
    fn from(d: Duplicate) -> super::AclError {
        super::AclError::Invalid(Invalid::Duplicate(d))
    }
}

impl From<KeyProblem> for super::AclError {
    fn from(k: KeyProblem) -> super::AclError {
        super::AclError::Invalid(Invalid::Keys(k))
    }
}
