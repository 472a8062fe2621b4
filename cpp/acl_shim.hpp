// What the C++ files share: DuckDB's headers and the Rust side's C ABI (src/ffi), which is
// defined once, in Rust, and reaches C++ as the generated acl_ffi.hpp.
#pragma once

#include "duckdb.hpp"
#include "duckdb/common/exception/parser_exception.hpp"
#include "duckdb/main/capi/capi_internal.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/client_context_state.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "duckdb/parser/expression/list.hpp"
#include "duckdb/parser/parsed_expression_iterator.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/parser_extension.hpp"
#include "duckdb/planner/binder.hpp"
#include "duckdb/catalog/catalog_entry/schema_catalog_entry.hpp"
#include "duckdb/catalog/catalog_entry/table_catalog_entry.hpp"
#include "duckdb/catalog/catalog.hpp"
#include "duckdb/parser/query_node/list.hpp"
#include "duckdb/parser/statement/list.hpp"
#include "duckdb/parser/tableref/list.hpp"
#include "duckdb/parser/parsed_data/create_table_info.hpp"
#include "duckdb/parser/parsed_data/create_view_info.hpp"
#include "duckdb/parser/constraints/check_constraint.hpp"
#include "duckdb/main/prepared_statement_data.hpp"
#include "duckdb/planner/planner_extension.hpp"
#include "duckdb/main/valid_checker.hpp"
#include "duckdb/transaction/meta_transaction.hpp"
#include "duckdb/catalog/default/default_functions.hpp"
#include "duckdb/catalog/default/default_table_functions.hpp"
#include "duckdb/parser/parsed_data/create_macro_info.hpp"

#include "acl_ffi.hpp"

#include <cstdint>
#include <cstring>
#include <deque>
#include <cstdlib>

using namespace duckdb;

namespace acl_shim {

// What DuckDB's own parse of a rewritten statement names (walk.cpp, specs/011), in the shape
// `acl_rs_check` reads: `strs` point into the statement or into `literals`.
struct ParsedRefs {
	vector<AclRef> refs;
	vector<AclStr> strs;
	std::deque<string> literals; // a deque: pointers into it stay valid as it grows
	// Unqualified calls to qualify to system.main once the check has passed (strs point into them).
	vector<FunctionExpression *> qualify;
};

// The guard dropped for leak-proof filters, on the bound plan (pushdown.cpp).
void RegisterPushdown(DBConfig &config);
// A cast from `from` to `to` that cannot fail for any value (cpp/pushdown_casts.cpp).
bool PushdownSafeCast(const LogicalType &from, const LogicalType &to);

// `acl_enum_varchar` and the setting `acl_enum_types` (enums.cpp); `owner` keeps `state` alive.
void RegisterEnums(ExtensionLoader &loader, DBConfig &config, DatabaseInstance &db,
                   shared_ptr<ParserExtensionInfo> owner, AclState *state);

// The numeric and boolean settings, each checked with an `acl:` message (settings.cpp).
void RegisterSettings(DBConfig &config, DatabaseInstance &db, shared_ptr<ParserExtensionInfo> owner, AclState *state);

// Throws on a statement it cannot read (the caller refuses it).
void ListParsedNames(SQLStatement &statement, ParsedRefs &out);

// ---- Transactions belong to their principal (txn.cpp, spec 001 "Transactions") ----
// Every statement produced under a principal carries who it runs as in its text (which DuckDB
// copies into a prepared statement and reports as the running query): a comment after the
// policy version tag, `/* acl:principal=<owner digest>;<kind> */ `. The digest is Rust's
// `engine::owner` (hex only).
enum TxnKind : char { TXN_OTHER = 's', TXN_BEGIN = 'b', TXN_COMMIT = 'c', TXN_ROLLBACK = 'r' };

TxnKind KindOf(const SQLStatement &statement);
string PrincipalTag(const string &principal, TxnKind kind);
// Reads the principal tag of a statement's text: at its start or after the leading `/* acl:… */ `
// comments we put there (the policy version tag). False for text without one (the gateway's).
bool TaggedPrincipal(const string &query, string &principal, TxnKind &kind);
bool ExplicitTransaction(ClientContext &context);

// What a principal's statement meets: an explicit transaction open, and aborted.
struct TxnState {
	bool open;
	bool aborted;
	explicit TxnState(ClientContext &context);
};

// Who began the explicit transaction open on a connection.
struct TxnOwner {
	bool known = false; // false: no explicit transaction, or the gateway's (see QueryEnd)
	string principal;   // the owner's digest; empty: the gateway (unprefixed BEGIN)

