//! The store's tables (schema version `SCHEMA_VERSION`): one ordinary table per kind of policy
//! record, plus `meta`. Scalar fields are typed columns; nested lists are JSON text. A table's
//! first `key` columns identify a record (the store declares no constraints: the same DDL works
//! in every database, and `load` refuses a second record under one key).

/// A column's SQL type. Every value travels as text (`Row`); the type says how it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Text,
    Bool,
    Int,
    /// Microseconds since the epoch, shown as TIMESTAMP WITH TIME ZONE (listings only).
    Time,
}

impl Ty {
    pub fn sql(self) -> &'static str {
        match self {
            Ty::Text => "VARCHAR",
            Ty::Bool => "BOOLEAN",
            Ty::Int => "BIGINT",
            Ty::Time => "TIMESTAMPTZ",
        }
    }
}

#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Ty)],
    /// The first `key` columns identify a record.
    pub key: usize,
    /// What the table holds (the spec's table of tables; `acl_*` listing docs).
    pub about: &'static str,
}

impl Table {
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    pub fn column_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.columns.iter().map(|(n, _)| *n)
    }
}

use Ty::{Bool, Int, Text};

/// The schema version of this layout; a store of another one is refused by name.
pub const SCHEMA_VERSION: u64 = 5;

/// `<schema>.meta`: one row, the layout's version and the policy version (bumped by every
/// committed batch; other writers and `acl_reload` compare it).
pub const META: Table = Table {
    name: "meta",
    columns: &[("schema_version", Int), ("policy_version", Int)],
    key: 0,
    about: "the schema version and the policy version (one row)",
};

pub const CATALOGS: Table = Table {
    name: "catalogs",
    columns: &[("name", Text), ("comment", Text)],
    key: 1,
    about: "virtual catalogs",
};

/// Virtual tables (`kind` 'table': the physical name, and the object's own slice) and virtual
/// views (`kind` 'view': the query).
pub const OBJECTS: Table = Table {
    name: "objects",
    columns: &[
        ("catalog", Text),
        ("schema", Text),
        ("name", Text),
        ("kind", Text),
        ("phys_db", Text),
        ("phys_schema", Text),
        ("phys_name", Text),
        ("query", Text),
        ("rls", Text),
        ("columns", Text),
        ("comment", Text),
        ("declared", Text),
    ],
    key: 3,
    about: "virtual tables and views, with their own slices (RLS, COLUMNS as JSON) and what is declared of their columns (JSON)",
};

/// `CREATE VIRTUAL REFERENCE`: a join hint between two objects of the catalog.
pub const REFERENCES: Table = Table {
    name: "virtual_references",
    columns: &[
        ("catalog", Text),
        ("schema", Text),
        ("name", Text),
        ("from_schema", Text),
        ("from_name", Text),
        ("to_schema", Text),
        ("to_name", Text),
        ("on_columns", Text),
        ("cardinality", Text),
        ("optional", Bool),
        ("comment", Text),
    ],
    key: 3,
    about: "virtual references between two objects of a catalog (ON pairs as JSON)",
};

pub const SCHEMAS: Table = Table {
    name: "schemas",
    columns: &[("catalog", Text), ("schema", Text), ("phys_db", Text), ("phys_schema", Text), ("comment", Text), ("kind", Text)],
    key: 2,
    about: "virtual schemas: kind 'alias' (a live alias of a physical schema) or 'expansion' (its objects listed, from this source)",
};

pub const ROLES: Table = Table { name: "roles", columns: &[("name", Text)], key: 1, about: "roles" };

pub const ROLE_CLAIMS: Table = Table {
    name: "role_claims",
    columns: &[("role", Text), ("claim", Text), ("value", Text)],
    key: 2,
    about: "a role's default claims",
};

pub const CATALOG_GRANTS: Table = Table {
    name: "catalog_grants",
    columns: &[("role", Text), ("catalog", Text), ("caps", Text), ("main", Bool), ("rls", Text), ("columns", Text)],
    key: 2,
    about: "GRANT CATALOG: capabilities (JSON), MAIN, the grant's slice",
};

pub const OBJECT_GRANTS: Table = Table {
    name: "object_grants",
    columns: &[
        ("role", Text),
        ("catalog", Text),
        ("schema", Text),
        ("name", Text),
        ("caps", Text),
        ("rls", Text),
        ("columns", Text),
    ],
    key: 4,
    about: "GRANT TABLE|VIEW|OBJECT: capabilities (JSON; NULL inherits the catalog grant's), slice",
};

pub const SCHEMA_GRANTS: Table = Table {
    name: "schema_grants",
    columns: &[("role", Text), ("catalog", Text), ("schema", Text), ("caps", Text), ("comment", Text)],
    key: 3,
    about: "GRANT SCHEMA on a virtual schema (alias or expansion); comment added in schema version 5",
};

pub const ISSUERS: Table = Table {
    name: "issuers",
    columns: &[
        ("iss", Text),
        ("keys", Text),
        ("keys_file", Text),
        ("audiences", Text),
        ("algs", Text),
        ("role_claim", Text),
        ("claim_map", Text),
        ("unmapped", Text),
    ],
    key: 1,
    about: "token issuers: keys as registered (or read from keys_file), lists as JSON",
};

