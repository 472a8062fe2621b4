//! Policy is data: virtual catalogs and their objects, roles and their grants. It is immutable
//! once published; changes build a new `Policy` and swap it in (see `state`).
pub mod caps;
pub mod categories;
pub mod functions;
pub mod policy_sql;

pub use caps::Caps;
/// Identifier folding (policy keys are lower-case), from the SQL text module.
pub use crate::sqltext::norm;
use std::collections::{BTreeMap, BTreeSet};

/// A physical object `db.schema.name`, spelled as the operator wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhysName {
    pub db: String,
    pub schema: String,
    pub name: String,
}

/// Key of a virtual object inside its catalog: `(schema, name)`, lower-case.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjKey {
    pub catalog: String,
    pub schema: String,
    pub name: String,
}

impl std::fmt::Display for ObjKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.schema == DEFAULT_SCHEMA {
            write!(f, "{}.{}", self.catalog, self.name)
        } else {
            write!(f, "{}.{}.{}", self.catalog, self.schema, self.name)
        }
    }
}

pub const DEFAULT_SCHEMA: &str = "main";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelationKind {
    /// A physical table: rewritten in place (RENAME form) unless a slice applies.
    Table(PhysName),
    /// `CREATE VIRTUAL VIEW`: a query over physical names, written by the operator; read-only.
    View(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    pub kind: RelationKind,
    pub comment: Option<String>,
    /// The object's own slice (SUBQUERY form); `Slice::default()` for RENAME form.
    pub slice: Slice,
    /// What the operator declared about its columns (never enforced).
    pub declared: Declared,
}

/// Facts an operator declares about a virtual table's or view's columns: shown in listings,
/// never enforced (the physical data decides); and how its ENUM columns are shown (`enums`,
/// enforced: spec 021). Column names lower-case.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    /// A virtual view's `(col TYPE, …)`: name and type as written (printed by sqlparser). Checked
    /// against the view's query when written (`admin::validate`).
    pub types: Option<Vec<(String, String)>>,
    /// Columns declared `NOT NULL` (`COLUMNS (id NOT NULL)`, or a view's `(id INTEGER NOT NULL)`).
    pub not_null: std::collections::BTreeSet<String>,
    /// `PRIMARY KEY (…)`, in its order; empty: none declared.
    pub primary_key: Vec<String>,
    /// `COMMENT ON VIRTUAL TABLE|VIEW c.n COLUMN x IS '…'`.
    pub column_comments: BTreeMap<String, String>,
    /// `TYPES (enums = sliced|varchar|keep)`: this object's ENUM exposure; `None`: the
    /// instance's `acl_enum_types` (`Policy::enum_types`).
    pub enums: Option<EnumTypes>,
}

/// How a principal is shown a column whose physical type is (or holds) an ENUM: the type lists
/// every label, also those only hidden rows carry (spec 021).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnumTypes {
    /// As VARCHAR wherever a policy narrows what the principal reads or writes (a slice of the
    /// object or of its grants, a virtual view, a virtual function); as DuckDB's type where it
    /// reads the physical table whole (RENAME form), whose every row it sees.
    Sliced,
    /// As VARCHAR everywhere, cast above every row filter (`typeof`, DESCRIBE, listings,
    /// results and writes agree).
    Varchar,
    /// As DuckDB's ENUM type everywhere, every label included.
    Keep,
}

impl Default for EnumTypes {
    fn default() -> EnumTypes {
        EnumTypes::DEFAULT
    }
}

impl EnumTypes {
    /// `acl_enum_types`'s default: no label of a hidden row is shown, and a table read whole
    /// costs nothing (spec 021, says why).
    pub const DEFAULT: EnumTypes = EnumTypes::Sliced;
    pub const ALL: [EnumTypes; 3] = [EnumTypes::Sliced, EnumTypes::Varchar, EnumTypes::Keep];

