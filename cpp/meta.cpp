// The metadata helpers Rust's `acl_meta` table function calls (src/ffi/meta.rs).
#include "acl_shim.hpp"

// Metadata under a principal (specs/005): the listing table function asks, from its bind, for
// the output columns of each object as the principal reads it. The query is bound in the
// caller's own context and transaction (so it sees exactly what the principal's statement would),
// never executed. Nothing here throws into Rust: any failure is `false`. (The declarations, and
// AclColumnSink, are in acl_ffi.hpp, generated from src/ffi/meta.rs.)

extern "C" bool acl_shim_describe(duckdb_client_context ctx, const char *sql, size_t len, AclColumnSink sink,
                                  void *user) {
	try {
		auto &context = reinterpret_cast<CClientContextWrapper *>(ctx)->context;
		Parser parser(ParserOptions::Builtin()); // no parser extension: never our own override
		parser.ParseQuery(string(sql, len));
		if (parser.statements.size() != 1 || parser.statements[0]->type != StatementType::SELECT_STATEMENT) {
			return false;
		}
		auto binder = Binder::CreateBinder(context);
		auto bound = binder->Bind(*parser.statements[0]);
		for (idx_t i = 0; i < bound.names.size() && i < bound.types.size(); i++) {
			auto type = bound.types[i].ToString();
			auto &name = bound.names[i].GetIdentifierName();
			sink(user, name.data(), name.size(), type.data(), type.size());
		}
		return true;
	} catch (...) {
		return false;
	}
}

// The tables and views of a physical schema (a virtual schema's target, specs/005 "Metadata"),
// as `(name, "BASE TABLE" | "VIEW")`, read from the Catalog in the caller's context and
// transaction (so its own uncommitted DDL shows, as for `acl_shim_describe`). The Catalog API
// rather than `duckdb_tables()` through the C API: a nested query from inside a bind would need
// a second connection, i.e. another transaction. Temp and system catalogs are never enumerated
// (their contents are per connection or internal, and the listing's cache stamp leaves them out).
// `false`: the schema is missing or could not be read.
extern "C" bool acl_shim_schema_objects(duckdb_client_context ctx, const char *db, size_t db_len, const char *schema,
                                        size_t schema_len, AclColumnSink sink, void *user) {
	try {
		auto &context = reinterpret_cast<CClientContextWrapper *>(ctx)->context;
		auto entry = Catalog::GetSchema(context, Identifier(string(db, db_len)), Identifier(string(schema, schema_len)),
		                                OnEntryNotFound::RETURN_NULL);
		if (!entry) {
			return false;
		}
		auto &catalog = entry->ParentCatalog();
		if (catalog.IsTemporaryCatalog() || catalog.IsSystemCatalog()) {
			return false;
		}
		// Tables and views may share one catalog set: each scan keeps only its own type.
		for (auto type : {CatalogType::TABLE_ENTRY, CatalogType::VIEW_ENTRY}) {
			entry->Scan(context, type, [&](CatalogEntry &e) {
				if (e.type != type || e.internal || e.temporary) {
					return;
				}
				auto &name = e.name.GetIdentifierName();
				string kind = type == CatalogType::VIEW_ENTRY ? "VIEW" : "BASE TABLE";
				sink(user, name.data(), name.size(), kind.data(), kind.size());
			});
		}
		return true;
	} catch (...) {
		return false;
	}
}

// A number that changes whenever any attached database's catalog changes (DDL committed, or
// made in the caller's transaction) or a database is attached or detached: the listing's cache
// key. Temp and system catalogs are left out. 0 means "do not cache" (a failure, or a catalog without versions).
extern "C" uint64_t acl_shim_catalog_stamp(duckdb_client_context ctx) {
	try {
		auto &context = reinterpret_cast<CClientContextWrapper *>(ctx)->context;
		uint64_t h = 1469598103934665603ULL;
		auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
		// (database_manager.hpp needs third-party headers the build does not extract: the
		// catalogs are reached through their schemas instead)
		vector<reference<Catalog>> seen;
		for (auto &schema : Catalog::GetAllSchemas(context)) {
			auto &catalog = schema.get().ParentCatalog();
			// a connection's own temp catalog would make every new connection miss
			if (catalog.IsTemporaryCatalog() || catalog.IsSystemCatalog()) {
				continue;
			}
			bool known = false;
			for (auto &c : seen) {
				known = known || &c.get() == &catalog;
			}
			if (known) {
				continue;
			}
			seen.push_back(catalog);
			mix(catalog.GetOid());
			auto version = catalog.GetCatalogVersion(context);
			if (!version.IsValid()) {
				return 0;
			}
			mix(version.GetIndex());
		}
		return h == 0 ? 1 : h;
	} catch (...) {
		return 0;
	}
}

// Binds `sql` (one SELECT) in the caller's context, as `acl_shim_describe` does, for the drift
// check and `acl_check_catalog` (src/ffi/drift.rs): true when it binds; otherwise DuckDB's message
// goes to `sink` (as the name) and the answer is false.
extern "C" bool acl_shim_bind_error(duckdb_client_context ctx, const char *sql, size_t len, AclColumnSink sink,
                                    void *user) {
	string message;
	try {
		auto &context = reinterpret_cast<CClientContextWrapper *>(ctx)->context;
		Parser parser(ParserOptions::Builtin()); // no parser extension: never our own override
		parser.ParseQuery(string(sql, len));
		if (parser.statements.size() != 1 || parser.statements[0]->type != StatementType::SELECT_STATEMENT) {
			message = "not one SELECT";
		} else {
			auto binder = Binder::CreateBinder(context);
			binder->Bind(*parser.statements[0]);
			return true;
		}
	} catch (std::exception &ex) {
		ErrorData error(ex);
		message = error.RawMessage();
	} catch (...) {
		message = "unknown error";
	}
	try {
		sink(user, message.data(), message.size(), "", 0);
	} catch (...) {
	}
	return false;
}

// The CHECK constraints of a physical table, each expression as DuckDB prints it (the hidden-CHECK
// refusal, src/ffi/drift.rs), read from the catalog in the caller's transaction. False: the table
// is missing or could not be read.
extern "C" bool acl_shim_table_checks(duckdb_client_context ctx, const char *db, size_t db_len, const char *schema,
                                      size_t schema_len, const char *name, size_t name_len, AclColumnSink sink,
                                      void *user) {
	try {
		auto &context = reinterpret_cast<CClientContextWrapper *>(ctx)->context;
		QualifiedName qualified(Identifier(string(db, db_len)), Identifier(string(schema, schema_len)),
		                        Identifier(string(name, name_len)));
		auto entry = Catalog::GetEntry<TableCatalogEntry>(context, qualified, OnEntryNotFound::RETURN_NULL);
		if (!entry) {
			return false;
		}
		for (auto &constraint : entry->GetConstraints()) {
			if (constraint->type != ConstraintType::CHECK) {
				continue;
			}
			auto text = constraint->Cast<CheckConstraint>().expression->ToString();
			sink(user, text.data(), text.size(), "", 0);
		}
		return true;
	} catch (...) {
		return false;
	}
}
