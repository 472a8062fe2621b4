//! What a principal's statement was refused for (the `Refused` class), one type per kind of
//! refusal. Names are the principal's own (virtual names it wrote or was granted, its label).
use thiserror::Error;

/// `<principal> lacks <capabilities><on>`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{principal} lacks {}{on}", .capabilities.join(", "))]
pub struct LacksCapability {
    /// How refusals name the principal, e.g. `role "analyst"`.
    pub principal: String,
    /// The capabilities missing, by name (`Caps::names`).
    pub capabilities: Vec<&'static str>,
    pub on: On,
}

/// Where a capability was lacking.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum On {
    /// On no catalog at all (an explicit-only capability such as `explain`).
    #[error("")]
    Anything,
    /// `temp`: creating temporary tables.
    #[error(" (temporary tables)")]
    TempTables,
    /// A virtual catalog the statement touches.
    #[error(" on {0}")]
    Catalog(String),
    /// A virtual schema, `catalog.schema`.
    #[error(" on schema {0}")]
    Schema(String),
    /// A virtual object, as its key prints (`catalog.name` or `catalog.schema.name`).
    #[error(" on {0}")]
    Object(String),
    /// A virtual function, as its key prints.
    #[error(" on {0}")]
    Function(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NotGranted {
    /// The one refusal for an unknown, physical or ungranted table name.
    #[error("table \"{name}\" does not exist or is not granted")]
    Table { name: String },
    /// A name starting in a catalog the principal cannot see (the name is not repeated).
    #[error("a table reference names a catalog that does not exist or is not granted (granted catalogs: {})",
        if .granted.is_empty() { "none".to_string() } else { .granted.join(", ") })]
    Catalog { granted: Vec<String> },
    /// A name to create that is in no virtual schema granted to the principal.
    #[error("\"{name}\" is not in a virtual schema granted to {principal}")]
    Schema { name: String, principal: String },
    /// `SHOW TABLES FROM x`: a name that is no schema or catalog the principal sees (not
    /// repeated, as for a catalog: it may be a physical database's).
    #[error("SHOW TABLES FROM names a schema or catalog that does not exist or is not granted")]
    SchemaOrCatalog,
    /// A column of a column-restricted write target that its slice does not show.
    #[error("column \"{column}\" of {object} is not granted (qualify columns of other tables)")]
    Column { column: String, object: String },
    /// A role of the principal that the policy does not hold.
    #[error("role \"{name}\" does not exist")]
    Role { name: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Unresolved {
    #[error("table name \"{name}\" is ambiguous: qualify it as catalog.schema.table")]
    AmbiguousTable { name: String },
    /// A name to create (CREATE/DROP) that two virtual schemas could hold.
    #[error("name \"{name}\" is ambiguous: qualify it as catalog.schema.name")]
    AmbiguousName { name: String },
    #[error("unqualified table \"{name}\": {principal} has no MAIN catalog, qualify it as catalog.table")]
    NoMainCatalog { name: String, principal: String },
    #[error("unqualified table \"{name}\": {principal} has several MAIN catalogs, qualify every name")]
    SeveralMainCatalogs { name: String, principal: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FunctionNotPermitted {
    /// Not admitted by the function policy (never callable, denied, not granted or unknown:
    /// never which).
    #[error("function \"{name}\" is not permitted")]
    Named { name: String },
    /// A bare word that is a column or a function without parentheses: the function is not
    /// admitted, and a column of that name must be qualified.
    #[error("function \"{word}\" is not permitted (a column of that name must be qualified: t.{word})")]
    BareWord { word: String },
    /// A table function in a position where only the gate's own may stand.
    #[error("this table function is not permitted")]
    TableFunction,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BadCall {
    /// A metadata function (`duckdb_tables()` and friends) called with arguments.
    #[error("function \"{name}\" takes no arguments")]
    TakesNoArguments { name: String },
    #[error("virtual function \"{name}\" takes no window or aggregate clauses")]
    WindowClauses { name: String },
    #[error("virtual function {function} takes one value per argument (not *, t.* or COLUMNS(…))")]
    OneValuePerArgument { function: String },
    #[error("virtual function {function} takes positional arguments only")]
    PositionalOnly { function: String },
    #[error("a window function cannot be an argument of virtual function {function}; compute it in a subquery")]
    WindowArgument { function: String },
    #[error("virtual function {function} takes {expected} argument{}", if *.expected == 1 { "" } else { "s" })]
    ArgumentCount { function: String, expected: usize },
    #[error("this form of calling virtual function {function} is not supported")]
    Form { function: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StatementNotPermitted {
    /// A statement type no rule handles.
    #[error("statement type {kind} is not permitted")]
    Kind { kind: String },
    /// A statement type the gate admits, in a position (a nested statement) the rules do not.
    #[error("statement type {kind} is not permitted here")]
    KindHere { kind: String },
    #[error("SELECT … INTO is not permitted")]
    SelectInto,
    /// A batch that mixes management statements and DuckDB's own.
    #[error("ACL ADMIN takes only management statements, or only DuckDB's own statements: send them in separate batches")]
    AdminTakesManagementOnly,
    /// `ACL ROLE "r" ACL <not management>`.
    #[error("ACL after a prefix takes only management statements (or NATIVE <sql>)")]
    PrincipalTakesManagementOnly,
    /// `CHECK VIRTUAL CATALOG` answers with rows of its own: it cannot share a batch.
    #[error("CHECK VIRTUAL CATALOG runs alone in its batch")]
    CheckAlone,
    /// The policy is applied outside any transaction and is not rolled back with one.
    #[error("management statements run in their own transaction; COMMIT or ROLLBACK first")]
    ManagementInTransaction,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TypeNotPermitted {
    #[error("type \"{name}\" is not permitted (only DuckDB's built-in types can be named)")]
    Named { name: String },
    #[error("this form of type is not supported")]
    Form,
    /// A function that reads type names from a string argument got something else.
    #[error("the types {function} reads must be written as a string literal")]
    NotLiteral { function: String },
}

/// Why a token was rejected (fixed text, spec 003).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum TokenReason {
    #[error("malformed")]
    Malformed,
    #[error("unsupported critical header")]
    CriticalHeader,
    #[error("unknown issuer")]
    UnknownIssuer,
    #[error("the issuer's keys are unusable")]
    IssuerKeysUnusable,
    #[error("algorithm not allowed")]
    AlgorithmNotAllowed,
    #[error("unknown key id")]
    UnknownKey,
    #[error("bad signature")]
    BadSignature,
    #[error("wrong audience")]
    WrongAudience,
    #[error("it has no exp claim")]
    NoExpiry,
    #[error("expired")]
    Expired,
    #[error("not yet valid")]
    NotYetValid,
    #[error("no role is mapped for this token")]
    NoRole,
    /// The issuer's `KEYS FROM` file could not be read again for longer than
    /// `acl_jwks_max_stale` (spec 003, "Keys from a file").
    #[error("the issuer's keys are stale")]
    KeysStale,
    /// The issuer's `KEYS FROM` file is being read (after a load, a reload or a publish that
    /// brought the issuer): its keys are never taken from the policy or the store.
    #[error("the issuer's keys file has not been read yet")]
    KeysNotRead,
    /// The issuer's `KEYS FROM` file was read and could not be (or held no keys for it), and no
    /// read gave keys before.
    #[error("the issuer's keys file could not be read or holds no usable keys")]
    KeysUnreadable,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadOnly {
    #[error("{object} is a view and read-only")]
    View { object: String },
    /// The object's own slice or a grant's column mask: rows or values written could not be
    /// read back as written.
    #[error("{object} is read-only for {principal}: it has a column mask, a computed column or its own row policy")]
    Sliced { object: String, principal: String },
    #[error("column \"{column}\" of {object} is not writable")]
    Column { column: String, object: String },
}

/// Write forms refused on a target with a row or column policy (`object`: its virtual name).
/// A policy object the statement uses whose policy SQL no longer binds over its source (the
/// owner dropped, renamed or retyped what the object maps; issue 31, finding 4). Only the virtual
/// name: DuckDB's own error would name the physical columns.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("virtual {kind} {object} no longer matches its source; ask an administrator")]
pub struct Drifted {
    /// `table` or `view`.
    pub kind: &'static str,
    /// As the key prints (`catalog.name` or `catalog.schema.name`).
    pub object: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SlicedWrite {
    #[error("an INSERT into {object} must list its columns (the target has a row or column policy)")]
    MustListColumns { object: String },
    #[error("an INSERT into {object} must set column \"{column}\" (it is part of the row policy)")]
    MustSetColumn { object: String, column: String },
    #[error("INSERT … DEFAULT VALUES into {object} is not supported")]
    DefaultValues { object: String },
    #[error("this INSERT form is not supported on {object}")]
    InsertForm { object: String },
    #[error("this ON CONFLICT form is not supported on {object}")]
    OnConflictForm { object: String },
    #[error("INSERT … ON CONFLICT DO UPDATE and INSERT OR REPLACE are not supported on a sliced target")]
    Upsert,
    /// A CHECK of the target's table reads a column the principal sees and one it does not: each
    /// UPDATE's pass or fail would tell the hidden value (issue 31, finding 6).
    #[error("{verb} on {object} is refused: a CHECK constraint of its table relates a column you may write to a \
             column hidden from you")]
    HiddenCheck { verb: &'static str, object: String },
    #[error("tuple assignments to {object} are not supported")]
    TupleAssignment { object: String },
    #[error("RETURNING * is not permitted on a column-restricted target ({object}); name the columns")]
    ReturningStar { object: String },
    #[error("*, COLUMNS(…) and whole-row references over {object} are not permitted (it is column-restricted); name the columns")]
    Star { object: String },
    /// `#n` inside a write binds to the physical table's n-th column, not the principal's.
    #[error("a positional reference (#n) over {object} is not permitted (it is column-restricted); name the column")]
    Positional { object: String },
    #[error("column \"{column}\" is qualified by a name that is neither {object} nor a table of this statement")]
    ForeignQualifier { column: String, object: String },
    #[error("a subquery in MERGE … ON is not supported on {object} (it has a row policy); filter the USING source instead")]
    SubqueryInMergeOn { object: String },
    #[error("a subquery in a WHEN clause of a MERGE with WHEN NOT MATCHED BY SOURCE is not supported on {object} \
             (it has a row policy); compute it in the USING source, or write a separate UPDATE or DELETE")]
    SubqueryInBySourceClause { object: String },
    #[error("{} is not supported on {object} (it has a row or column policy); {}", .form.what(), .form.instead())]
    MergeClause { object: String, form: MergeForm },
    /// A star that may expand the target's row in a form the ENUM cast cannot take (spec 002,
    /// "ENUM labels").
    #[error("a star with EXCLUDE, REPLACE, RENAME, LIKE or an alias, or a star pattern, is not supported in a write to \
             {object} (its ENUM columns are shown as VARCHAR); name the columns")]
    EnumStar { object: String },
}

/// MERGE clause forms whose rows the write check could not follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeForm {
    UpdateWhere,
    UpdateSetStar,
    InsertWhere,
    InsertStar,
}

impl MergeForm {
    fn what(self) -> &'static str {
        match self {
            MergeForm::UpdateWhere => "UPDATE … WHERE in a MERGE clause",
            MergeForm::UpdateSetStar => "UPDATE SET *",
            MergeForm::InsertWhere => "INSERT … WHERE in a MERGE clause",
            MergeForm::InsertStar => "INSERT * and INSERT ROW",
        }
    }
    fn instead(self) -> &'static str {
        match self {
            MergeForm::UpdateWhere | MergeForm::InsertWhere => "put the condition in WHEN … AND",
            MergeForm::UpdateSetStar => "write UPDATE SET col = s.col, …",
            MergeForm::InsertStar => "write INSERT (col, …) VALUES (s.col, …)",
        }
    }
}

/// Statement forms no rule understands (fail closed).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Unsupported {
    #[error("this form of table name is not supported")]
    TableName,
    #[error("the target of {verb} must be a table, not a CTE")]
    CteTarget { verb: &'static str },
    #[error("the target of {verb} must be a table")]
    NotATableTarget { verb: &'static str },
    #[error("{verb} must name exactly one target table")]
    OneTarget { verb: &'static str },
    #[error("this INSERT form is not supported")]
    Insert,
    /// `INSERT INTO t (x.a)` where `x` is not the target (DuckDB takes no qualified column there).
    #[error("an INSERT column list names columns of its target only: \"{column}\" is qualified by another name")]
    InsertColumnQualifier { column: String },
    #[error("this UPDATE form is not supported")]
    Update,
    #[error("this DELETE form is not supported")]
    Delete,
    #[error("MERGE … OUTPUT is not supported")]
    MergeOutput,
    #[error("this MERGE source is not supported with WHEN NOT MATCHED BY SOURCE; write it as USING (SELECT …) AS s")]
    MergeSource,
    #[error("an unconditional {category} clause makes the {category} clauses after it unreachable")]
    UnreachableMergeClause { category: &'static str },
    #[error("this assignment form is not supported")]
    Assignment,
    #[error("this CTE form is not supported")]
    Cte,
    #[error("CTE \"{name}\" is defined twice")]
    CteTwice { name: String },
    #[error("pipe syntax is not supported")]
    Pipe,
    #[error("this kind of FROM item is not supported")]
    FromItem,
    #[error("TABLE <name> is not supported; use SELECT * FROM <name>")]
    TableStatement,
    #[error("a table reference in this position is not supported")]
    TablePosition,
    #[error("this form of function name is not supported")]
    FunctionName,
    #[error("this form of function call is not supported")]
    FunctionCall,
    #[error("this form of table function call is not supported")]
    TableFunctionCall,
    #[error("method-call syntax (x.f()) is not supported; write f(x)")]
    MethodCall,
    /// A PIVOT whose values come from the data: DuckDB creates a type of them first.
    #[error("PIVOT without an IN list is not supported; name the values: PIVOT … ON col IN (…)")]
    DynamicPivot,
    #[error("this EXPLAIN form is not supported")]
    Explain,
    #[error("this CREATE VIEW form is not supported")]
    CreateView,
    #[error("this CREATE TABLE form is not supported")]
    CreateTable,
    #[error("this DROP form is not supported")]
    Drop,
    #[error("a column type must not be qualified")]
    QualifiedColumnType,
    #[error("this column option is not supported")]
    ColumnOption,
    #[error("this table constraint is not supported")]
    TableConstraint,
    #[error("a temporary table is named t or temp.t")]
    TempTableName,
    #[error("a view that is not temporary cannot read a temporary table")]
    PersistentViewOfTemp,
    #[error("a view's body must be a query")]
    ViewBody,
    /// A listing in a view is the definer's catalog, which holds the view: describing the view
    /// lists the catalog again (spec 005, "Listings are not stored").
    #[error("a view cannot read a metadata listing (information_schema, duckdb_*(), SHOW): a listing describes every view in it; copy the rows with CREATE TABLE … AS SELECT")]
    ListingInView,
    /// Names of the extension's own (markers, regions, helpers).
    #[error("names starting with \"__acl\" are reserved")]
    ReservedName,
    #[error("identifiers in [brackets] are not supported")]
    BracketIdentifier,
    /// Text the printed statement could not carry faithfully (`what`: a literal or a name).
    #[error("{what} holding a quote after a backslash or two quotes in a row is not supported")]
    Unprintable { what: &'static str },
}

/// A bind of ours reached again, or too deep, from inside what it binds (spec 011, "Nesting").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Nesting {
    /// A metadata listing bound while another listing on the same thread describes its objects:
    /// an object it describes reads a listing (the object is listed without columns).
    #[error("a metadata listing cannot be read while another listing describes the objects it is in")]
    ListingInListing,
    /// A view guard bound while another view guard is judging its view.
    #[error("a view's guard was reached again while it judged the view")]
    GuardInGuard,
    /// Too little of the thread's stack is left to bind and plan what is nested below here.
    #[error("views are nested too deeply for this thread's stack")]
    Stack,
}

/// Why a view's definer's rights no longer hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Stale {
    #[error("rights that have changed")]
    RightsChanged,
    #[error("a token that has expired")]
    TokenExpired,
}

/// What a grant's expression uses that the union of several roles' slices cannot follow.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Uncombinable {
    #[error("a subquery")]
    Subquery,
    #[error("column \"{0}\", which an earlier grant hides")]
    HiddenColumn(String),
    #[error("a qualified column")]
    QualifiedColumn,
    #[error("a lambda")]
    Lambda,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum TooLarge {
    /// Longer than the shim accepts before any parsing.
    #[error("the statement is too long")]
    Statement,
    /// Past `acl_max_rewrite_bytes` once the policy is applied.
    #[error("the statement is too large after the policy is applied")]
    AfterPolicy,
}
