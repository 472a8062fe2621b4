//! Function policy (surface §6): function keys, categories, grants and denies, virtual functions.
//!
//! A key is `(database, schema, name, scalar|table)`. The host's own functions (read from
//! `duckdb_functions()` at load, see `categories`) each land in one shipped category or in the
//! never set; operators add categories and move functions with `ALTER FUNCTION CATEGORY`.
//! Admission: a category holding the key granted to one of the principal's roles (or to ALL
//! ROLES), or a by-name grant; a deny anywhere wins; a key in no category is refused.
use super::categories::Shipped;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// Where a call sits: in an expression (scalar, aggregate, window, macro) or in FROM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FnKind {
    Scalar,
    Table,
}

impl FnKind {
    pub fn sql(self) -> &'static str {
        match self {
            FnKind::Scalar => "scalar",
            FnKind::Table => "table",
        }
    }
}

/// A function key, lower-case.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FnKey {
    pub db: String,
    pub schema: String,
    pub name: String,
    pub kind: FnKind,
}

/// The database DuckDB keeps its built-in functions in.
pub const SYSTEM_DB: &str = "system";

/// A function as an operator names it in a category or a grant: `name` (the built-in functions
/// of that name) or `db.schema.name` (exactly that object). It covers both kinds, because a
/// function that does not exist yet (a macro created later) has no known kind.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FnName {
    /// `None`: a built-in, in any schema of the system database.
    pub qualifier: Option<(String, String)>,
    pub name: String,
}

impl FnName {
    pub fn matches(&self, key: &FnKey) -> bool {
        self.name == key.name
            && match &self.qualifier {
                None => key.db == SYSTEM_DB,
                Some((db, schema)) => *db == key.db && *schema == key.schema,
            }
    }
}

impl std::fmt::Display for FnName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.qualifier {
            None => write!(f, "{}", self.name),
            Some((db, schema)) => write!(f, "{db}.{schema}.{}", self.name),
        }
    }
}

/// Where a host function landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Never callable under a principal, whatever is granted.
    Never,
    Shipped(Shipped),
}

/// One key of the host's function list and its shipped class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFn {
    pub key: FnKey,
    pub class: Class,
}

/// The host's functions, categorised once at load. Pragma functions are listed apart: they run
/// only through PRAGMA/CALL, which no principal may use, so they have no key.
#[derive(Default, PartialEq)]
pub struct HostFunctions {
    fns: Vec<HostFn>,
    /// Lower-case name → indexes into `fns`, in DuckDB's search order (main, pg_catalog, others).
    by_name: HashMap<String, Vec<usize>>,
    pub pragmas: Vec<(String, String, String)>,
    /// DuckDB's built-in type names, lower-case (`duckdb_types()` of the system database, read
    /// at load): the only types a principal may name (spec 004, the type gate). Built-ins cannot
    /// be shadowed in DuckDB 2.0 (every schema holds them as default entries), so a name in this
    /// set binds the built-in wherever it is looked up. Empty: every type name is refused.
    types: HashSet<String>,
    /// DuckDB's parser's own spellings, learned from it at load (`Spellings`, spec 011/016).
    spellings: Spellings,
}

/// A syntactic form of a call that DuckDB's parser may spell under another name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CallForm {
    /// `f()` or `f(*)` (the parser drops the star): `count` is `count_star`.
    NoArguments,
    /// `f(…) OVER (…)`: `first` is `first_value`.
    Over,
    /// `f(…) WITHIN GROUP (ORDER BY …)`: `percentile_cont` is `quantile_cont`.
    WithinGroup,
}

/// What DuckDB's parser produces on its own, learned at load by parsing probes (never a list kept
/// by hand): the calls it makes of syntax (`+`, `~~`, `[…]` → `list_value`, EXTRACT → `date_part`,
/// `x = ANY([…])` → `unnest`, …), and the names it gives calls in some forms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spellings {
    /// Unqualified names DuckDB's parser makes of syntax, lower-case.
    pub synthesised: HashSet<String>,
    /// (form, written name) → the name DuckDB's parse gives the call, lower-case.
    pub renamed: HashMap<(CallForm, String), String>,
}

impl std::fmt::Debug for HostFunctions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostFunctions({} keys, {} pragmas, {} types)", self.fns.len(), self.pragmas.len(), self.types.len())
    }
}