    /// The word of `acl_enum_types` and of `TYPES (enums = …)`.
    pub fn name(self) -> &'static str {
        self.c_name().to_str().unwrap_or_default()
    }

    /// `name`, NUL-terminated (the shim registers the setting's default with it).
    pub fn c_name(self) -> &'static std::ffi::CStr {
        match self {
            EnumTypes::Sliced => c"sliced",
            EnumTypes::Varchar => c"varchar",
            EnumTypes::Keep => c"keep",
        }
    }

    /// Whether ENUMs are shown as VARCHAR where the principal's access to the object is
    /// `sliced` (narrowed by a policy) or not (the physical table read or written whole).
    pub fn varchar(self, sliced: bool) -> bool {
        match self {
            EnumTypes::Sliced => sliced,
            EnumTypes::Varchar => true,
            EnumTypes::Keep => false,
        }
    }

    /// `name`'s inverse, case-insensitive.
    pub fn parse(word: &str) -> Option<EnumTypes> {
        EnumTypes::ALL.into_iter().find(|e| e.name().eq_ignore_ascii_case(word))
    }
}

impl Declared {
    pub fn is_empty(&self) -> bool {
        *self == Declared::default()
    }
}

/// `CREATE VIRTUAL REFERENCE c.r FROM a TO b ON (x = y, …)`: a hint between two virtual objects
/// of one catalog for clients (join paths); it grants nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    pub from: ObjKey,
    pub to: ObjKey,
    /// `(column of from, column of to)`, lower-case.
    pub on: Vec<(String, String)>,
    pub cardinality: Option<Cardinality>,
    /// `OPTIONAL`: a row of `from` may have no partner in `to`.
    pub optional: bool,
    pub comment: Option<String>,
}

/// A reference's cardinality, from `from`'s rows to `to`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cardinality {
    OneToOne,
    OneToMany,
    ManyToOne,
    ManyToMany,
}

impl Cardinality {
    pub const ALL: [Cardinality; 4] =
        [Cardinality::OneToOne, Cardinality::OneToMany, Cardinality::ManyToOne, Cardinality::ManyToMany];

    pub fn sql(self) -> &'static str {
        match self {
            Cardinality::OneToOne => "ONE_TO_ONE",
            Cardinality::OneToMany => "ONE_TO_MANY",
            Cardinality::ManyToOne => "MANY_TO_ONE",
            Cardinality::ManyToMany => "MANY_TO_MANY",
        }
    }

    /// The short spelling (`1:1`, `1:n`, `n:1`, `n:m`).
    pub fn short(self) -> &'static str {
        match self {
            Cardinality::OneToOne => "1:1",
            Cardinality::OneToMany => "1:n",
            Cardinality::ManyToOne => "n:1",
            Cardinality::ManyToMany => "n:m",
        }
    }
}

/// One output column of a slice: `name = expr`, or a plain column (`expr` = `None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Lower-case virtual column name.
    pub name: String,
    /// SQL over the physical columns (may use `acl_claim('k')`); `None`: the physical column of
    /// the same name, passed through unchanged (writable).
    pub expr: Option<String>,
}

/// A row predicate and a column list, as written in `RLS (…)` and `COLUMNS (…)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Slice {
    /// SQL predicate over the physical columns (may use `acl_claim('k')`).
    pub rls: Option<String>,
    /// `None`: every column, unchanged.
    pub columns: Option<Vec<Column>>,
}