	// Why `who`'s statement of `kind` may not run now (empty: it may).
	string Refusal(TxnState now, const string &who, TxnKind kind) const;
	// Throws the refusal, if any.
	void Check(TxnState now, const string &who, TxnKind kind) const;
};

// ---- Settings the decision depends on (registered in shim.cpp's LoadInternal) ----
constexpr const char *CLOCK_SKEW_SETTING = "acl_jwt_clock_skew";
constexpr uint64_t DEFAULT_CLOCK_SKEW = ACL_DEFAULT_CLOCK_SKEW;
constexpr const char *MAX_REWRITE_SETTING = "acl_max_rewrite_bytes";
constexpr uint64_t DEFAULT_MAX_REWRITE_BYTES = ACL_DEFAULT_MAX_REWRITE_BYTES;
constexpr const char *JWKS_REFRESH_SETTING = "acl_jwks_refresh_interval";
constexpr uint64_t DEFAULT_JWKS_REFRESH = ACL_DEFAULT_JWKS_REFRESH_INTERVAL;
constexpr const char *VERSION_CHECK_SETTING = "acl_version_check_interval";
constexpr uint64_t DEFAULT_VERSION_CHECK_INTERVAL = ACL_DEFAULT_VERSION_CHECK_INTERVAL;
constexpr const char *JWKS_MAX_STALE_SETTING = "acl_jwks_max_stale";
constexpr const char *ANONYMOUS_ADMIN_SETTING = "acl_allow_anonymous_admin";
constexpr const char *ENUM_TYPES_SETTING = "acl_enum_types";
constexpr uint64_t DEFAULT_JWKS_MAX_STALE = ACL_DEFAULT_JWKS_MAX_STALE;
uint64_t UnsignedSetting(ClientContext &context, const char *name, uint64_t fallback);
// The settings a decision depends on, read from a client context (shim.cpp).
AclSettings ClientSettings(ClientContext &context);

// ---- Sessions (sessions.cpp, specs/017): the acl_session_* functions and GLOBAL settings ----
constexpr const char *SESSION_IDLE_TIMEOUT_SETTING = "acl_session_idle_timeout";
constexpr const char *MAX_SESSIONS_SETTING = "acl_max_sessions";
constexpr const char *SESSION_BINDING_SETTING = "acl_session_token_binding";
// `owner` keeps `state` alive as long as the functions and settings.
void RegisterSessions(ExtensionLoader &loader, const shared_ptr<ParserExtensionInfo> &owner, AclState *state);
// ---- The Flight SQL door (flight.cpp, specs/018): acl_flight_serve/stop and its GLOBAL settings ----
void RegisterFlight(ExtensionLoader &loader, const shared_ptr<ParserExtensionInfo> &owner, AclState *state);

// ---- The reference's function API (api.cpp, spec 007): acl_grant_catalog(…) and the rest ----
void RegisterApi(ExtensionLoader &loader);

// Owns the Rust output buffer for the duration of one override call.
struct OutGuard {
	AclOut out {}; // all null and zero until Rust fills it
	~OutGuard() {
		acl_rs_out_free(&out);
	}
	static string Str(const AclBuf &b) {
		return string(b.ptr ? b.ptr : "", b.len);
	}
	string Text() const {
		return Str(out.text);
	}
	string Names() const {
		return Str(out.names);
	}
};

// ---- Per connection (client.cpp) ----
constexpr const char *CLIENT_STATE = "acl_errors";

// What a statement was decided under, carried in its text
// (`/* acl:policy-version=N expires=E session=S */`).
struct Tag {
	uint64_t version;
	int64_t expires;  // 0: none
	uint64_t session; // 0: none (the session's operator id, never its handle)
};
string VersionTag(uint64_t version, int64_t expires, uint64_t session);
// Reads the tag at the start of `query`; false when there is none (an unreadable one is stale).
bool Tagged(const string &query, Tag &tag);
// Throws unless the tag still holds: the same policy version, the token's exp not passed, the
// session live.
void CheckTag(const Tag &tag, AclState *state, uint64_t clock_skew);
// Tagged text coming back to the parser: the transaction rules (the tag itself is judged apart).
void ClientCheckTagged(ClientContext &context, AclState *state, const string &query);
// A batch about to be handed to DuckDB: checked against the open transaction, its names kept.
void ClientAccept(ClientContext &context, AclState *state, const string &principal,
                  const vector<unique_ptr<SQLStatement>> &statements, const string &names);
// The planner extension hook that binds SQL value keywords to the built-ins (client.cpp).
GetSQLValueFunctionReturnType AclValueFunction(PlannerExtensionInput &input, const string &column,
                                               unique_ptr<ParsedExpression> &result);

// ---- Kept parses (kept.cpp) ----
// The batch's kept parse, copied into `out`, if there is one for these parser options.
bool CopyParsed(const AclChecks *check, const ParserOptions &options, vector<unique_ptr<SQLStatement>> &out);
// The kept parse of the batch's shape, copied with the batch's numbers (counted in `state`).
bool CopyShape(AclState *state, OutGuard &guard, const ParserOptions &options, vector<unique_ptr<SQLStatement>> &out);
// Keeps copies of a checked parse where Rust wants them (the batch's entry; its shape's).
void KeepChecked(const AclChecks *check, const ParserOptions &options, const vector<unique_ptr<SQLStatement>> &statements);
// Statement types whose Copy() is what DuckDB itself relies on for prepared statements.
bool Copyable(const SQLStatement &statement);

} // namespace acl_shim