impl HostFunctions {
    /// Builds the lookup structures; `fns` may hold duplicates (overloads), they are merged.
    pub fn new(mut fns: Vec<HostFn>, mut pragmas: Vec<(String, String, String)>) -> HostFunctions {
        fns.sort_by(|a, b| search_order(&a.key).cmp(&search_order(&b.key)));
        fns.dedup_by(|a, b| a.key == b.key);
        pragmas.sort();
        pragmas.dedup();
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, f) in fns.iter().enumerate() {
            by_name.entry(f.key.name.clone()).or_default().push(i);
        }
        HostFunctions { fns, by_name, pragmas, types: HashSet::new(), spellings: Spellings::default() }
    }

    /// DuckDB's parser's spellings, as learned from it (`ffi` at load).
    pub fn with_spellings(mut self, spellings: Spellings) -> HostFunctions {
        self.spellings = spellings;
        self
    }

    /// Does DuckDB's parser make an unqualified call of this name from syntax?
    pub fn synthesised(&self, name: &str) -> bool {
        self.spellings.synthesised.contains(&name.to_ascii_lowercase())
    }

    /// The name DuckDB's parse gives a call of `name` written in `form`, when it is another.
    pub fn parsed_as(&self, form: CallForm, name: &str) -> Option<&str> {
        self.spellings.renamed.get(&(form, name.to_ascii_lowercase())).map(String::as_str)
    }

    /// The names a call may have been written with that DuckDB's parse names `parsed`.
    pub fn written_as<'a>(&'a self, parsed: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.spellings.renamed.iter().filter(move |(_, p)| p.eq_ignore_ascii_case(parsed)).map(|((_, w), _)| w.as_str())
    }

    /// The host's built-in type names (any case; kept lower-case).
    pub fn with_types<S: AsRef<str>>(mut self, types: impl IntoIterator<Item = S>) -> HostFunctions {
        self.types = types.into_iter().map(|t| t.as_ref().to_lowercase()).collect();
        self
    }

    /// Is `name` (as DuckDB looks it up, any case) one of the host's built-in types?
    pub fn is_builtin_type(&self, name: &str) -> bool {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            self.types.contains(&name.to_ascii_lowercase())
        } else {
            self.types.contains(name)
        }
    }

    pub fn type_count(&self) -> usize {
        self.types.len()
    }

    pub fn all(&self) -> &[HostFn] {
        &self.fns
    }

    pub fn is_empty(&self) -> bool {
        self.fns.is_empty()
    }

    /// Every key with this lower-case name.
    pub fn named<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a HostFn> + 'a {
        self.by_name.get(name).into_iter().flatten().map(move |&i| &self.fns[i])
    }

    pub fn get(&self, key: &FnKey) -> Option<&HostFn> {
        self.named(&key.name).find(|f| f.key == *key)
    }

    /// An unqualified call: the built-in DuckDB's search path reaches first (`system.main`, then
    /// `system.pg_catalog`, then extension schemas). User schemas are skipped on purpose: under a
    /// principal an unqualified name never means a macro someone created.
    pub fn resolve(&self, name: &str, kind: FnKind) -> Option<&HostFn> {
        self.named(name).find(|f| f.key.kind == kind && f.key.db == SYSTEM_DB)
    }

    /// `schema.name`: a built-in in that schema of the system database.
    pub fn resolve_in(&self, schema: &str, name: &str, kind: FnKind) -> Option<&HostFn> {
        self.named(name).find(|f| f.key.kind == kind && f.key.db == SYSTEM_DB && f.key.schema == schema)
    }

    pub fn class(&self, key: &FnKey) -> Option<Class> {
        self.get(key).map(|f| f.class)
    }
}

/// DuckDB's search order for the system database, then the rest by name.
fn search_order(k: &FnKey) -> (u8, &str, &str, &str, FnKind) {
    let rank = match (k.db.as_str(), k.schema.as_str()) {
        (SYSTEM_DB, "main") => 0,
        (SYSTEM_DB, "pg_catalog") => 1,
        (SYSTEM_DB, _) => 2,
        _ => 3,
    };
    (rank, &k.db, &k.schema, &k.name, k.kind)
}

/// A category: shipped ones take their members from the host list (minus `dropped`), every
/// category holds what `ALTER … ADD` put in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FnCategory {
    pub shipped: Option<Shipped>,
    pub added: BTreeSet<FnName>,
    pub dropped: BTreeSet<FnName>,
}

impl FnCategory {
    pub fn holds(&self, key: &FnKey, class: Option<Class>) -> bool {
        if self.added.iter().any(|n| n.matches(key)) {
            return true;
        }
        match self.shipped {
            Some(s) => class == Some(Class::Shipped(s)) && !self.dropped.iter().any(|n| n.matches(key)),
            None => false,
        }
    }
}

/// Who a function grant is for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Grantee {
    AllRoles,
    Role(String),
}