pub const CLAIM_MAPS: Table = Table {
    name: "claim_maps",
    columns: &[("iss", Text), ("value", Text), ("role", Text)],
    key: 3,
    about: "MAP CLAIM: an issuer's role-claim value to a role",
};

pub const FUNCTION_CATEGORIES: Table = Table {
    name: "function_categories",
    columns: &[("name", Text), ("shipped", Text)],
    key: 1,
    about: "function categories (shipped: the built-in category it is, NULL for an operator's)",
};

/// `db`/`schema` NULL: a built-in named by name alone.
pub const FUNCTION_MEMBERS: Table = Table {
    name: "function_members",
    columns: &[("category", Text), ("db", Text), ("schema", Text), ("name", Text), ("member", Text)],
    key: 5,
    about: "ALTER FUNCTION CATEGORY … ADD|DROP: member 'added' or 'dropped'",
};

/// `role` NULL: ALL ROLES. `target` 'category' (`name` is the category) or 'function'.
pub const FUNCTION_GRANTS: Table = Table {
    name: "function_grants",
    columns: &[("role", Text), ("target", Text), ("db", Text), ("schema", Text), ("name", Text), ("access", Text)],
    key: 5,
    about: "GRANT|DENY FUNCTION [CATEGORY]: access 'grant' or 'deny'; role NULL is ALL ROLES",
};

pub const VIRTUAL_FUNCTIONS: Table = Table {
    name: "virtual_functions",
    columns: &[
        ("catalog", Text),
        ("schema", Text),
        ("name", Text),
        ("kind", Text),
        ("params", Text),
        ("body_kind", Text),
        ("body", Text),
        ("definition", Text),
        ("comment", Text),
    ],
    key: 4,
    about: "virtual scalars and table functions: parameters (JSON), the checked body",
};

/// Admin scopes (`GRANT ADMIN manage|passthrough TO ROLE r`): one row per role that holds one.
/// The table was created with schema version 1 before it was written, so it needs none new; its
/// key is the role (a role holds one scope: `load` refuses a second row).
pub const ADMINS: Table = Table {
    name: "admins",
    columns: &[("role", Text), ("scope", Text)],
    key: 1,
    about: "GRANT ADMIN: a role's administration scope, 'manage' or 'passthrough'",
};

/// `ALTER VIRTUAL CATALOG c SET SOURCES (…)` (schema version 3): where the catalog's managers'
/// policy SQL may name physical objects; `schema`/`name` NULL: the whole database or schema.
pub const CATALOG_SOURCES: Table = Table {
    name: "catalog_sources",
    columns: &[("catalog", Text), ("db", Text), ("schema", Text), ("name", Text)],
    key: 4,
    about: "physical databases, schemas and tables listed for a catalog's managers (SET SOURCES)",
};

/// `CREATE RESOURCE GROUP` (schema version 4, spec 017): a limit NULL is no limit.
pub const RESOURCE_GROUPS: Table = Table {
    name: "resource_groups",
    columns: &[("name", Text), ("max_sessions", Int), ("max_result_rows", Int), ("max_stream_bytes", Int)],
    key: 1,
    about: "resource groups: the limits a session takes from its roles' groups (NULL: no limit)",
};

/// `GRANT RESOURCE GROUP g TO ROLE r` (schema version 4).
pub const RESOURCE_GROUP_GRANTS: Table = Table {
    name: "resource_group_grants",
    columns: &[("role", Text), ("resource_group", Text)],
    key: 2,
    about: "GRANT RESOURCE GROUP: the groups a role's sessions open under",
};

/// The tables each schema version added, for `Store::upgrade` (a store of version `v` gets the
/// tables of every later one).
pub const ADDED: [(u64, &[&Table]); 2] = [(3, &[&CATALOG_SOURCES]), (4, &[&RESOURCE_GROUPS, &RESOURCE_GROUP_GRANTS])];

/// The columns each schema version added to a table of an earlier one (`Store::upgrade` adds
/// them, NULL in every existing row): `schema_grants.comment` in 5.
pub const ADDED_COLUMNS: [(u64, &Table, &str); 1] = [(5, &SCHEMA_GRANTS, "comment")];

/// Every policy table, in the order `rows` returns them (and deletes/inserts run).
pub const TABLES: [&Table; 19] = [
    &CATALOGS,
    &CATALOG_SOURCES,
    &OBJECTS,
    &SCHEMAS,
    &REFERENCES,
    &ROLES,
    &ROLE_CLAIMS,
    &CATALOG_GRANTS,
    &OBJECT_GRANTS,
    &SCHEMA_GRANTS,
    &ISSUERS,
    &CLAIM_MAPS,
    &FUNCTION_CATEGORIES,
    &FUNCTION_MEMBERS,
    &FUNCTION_GRANTS,
    &VIRTUAL_FUNCTIONS,
    &ADMINS,
    &RESOURCE_GROUPS,
    &RESOURCE_GROUP_GRANTS,
];

/// Where `table` sits in `TABLES`.
pub fn index(table: &Table) -> usize {
    TABLES.iter().position(|t| t.name == table.name).expect("a table of the layout")
}