impl Slice {
    pub fn is_empty(&self) -> bool {
        self.rls.is_none() && self.columns.is_none()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Catalog {
    pub comment: Option<String>,
    /// Keyed by `(schema, name)`, lower-case.
    pub objects: BTreeMap<(String, String), Relation>,
    /// `CREATE VIRTUAL SCHEMA c.s AS db.schema`, keyed by the lower-case schema name. A virtual
    /// schema holds no listed objects: every name in it denotes `db.schema.<name>` (live alias).
    pub schemas: BTreeMap<String, VirtualSchema>,
    /// `CREATE VIRTUAL SCHEMA c.s FROM db.schema`, keyed by the lower-case schema name: the
    /// source an expanded schema was listed from (its objects are ordinary listed objects in
    /// `objects`); `ALTER VIRTUAL SCHEMA … REFRESH` lists it again.
    pub expansions: BTreeMap<String, VirtualSchema>,
    /// `CREATE VIRTUAL REFERENCE`, keyed by `(schema, name)`, lower-case.
    pub references: BTreeMap<(String, String), Reference>,
    /// `SET SOURCES (…)`: the physical databases, schemas and tables this catalog's managers may
    /// name in its policy SQL (spec 007); none listed, nothing.
    pub sources: std::collections::BTreeSet<policy_sql::Source>,
}

/// A physical schema, spelled as the operator wrote it: the target of a live alias, or the source
/// of an expanded schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VirtualSchema {
    pub db: String,
    pub schema: String,
    pub comment: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogGrant {
    pub caps: Caps,
    pub main: bool,
    /// `GRANT CATALOG … RLS (…) COLUMNS (…)`: applies to every object of the catalog.
    pub slice: Slice,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectGrant {
    /// `None`: the grant named no capability and inherits its catalog grant's. `Some(NONE)`
    /// (`CAPS '{}'`): the explicit empty set, which holds nothing and hides the object.
    pub caps: Option<Caps>,
    pub slice: Slice,
}

impl ObjectGrant {
    /// False for the explicit empty set (`CAPS '{}'`), the reference system's way to take an
    /// object grant back.
    pub fn holds_something(&self) -> bool {
        self.caps != Some(Caps::NONE)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Role {
    pub catalog_grants: BTreeMap<String, CatalogGrant>,
    pub object_grants: BTreeMap<ObjKey, ObjectGrant>,
    /// `GRANT SCHEMA c.s … WITH (caps)`, keyed by `(catalog, schema)`: data caps plus create/drop.
    pub schema_grants: BTreeMap<(String, String), Caps>,
    /// `GRANT SCHEMA … COMMENT '…'`: a schema grant's comment, by the grant's key (spec 007).
    pub schema_grant_comments: BTreeMap<(String, String), String>,
    /// Default claims (`CREATE ROLE r CLAIMS (k = 'v')`), lower-case keys.
    pub claims: BTreeMap<String, String>,
    /// `GRANT ADMIN manage|passthrough TO ROLE r`: the role's administration scope over the whole
    /// policy (spec 007, "Administration scopes"); a catalog's `manage` is a capability of its
    /// catalog grant instead.
    pub admin: Option<AdminScope>,
    /// `GRANT RESOURCE GROUP g TO ROLE r` (spec 017): the groups a session of the role opens under.
    pub resource_groups: BTreeSet<String>,
}

/// `CREATE RESOURCE GROUP g (…)` (spec 017, "Resource groups"): limits a session takes from its
/// roles' groups when it opens, the most generous winning. `None`: no limit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceGroup {
    pub max_sessions: Option<u64>,
    pub max_result_rows: Option<u64>,
    pub max_stream_bytes: Option<u64>,
}

impl ResourceGroup {
    /// The limits' names, as written in `CREATE RESOURCE GROUP` and stored.
    pub const LIMITS: [&'static str; 3] = ["max_sessions", "max_result_rows", "max_stream_bytes"];

    pub fn limit_mut(&mut self, name: &str) -> Option<&mut Option<u64>> {
        match name {
            "max_sessions" => Some(&mut self.max_sessions),
            "max_result_rows" => Some(&mut self.max_result_rows),
            "max_stream_bytes" => Some(&mut self.max_stream_bytes),
            _ => None,
        }
    }
}

/// A role's administration scope (`GRANT ADMIN …`). `Passthrough` holds everything `Manage`
/// does, and GRANT/REVOKE ADMIN and `ACL NATIVE` besides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AdminScope {
    /// Global manage: every management statement except GRANT/REVOKE ADMIN.
    Manage,
    /// Everything, `ACL NATIVE <sql>` included.
    Passthrough,
}

impl AdminScope {
    pub const ALL: [AdminScope; 2] = [AdminScope::Manage, AdminScope::Passthrough];

    /// The word of `GRANT ADMIN <word>` and of the store's `admins.scope`.
    pub fn name(self) -> &'static str {
        match self {
            AdminScope::Manage => "manage",
            AdminScope::Passthrough => "passthrough",
        }
    }

    /// `name`'s inverse, case-insensitive.
    pub fn parse(word: &str) -> Option<AdminScope> {
        AdminScope::ALL.into_iter().find(|s| s.name().eq_ignore_ascii_case(word))
    }
}

/// A registered token issuer (`CREATE ISSUER`), as data; `auth` verifies against it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Issuer {
    /// The `iss` value tokens must carry.
    pub iss: String,
    /// A PEM key or a JWKS document, as given (or read from `KEYS FROM`).
    pub keys: String,
    /// Accepted `aud` values; empty: `aud` is not checked.
    pub audiences: Vec<String>,
    /// Accepted algorithms (upper-case, e.g. `RS256`); empty: every supported one that fits the keys.
    pub algs: Vec<String>,
    /// Dotted path of the claim holding role names (default `roles`).
    pub role_claim: String,
    /// `path => name`: token claims copied into the principal's claims.
    pub claim_map: Vec<(String, String)>,
    /// `KEYS FROM '<path>'`: the file `keys` was read from, re-read every
    /// `acl_jwks_refresh_interval` (auth::KeyFiles); `None`: inline keys.
    pub keys_file: Option<String>,
    /// What a role-claim value without a `MAP CLAIM` counts for.
    pub unmapped: Unmapped,
}

/// A token's role-claim value that no `MAP CLAIM`/`MAP GROUP` maps (specs/003, "Roles").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unmapped {
    /// It counts when it names an existing role (the reference system's rule, the default).
    #[default]
    Count,
    /// `UNMAPPED IGNORE`: only mapped values count.
    Ignore,
}

/// Comparable (`PartialEq`) so that a policy read back from a store can be checked against the
/// one written (the `version` counts publishes on this node and is compared too: set it first).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Policy {
    /// Bumped by every change and every publish on this node (a reload from the store included);
    /// caches key on it. The store's own policy version is kept apart (`store::StoreStatus`).
    pub version: u64,
    pub catalogs: BTreeMap<String, Catalog>,
    pub roles: im::OrdMap<String, Role>,
    pub issuers: BTreeMap<String, Issuer>,
    /// `MAP CLAIM 'value' FROM ISSUER 'iss' TO ROLE r`: `(iss, value)` → roles.
    pub claim_roles: BTreeMap<(String, String), Vec<String>>,
    /// Function categories, grants and virtual functions, with the host's function list.
    pub functions: functions::FunctionPolicy,
    /// Resource groups by name (`CREATE RESOURCE GROUP`); roles name them (`Role::resource_groups`).
    pub resource_groups: BTreeMap<String, ResourceGroup>,
    /// The policy store's schema while a DuckDB store is in use: never a source (set when
    /// published, like `functions.host`).
    pub home: Option<policy_sql::Home>,
    /// `acl_enum_types` (GLOBAL): the ENUM exposure of objects that declare none. The instance's
    /// setting, never stored; set when published, like `functions.host`, so a change of the
    /// setting is a new version and every cache keyed on the version starts over.
    pub enum_types: EnumTypes,
}