impl std::fmt::Display for Grantee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Grantee::AllRoles => write!(f, "ALL ROLES"),
            Grantee::Role(r) => write!(f, "ROLE {r}"),
        }
    }
}

/// What a function grant names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FnTarget {
    Category(String),
    Function(FnName),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Grant,
    Deny,
}

/// A virtual function's definition; the body is operator-written and trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FnBody {
    /// `AS <expr>` (scalar) with `acl_arg(n)` placeholders.
    Expr(sqlparser::ast::Expr),
    /// `AS <select>` (table function) with `acl_arg(n)` placeholders.
    Query(Box<sqlparser::ast::Query>),
    /// `ALIAS OF fn`: the qualified function it stands for.
    Alias(sqlparser::ast::ObjectName),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VirtualFunction {
    /// Declared parameters (name, type); `None` (ALIAS OF only): arguments pass as given.
    pub params: Option<Vec<(String, sqlparser::ast::DataType)>>,
    pub body: Arc<FnBody>,
    /// The definition as text, for listings.
    pub sql: String,
    pub comment: Option<String>,
}

/// `(catalog, schema, name, kind)`, lower-case.
pub type VirtualKey = (String, String, String, FnKind);

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionPolicy {
    /// The host's functions (shared by every policy snapshot of the instance).
    pub host: Arc<HostFunctions>,
    pub categories: BTreeMap<String, FnCategory>,
    /// Grants and denies to ALL ROLES.
    pub all_roles: BTreeMap<FnTarget, Access>,
    /// Grants and denies per role.
    pub role_grants: BTreeMap<String, BTreeMap<FnTarget, Access>>,
    pub virtuals: BTreeMap<VirtualKey, VirtualFunction>,
}

impl Default for FunctionPolicy {
    /// Every shipped category exists; `base` and `json` are granted to ALL ROLES (an operator
    /// may revoke them like any other grant).
    fn default() -> Self {
        let mut categories = BTreeMap::new();
        let mut all = BTreeMap::new();
        for s in Shipped::ALL {
            categories.insert(s.name().to_string(), FnCategory { shipped: Some(s), ..FnCategory::default() });
            if s.granted_by_default() {
                all.insert(FnTarget::Category(s.name().to_string()), Access::Grant);
            }
        }
        FunctionPolicy {
            host: Arc::default(),
            categories,
            all_roles: all,
            role_grants: BTreeMap::new(),
            virtuals: BTreeMap::new(),
        }
    }
}

/// The answer for one key and one principal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Admitted,
    Never,
    Denied,
    NotGranted,
}

impl FunctionPolicy {
    /// Does any category or by-name target of `target` hold `key`?
    pub fn target_holds(&self, target: &FnTarget, key: &FnKey, class: Option<Class>) -> bool {
        match target {
            FnTarget::Category(c) => self.categories.get(c).is_some_and(|c| c.holds(key, class)),
            FnTarget::Function(n) => n.matches(key),
        }
    }

    /// Admission of `key` for a principal holding `roles` (lower-case).
    pub fn admit<'a>(&self, roles: impl Iterator<Item = &'a str>, key: &FnKey) -> Admission {
        let class = self.host.class(key);
        if super::categories::never_callable(&key.name) || class == Some(Class::Never) {
            return Admission::Never;
        }
        let mut granted = false;
        let mut check = |g: &BTreeMap<FnTarget, Access>| {
            for (target, access) in g {
                if self.target_holds(target, key, class) {
                    match access {
                        Access::Deny => return true,
                        Access::Grant => granted = true,
                    }
                }
            }
            false
        };
        if check(&self.all_roles) {
            return Admission::Denied;
        }
        for r in roles {
            if self.role_grants.get(r).is_some_and(&mut check) {
                return Admission::Denied;
            }
        }
        if granted {
            Admission::Admitted
        } else {
            Admission::NotGranted
        }
    }

    pub fn grants(&self, who: &Grantee) -> Option<&BTreeMap<FnTarget, Access>> {
        match who {
            Grantee::AllRoles => Some(&self.all_roles),
            Grantee::Role(r) => self.role_grants.get(r),
        }
    }

    pub fn grants_mut(&mut self, who: &Grantee) -> &mut BTreeMap<FnTarget, Access> {
        match who {
            Grantee::AllRoles => &mut self.all_roles,
            Grantee::Role(r) => self.role_grants.entry(r.clone()).or_default(),
        }
    }

    /// Every category holding `key` (the listing `acl_function_categories()`).
    pub fn categories_of(&self, key: &FnKey) -> Vec<&str> {
        let class = self.host.class(key);
        self.categories.iter().filter(|(_, c)| c.holds(key, class)).map(|(n, _)| n.as_str()).collect()
    }
}
