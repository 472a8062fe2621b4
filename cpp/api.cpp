// The reference system's function API (spec 007, "The function API"): `acl_grant_catalog(role,
// vcat, caps, …)` and the other management functions, as macros over `acl_api`, a table function
// of src/ffi/functions.rs. Rust builds the management statements each call stands for
// (src/admin/calls.rs, whose `API` list these signatures follow; a unit test compares them) and
// runs them as `acl_exec` runs a batch. Macros, because only they take trailing arguments that
// may be left off; each runs its table function once, when the statement executes (an
// uncorrelated scalar subquery), qualified so that no macro of a user's schema can stand in for
// it. Principals cannot call any of them (`acl_` names are never callable).
#include "acl_shim.hpp"

#include "duckdb/catalog/default/default_functions.hpp"

namespace acl_shim {

namespace {

const DefaultMacro ACL_API_MACROS[] = {
    {DEFAULT_SCHEMA, "acl_create_catalog",
     "(vcat, comment := NULL, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_create_catalog', [CAST(vcat AS VARCHAR), CAST(comment AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_alter_catalog",
     "(vcat, comment) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_alter_catalog', [CAST(vcat AS VARCHAR), CAST(comment AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_drop_catalog",
     "(vcat, cascade := NULL, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_drop_catalog', [CAST(vcat AS VARCHAR), CAST(cascade AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_add_relation",
     "(vcat, vname, phys, columns, rls, comment := NULL, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_add_relation', [CAST(vcat AS VARCHAR), CAST(vname AS VARCHAR), CAST(phys AS VARCHAR), CAST(columns AS VARCHAR), CAST(rls AS VARCHAR), CAST(comment AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_add_view",
     "(vcat, vname, sql, returns := NULL, comment := NULL, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_add_view', [CAST(vcat AS VARCHAR), CAST(vname AS VARCHAR), CAST(sql AS VARCHAR), CAST(returns AS VARCHAR), CAST(comment AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_alter_relation",
     "(vcat, vname, field, value) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_alter_relation', [CAST(vcat AS VARCHAR), CAST(vname AS VARCHAR), CAST(field AS VARCHAR), CAST(value AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_drop_relation",
     "(vcat, vname, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_drop_relation', [CAST(vcat AS VARCHAR), CAST(vname AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_add_schema_alias",
     "(vcat, path, phys, comment := NULL, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_add_schema_alias', [CAST(vcat AS VARCHAR), CAST(path AS VARCHAR), CAST(phys AS VARCHAR), CAST(comment AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_expand_schema",
     "(vcat, path, phys, comment := NULL, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_expand_schema', [CAST(vcat AS VARCHAR), CAST(path AS VARCHAR), CAST(phys AS VARCHAR), CAST(comment AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_alter_schema_alias",
     "(vcat, path, phys) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_alter_schema_alias', [CAST(vcat AS VARCHAR), CAST(path AS VARCHAR), CAST(phys AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_refresh_schema_objects",
     "(vcat, path, prune := NULL) AS "
     "(SELECT sum(CAST(regexp_extract(status, '[(]([0-9]+) added', 1) AS BIGINT) + CAST(regexp_extract(status, '([0-9]+) dropped[)]', 1) AS BIGINT)) FROM system.main.acl_api('acl_refresh_schema_objects', [CAST(vcat AS VARCHAR), CAST(path AS VARCHAR), CAST(prune AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_drop_schema_alias",
     "(vcat, path, mode := NULL, cascade := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_drop_schema_alias', [CAST(vcat AS VARCHAR), CAST(path AS VARCHAR), CAST(mode AS VARCHAR), CAST(cascade AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_add_table_function",
     "(vcat, vname, template, params := NULL, returns := NULL, comment := NULL, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_add_table_function', [CAST(vcat AS VARCHAR), CAST(vname AS VARCHAR), CAST(template AS VARCHAR), CAST(params AS VARCHAR), CAST(returns AS VARCHAR), CAST(comment AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_add_table_function_alias",
     "(vcat, vname, target, params := NULL, returns := NULL, comment := NULL, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_add_table_function_alias', [CAST(vcat AS VARCHAR), CAST(vname AS VARCHAR), CAST(target AS VARCHAR), CAST(params AS VARCHAR), CAST(returns AS VARCHAR), CAST(comment AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_add_scalar",
     "(vcat, vname, template, params := NULL, returns := NULL, comment := NULL, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_add_scalar', [CAST(vcat AS VARCHAR), CAST(vname AS VARCHAR), CAST(template AS VARCHAR), CAST(params AS VARCHAR), CAST(returns AS VARCHAR), CAST(comment AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_add_scalar_alias",
     "(vcat, vname, target, params := NULL, returns := NULL, comment := NULL, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_add_scalar_alias', [CAST(vcat AS VARCHAR), CAST(vname AS VARCHAR), CAST(target AS VARCHAR), CAST(params AS VARCHAR), CAST(returns AS VARCHAR), CAST(comment AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_drop_function",
     "(vcat, vname, kind, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_drop_function', [CAST(vcat AS VARCHAR), CAST(vname AS VARCHAR), CAST(kind AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_add_reference",
     "(vcat, name, from_object, to_object, to_kind := NULL, args := NULL, pairs := NULL, expr := NULL, cardinality := NULL, optional := NULL, join_method := NULL, comment := NULL, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_add_reference', [CAST(vcat AS VARCHAR), CAST(name AS VARCHAR), CAST(from_object AS VARCHAR), CAST(to_object AS VARCHAR), CAST(to_kind AS VARCHAR), CAST(args AS VARCHAR), CAST(pairs AS VARCHAR), CAST(expr AS VARCHAR), CAST(cardinality AS VARCHAR), CAST(optional AS VARCHAR), CAST(join_method AS VARCHAR), CAST(comment AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_drop_reference",
     "(vcat, name, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_drop_reference', [CAST(vcat AS VARCHAR), CAST(name AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_comment",
     "(vcat, vname, kind, column_name, comment) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_comment', [CAST(vcat AS VARCHAR), CAST(vname AS VARCHAR), CAST(kind AS VARCHAR), CAST(column_name AS VARCHAR), CAST(comment AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_grant_catalog",
     "(role, vcat, caps, main := NULL, rls := NULL, columns := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_grant_catalog', [CAST(role AS VARCHAR), CAST(vcat AS VARCHAR), CAST(caps AS VARCHAR), CAST(main AS VARCHAR), CAST(rls AS VARCHAR), CAST(columns AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_alter_grant",
     "(role, vcat, field, value) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_alter_grant', [CAST(role AS VARCHAR), CAST(vcat AS VARCHAR), CAST(field AS VARCHAR), CAST(value AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_revoke_catalog",
     "(role, vcat) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_revoke_catalog', [CAST(role AS VARCHAR), CAST(vcat AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_grant_schema",
     "(role, vcat, path, caps, comment := NULL, into_schema := NULL, virtual_only := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_grant_schema', [CAST(role AS VARCHAR), CAST(vcat AS VARCHAR), CAST(path AS VARCHAR), CAST(caps AS VARCHAR), CAST(comment AS VARCHAR), CAST(into_schema AS VARCHAR), CAST(virtual_only AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_revoke_schema",
     "(role, vcat, path) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_revoke_schema', [CAST(role AS VARCHAR), CAST(vcat AS VARCHAR), CAST(path AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_grant_object",
     "(role, vcat, vname, caps, rls := NULL, columns := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_grant_object', [CAST(role AS VARCHAR), CAST(vcat AS VARCHAR), CAST(vname AS VARCHAR), CAST(caps AS VARCHAR), CAST(rls AS VARCHAR), CAST(columns AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_grant_admin",
     "(role, scope) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_grant_admin', [CAST(role AS VARCHAR), CAST(scope AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_revoke_admin",
     "(role) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_revoke_admin', [CAST(role AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_define_role",
     "(role, claims, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_define_role', [CAST(role AS VARCHAR), CAST(claims AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_alter_role",
     "(role, claims) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_alter_role', [CAST(role AS VARCHAR), CAST(claims AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_drop_role",
     "(role, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_drop_role', [CAST(role AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_define_issuer",
     "(issuer, keys, audiences, algs, role_claim, claim_map, jwks_uri := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_define_issuer', [CAST(issuer AS VARCHAR), CAST(keys AS VARCHAR), CAST(audiences AS VARCHAR), CAST(algs AS VARCHAR), CAST(role_claim AS VARCHAR), CAST(claim_map AS VARCHAR), CAST(jwks_uri AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_alter_issuer",
     "(issuer, field, value) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_alter_issuer', [CAST(issuer AS VARCHAR), CAST(field AS VARCHAR), CAST(value AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_drop_issuer",
     "(issuer, mode := NULL) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_drop_issuer', [CAST(issuer AS VARCHAR), CAST(mode AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_map_role",
     "(issuer, source, external, role) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_map_role', [CAST(issuer AS VARCHAR), CAST(source AS VARCHAR), CAST(external AS VARCHAR), CAST(role AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_drop_role_mapping",
     "(issuer, source, external, role) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_drop_role_mapping', [CAST(issuer AS VARCHAR), CAST(source AS VARCHAR), CAST(external AS VARCHAR), CAST(role AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_deny_function",
     "(name) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_deny_function', [CAST(name AS VARCHAR)]))"},
    {DEFAULT_SCHEMA, "acl_allow_function",
     "(name) AS "
     "(SELECT bool_and(status IS NOT NULL) FROM system.main.acl_api('acl_allow_function', [CAST(name AS VARCHAR)]))"},
    {nullptr, nullptr, nullptr}};

} // namespace

void RegisterApi(ExtensionLoader &loader) {
	for (idx_t i = 0; ACL_API_MACROS[i].name != nullptr; i++) {
		auto info = DefaultFunctionGenerator::CreateInternalMacroInfo(ACL_API_MACROS[i]);
		loader.RegisterFunction(*info);
	}
}

} // namespace acl_shim