impl Policy {
    /// Changes the roles `needs` selects. The test is read-only: the persistent map copies
    /// only the paths to the roles it changes.
    pub fn update_roles(&mut self, needs: impl Fn(&Role) -> bool, mut change: impl FnMut(&mut Role)) {
        let names: Vec<String> = self.roles.iter().filter(|(_, r)| needs(r)).map(|(n, _)| n.clone()).collect();
        for n in names {
            if let Some(r) = self.roles.get_mut(&n) {
                change(r);
            }
        }
    }

    /// How `rel`'s ENUM columns are shown (its own `TYPES`, else the instance's setting).
    pub fn enums_of(&self, rel: &Relation) -> EnumTypes {
        rel.declared.enums.unwrap_or(self.enum_types)
    }

    pub fn relation(&self, key: &ObjKey) -> Option<&Relation> {
        self.catalogs.get(&key.catalog)?.objects.get(&(key.schema.clone(), key.name.clone()))
    }

    pub fn virtual_schema(&self, catalog: &str, schema: &str) -> Option<&VirtualSchema> {
        self.catalogs.get(catalog)?.schemas.get(schema)
    }

    /// A virtual schema a schema grant may name: a live alias or an expansion (`FROM`).
    pub fn grantable_schema(&self, catalog: &str, schema: &str) -> bool {
        self.catalogs.get(catalog).is_some_and(|c| c.schemas.contains_key(schema) || c.expansions.contains_key(schema))
    }

    /// The comment of a virtual schema, alias or expanded.
    pub fn schema_comment(&self, catalog: &str, schema: &str) -> Option<&str> {
        let cat = self.catalogs.get(catalog)?;
        cat.schemas.get(schema).or_else(|| cat.expansions.get(schema))?.comment.as_deref()
    }
}
