// The C++ side of duckdb-acl: it bridges DuckDB's C++-only parser hook to Rust and decides
// nothing. Rust answers "not ours", a rewritten SQL text, or a refusal; refusals are thrown
// (a returned error would be swallowed in fallback mode).
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
#include "duckdb/catalog/catalog.hpp"
#include "duckdb/parser/query_node/list.hpp"
#include "duckdb/parser/statement/list.hpp"
#include "duckdb/parser/tableref/list.hpp"
#include "duckdb/parser/parsed_data/create_table_info.hpp"
#include "duckdb/parser/parsed_data/create_view_info.hpp"
#include "duckdb/parser/constraints/check_constraint.hpp"
#include "duckdb/main/prepared_statement_data.hpp"

#include <cstdint>
#include <cstring>
#include <deque>
#include <cstdlib>

using namespace duckdb;

extern "C" {
struct AclToken {
	uint64_t start;
	uint8_t type;
};
struct AclBuf {
	char *ptr;
	size_t len;
};
struct AclOut {
	AclBuf text;
	AclBuf names;
	uint64_t n_statements;
	void *check;
	uint64_t version;
};
struct AclRef {
	uint8_t kind;
	uint32_t first;
	uint32_t count;
};
struct AclStr {
	const char *ptr;
	size_t len;
};
void *acl_rs_state_new(void);
void acl_rs_state_free(void *state);
bool acl_rs_is_ours(const char *query, size_t len);
int32_t acl_rs_rewrite(void *state, const char *query, size_t len, const AclToken *tokens, size_t n_tokens,
                       uint64_t clock_skew, AclOut *out);
int32_t acl_rs_rewrite_cached(void *state, const char *query, size_t len, uint64_t clock_skew, AclOut *out);
void acl_rs_out_free(AclOut *out);
bool acl_rs_check(const void *check, size_t index, const AclRef *refs, size_t n_refs, const AclStr *strs,
                  size_t n_strs, AclOut *out);
bool acl_rs_versioned(const void *check, size_t index);
bool acl_rs_defence_on(const void *check, size_t index);
uint64_t acl_rs_policy_version(const void *state);
bool acl_rs_translate_error(const char *names, size_t names_len, const char *message, size_t message_len,
                            AclOut *out);
bool acl_rs_register(void *state, void *info, const duckdb_extension_access *access);
}

namespace {

const char *const CLOCK_SKEW_SETTING = "acl_jwt_clock_skew";
const uint64_t DEFAULT_CLOCK_SKEW = 60;

enum RewriteStatus : int32_t { NOT_OURS = 0, REWRITTEN = 1, REFUSED = 2, SYNTAX = 3, INVALID = 4, MISS = 5 };

struct AclParserInfo : public ParserExtensionInfo {
	explicit AclParserInfo(void *state_p) : state(state_p) {
	}
	~AclParserInfo() override {
		acl_rs_state_free(state);
	}
	void *state;
};

// Owns the Rust output buffer for the duration of one override call.
struct OutGuard {
	AclOut out {{nullptr, 0}, {nullptr, 0}, 0, nullptr, 0};
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

// The second line of defence (specs/011): lists what DuckDB's own parse of a rewritten statement
// names, for Rust to compare with the decision. It decides nothing; what it does not model is
// listed as OTHER (refused). Iterative, so a deep expression cannot exhaust the stack here.
enum RefKind : uint8_t {
	K_STATEMENT = 0,
	K_TABLE = 1,
	K_INSERT_TARGET = 2,
	K_FUNCTION = 3,
	K_OPERATOR = 4,
	K_TABLE_FUNCTION = 5,
	K_CTE_DEF = 6,
	K_OTHER = 7
};

class ParsedNames {
public:
	vector<AclRef> refs;
	vector<AclStr> strs;

	void Statement(SQLStatement &statement) {
		Literal(K_STATEMENT, StatementTypeToString(statement.type));
		Body(statement);
		while (!nodes.empty() || !tables.empty() || !exprs.empty()) {
			if (!nodes.empty()) {
				auto n = nodes.back();
				nodes.pop_back();
				VisitNode(*n);
			} else if (!tables.empty()) {
				auto t = tables.back();
				tables.pop_back();
				VisitTable(*t);
			} else {
				auto e = exprs.back();
				exprs.pop_back();
				VisitExpr(*e);
			}
		}
	}

private:
	void Body(SQLStatement &statement) {
		switch (statement.type) {
		case StatementType::SELECT_STATEMENT:
			Node(statement.Cast<SelectStatement>().node.get());
			break;
		case StatementType::INSERT_STATEMENT:
			Node(statement.Cast<InsertStatement>().node.get());
			break;
		case StatementType::UPDATE_STATEMENT:
			Node(statement.Cast<UpdateStatement>().node.get());
			break;
		case StatementType::DELETE_STATEMENT:
			Node(statement.Cast<DeleteStatement>().node.get());
			break;
		case StatementType::MERGE_INTO_STATEMENT:
			Node(statement.Cast<MergeIntoStatement>().node.get());
			break;
		case StatementType::EXPLAIN_STATEMENT: {
			auto &inner = statement.Cast<ExplainStatement>().stmt;
			if (inner) {
				Body(*inner);
			}
			break;
		}
		case StatementType::CREATE_STATEMENT: {
			// What a CREATE TABLE|VIEW reads or calls: its query, column defaults, CHECKs.
			auto &info = statement.Cast<CreateStatement>().info;
			if (info && info->type == CatalogType::TABLE_ENTRY) {
				auto &table = info->Cast<CreateTableInfo>();
				if (table.query) {
					Node(table.query->node.get());
				}
				for (auto &col : table.columns.Logical()) {
					if (col.HasDefaultValue()) {
						exprs.push_back(const_cast<ParsedExpression *>(&col.DefaultValue()));
					}
				}
				for (auto &c : table.constraints) {
					if (c && c->type == ConstraintType::CHECK) {
						Expr(c->Cast<CheckConstraint>().expression);
					}
				}
			} else if (info && info->type == CatalogType::VIEW_ENTRY) {
				auto &view = info->Cast<CreateViewInfo>();
				if (view.query) {
					Node(view.query->node.get());
				}
			} else {
				Literal(K_OTHER, "CREATE");
			}
			break;
		}
		default:
			break; // its type alone decides (transaction control, DROP: they read nothing)
		}
	}

	vector<QueryNode *> nodes;
	vector<TableRef *> tables;
	vector<ParsedExpression *> exprs;
	std::deque<string> literals; // a deque: pointers into it stay valid as it grows

	void Literal(uint8_t kind, string text) {
		literals.push_back(std::move(text));
		refs.push_back(AclRef {kind, static_cast<uint32_t>(strs.size()), 1});
		strs.push_back(AclStr {literals.back().data(), literals.back().size()});
	}
	void Name(uint8_t kind, const QualifiedName &name) {
		auto first = static_cast<uint32_t>(strs.size());
		for (auto &part : name.Path()) {
			auto &text = part.GetIdentifierName();
			strs.push_back(AclStr {text.data(), text.size()});
		}
		refs.push_back(AclRef {kind, first, static_cast<uint32_t>(strs.size() - first)});
	}
	void Name(uint8_t kind, const Identifier &name) {
		auto &text = name.GetIdentifierName();
		refs.push_back(AclRef {kind, static_cast<uint32_t>(strs.size()), 1});
		strs.push_back(AclStr {text.data(), text.size()});
	}
	void Node(QueryNode *n) {
		if (n) {
			nodes.push_back(n);
		}
	}
	void Table(TableRef *t) {
		if (t) {
			tables.push_back(t);
		}
	}
	void Expr(unique_ptr<ParsedExpression> &e) {
		if (e) {
			exprs.push_back(e.get());
		}
	}
	void Exprs(vector<unique_ptr<ParsedExpression>> &list) {
		for (auto &e : list) {
			Expr(e);
		}
	}
	void SetInfo(UpdateSetInfo *info) {
		if (info) {
			Exprs(info->expressions);
			Expr(info->condition);
		}
	}

	void VisitNode(QueryNode &node) {
		switch (node.type) {
		case QueryNodeType::SELECT_NODE: {
			auto &n = node.Cast<SelectNode>();
			Exprs(n.select_list);
			Exprs(n.groups.group_expressions);
			Expr(n.where_clause);
			Expr(n.having);
			Expr(n.qualify);
			Table(n.from_table.get());
			break;
		}
		case QueryNodeType::SET_OPERATION_NODE:
			for (auto &child : node.Cast<SetOperationNode>().children) {
				Node(child.get());
			}
			break;
		case QueryNodeType::RECURSIVE_CTE_NODE: {
			auto &n = node.Cast<RecursiveCTENode>();
			Node(n.left.get());
			Node(n.right.get());
			Exprs(n.key_targets);
			break;
		}
		case QueryNodeType::INSERT_QUERY_NODE: {
			auto &n = node.Cast<InsertQueryNode>();
			Name(K_INSERT_TARGET, n.qualified_name);
			if (n.select_statement) {
				Node(n.select_statement->node.get());
			}
			Table(n.table_ref.get());
			Exprs(n.returning_list);
			if (n.on_conflict_info) {
				SetInfo(n.on_conflict_info->set_info.get());
				Expr(n.on_conflict_info->condition);
			}
			break;
		}
		case QueryNodeType::UPDATE_QUERY_NODE: {
			auto &n = node.Cast<UpdateQueryNode>();
			Table(n.table.get());
			Table(n.from_table.get());
			SetInfo(n.set_info.get());
			Exprs(n.returning_list);
			break;
		}
		case QueryNodeType::DELETE_QUERY_NODE: {
			auto &n = node.Cast<DeleteQueryNode>();
			Table(n.table.get());
			for (auto &u : n.using_clauses) {
				Table(u.get());
			}
			Expr(n.condition);
			Exprs(n.returning_list);
			break;
		}
		case QueryNodeType::MERGE_QUERY_NODE: {
			auto &n = node.Cast<MergeQueryNode>();
			Table(n.target.get());
			Table(n.source.get());
			Expr(n.join_condition);
			for (auto &entry : n.actions) {
				for (auto &action : entry.second) {
					Expr(action->condition);
					SetInfo(action->update_info.get());
					Exprs(action->expressions);
				}
			}
			Exprs(n.returning_list);
			break;
		}
		default:
			Literal(K_OTHER, "query node");
			break;
		}
		ParsedExpressionIterator::EnumerateQueryNodeModifiers(node,
		                                                      [&](unique_ptr<ParsedExpression> &e) { Expr(e); });
		for (auto &kv : node.cte_map.map) {
			Name(K_CTE_DEF, kv.first);
			Node(kv.second->query_node.get());
			Exprs(kv.second->key_targets);
			Exprs(kv.second->payload_aggregates);
		}
	}

	void VisitTable(TableRef &ref) {
		switch (ref.type) {
		case TableReferenceType::BASE_TABLE: {
			auto &t = ref.Cast<BaseTableRef>();
			Name(K_TABLE, t.GetQualifiedName());
			if (t.at_clause) {
				Literal(K_OTHER, "AT clause");
			}
			break;
		}
		case TableReferenceType::JOIN: {
			auto &j = ref.Cast<JoinRef>();
			Table(j.left.get());
			Table(j.right.get());
			Expr(j.condition);
			break;
		}
		case TableReferenceType::SUBQUERY:
			Node(ref.Cast<SubqueryRef>().subquery->node.get());
			break;
		case TableReferenceType::TABLE_FUNCTION: {
			auto &f = ref.Cast<TableFunctionRef>();
			if (f.function && f.function->GetExpressionClass() == ExpressionClass::FUNCTION) {
				Name(K_TABLE_FUNCTION, f.function->Cast<FunctionExpression>().GetQualifiedName());
			} else {
				Literal(K_OTHER, "table function");
			}
			Expr(f.function);
			if (f.subquery) {
				Node(f.subquery->node.get());
			}
			break;
		}
		case TableReferenceType::EXPRESSION_LIST:
			for (auto &row : ref.Cast<ExpressionListRef>().values) {
				Exprs(row);
			}
			break;
		case TableReferenceType::EMPTY_FROM:
			break;
		case TableReferenceType::SHOW_REF: {
			auto &show = ref.Cast<ShowRef>();
			Node(show.query.get());
			if (!show.qualified_name.Path().empty()) {
				Name(K_TABLE, show.qualified_name);
			}
			break;
		}
		default:
			Literal(K_OTHER, "table reference");
			break;
		}
	}

	void VisitExpr(ParsedExpression &expr) {
		switch (expr.GetExpressionClass()) {
		case ExpressionClass::FUNCTION: {
			auto &f = expr.Cast<FunctionExpression>();
			Name(f.IsOperator() ? K_OPERATOR : K_FUNCTION, f.GetQualifiedName());
			break;
		}
		case ExpressionClass::WINDOW:
			Name(K_FUNCTION, expr.Cast<WindowExpression>().GetQualifiedName());
			break;
		case ExpressionClass::SUBQUERY:
			Node(expr.Cast<SubqueryExpression>().SubqueryMutable()->node.get());
			break;
		default:
			break;
		}
		ParsedExpressionIterator::EnumerateChildren(expr, [&](unique_ptr<ParsedExpression> &c) { Expr(c); });
	}
};

// The policy version a statement was decided under travels in its query text (statement->query,
// which DuckDB copies into a prepared statement), so an execution can tell it is stale.
const char *const VERSION_TAG = "/* acl:policy-version=";
const char *const STALE = "acl: the policy changed since this statement was prepared; prepare it again";

string VersionTag(uint64_t version) {
	return string(VERSION_TAG) + std::to_string(version) + " */ ";
}

bool TaggedVersion(const string &query, uint64_t &version) {
	auto n = strlen(VERSION_TAG);
	if (query.compare(0, n, VERSION_TAG) != 0) {
		return false;
	}
	auto end = query.find(' ', n);
	if (end == string::npos) {
		return false;
	}
	try {
		version = std::stoull(query.substr(n, end - n));
	} catch (std::exception &) {
		version = UINT64_MAX; // unreadable: never equal to the current version
	}
	return true;
}

// Per connection: the names each statement we produced was decided with, so DuckDB's own errors
// about it (binder, constraint, conversion) are reported in the principal's names, without the
// `LINE 1:` excerpt of the rewritten text.
class AclClientState : public ClientContextState {
public:
	explicit AclClientState(void *state_p) : state(state_p) {
	}
	// A prepared statement we produced runs only under the policy it was decided with: a grant or
	// revoke since then refuses it (PostgreSQL re-plans; we ask the client to prepare it again,
	// which decides it anew).
	RebindQueryInfo OnRebindPreparedStatement(ClientContext &, BindPreparedStatementCallbackInfo &info,
	                                          RebindQueryInfo) override {
		auto &unbound = info.prepared_statement.unbound_statement;
		uint64_t version;
		if (unbound && TaggedVersion(unbound->query, version) && version != acl_rs_policy_version(state)) {
			throw PermissionException(STALE);
		}
		return RebindQueryInfo::DO_NOT_REBIND;
	}
	void Remember(const vector<unique_ptr<SQLStatement>> &statements, const string &names) {
		lock_guard<mutex> guard(lock);
		if (by_query.size() > MAX_REMEMBERED) {
			by_query.clear();
		}
		for (auto &statement : statements) {
			by_query[statement->query] = names;
		}
	}
	bool CanRequestRebind() override {
		// Planning errors reach OnPlanningError only when some state can request a rebind, which
		// makes DuckDB bind a copy: ask for it only while one of our statements runs.
		lock_guard<mutex> guard(lock);
		return !current.empty();
	}
	void QueryBegin(ClientContext &context) override {
		auto names = Lookup(context.GetCurrentQuery());
		lock_guard<mutex> guard(lock);
		current = std::move(names);
	}
	RebindQueryInfo OnPlanningError(ClientContext &, SQLStatement &statement, ErrorData &error) override {
		auto names = Lookup(statement.query);
		if (!names.empty()) {
			throw Exception(error.Type(), Translate(names, error.RawMessage()));
		}
		return RebindQueryInfo::DO_NOT_REBIND;
	}
	void QueryEnd(ClientContext &, optional_ptr<ErrorData> error) override {
		string names;
		{
			lock_guard<mutex> guard(lock);
			names = std::move(current);
			current.clear();
		}
		if (error && error->HasError() && !names.empty()) {
			*error = ErrorData(error->Type(), Translate(names, error->RawMessage()));
		}
	}

private:
	static constexpr idx_t MAX_REMEMBERED = 1024;

	string Lookup(const string &query) {
		lock_guard<mutex> guard(lock);
		auto entry = by_query.find(query);
		return entry == by_query.end() ? string() : entry->second;
	}
	static string Translate(const string &names, const string &message) {
		OutGuard guard;
		if (!acl_rs_translate_error(names.data(), names.size(), message.data(), message.size(), &guard.out)) {
			return "acl: the statement failed (the details are withheld)";
		}
		return guard.Text();
	}

	void *state;
	mutex lock;
	unordered_map<string, string> by_query;
	string current;
};

ParserOverrideResult AclParserOverride(ParserExtensionInfo *info, const string &query, ParserOptions &options) {
	auto &acl = info->Cast<AclParserInfo>();
	// Text we produced coming back (a client re-parses a statement's query text, e.g. for a
	// relation): it runs only under the policy it was decided with.
	uint64_t tagged;
	if (TaggedVersion(query, tagged) && tagged != acl_rs_policy_version(acl.state)) {
		throw PermissionException(STALE);
	}
	if (!acl_rs_is_ours(query.data(), query.size())) {
		return ParserOverrideResult();
	}
	// Settings the decision depends on are read from the caller's context.
	uint64_t clock_skew = DEFAULT_CLOCK_SKEW;
	Value skew;
	if (options.context && options.context->TryGetCurrentSetting(CLOCK_SKEW_SETTING, skew) && !skew.IsNull()) {
		clock_skew = skew.GetValue<uint64_t>();
	}
	OutGuard guard;
	// A batch seen before under the same policy needs no tokenizing.
	auto status = acl_rs_rewrite_cached(acl.state, query.data(), query.size(), clock_skew, &guard.out);
	if (status == MISS) {
		// DuckDB's own tokenizer finds the statement boundaries, so quotes, $$ strings and
		// comments split exactly as DuckDB would split them.
		auto simplified = Parser::Tokenize(query);
		vector<AclToken> tokens;
		tokens.reserve(simplified.size());
		for (auto &t : simplified) {
			tokens.push_back(AclToken {t.start, static_cast<uint8_t>(t.type)});
		}
		status = acl_rs_rewrite(acl.state, query.data(), query.size(), tokens.data(), tokens.size(), clock_skew,
		                        &guard.out);
	}
	switch (status) {
	case NOT_OURS:
		return ParserOverrideResult();
	case REWRITTEN:
		break;
	case REFUSED:
		throw PermissionException(guard.Text());
	case SYNTAX:
		throw ParserException(guard.Text());
	default:
		throw InvalidInputException(guard.Text());
	}
	auto rewritten = guard.Text();
	ParserOptions inner = options;
	inner.parser_override_setting = AllowParserOverride::DEFAULT_OVERRIDE;
	Parser parser(inner);
	try {
		parser.ParseQuery(rewritten);
	} catch (std::exception &) {
		// The rewritten text names physical objects: never echo DuckDB's message about it.
		throw InvalidInputException("acl: internal error: the rewritten statement did not parse");
	}
	if (parser.statements.size() != guard.out.n_statements) {
		throw InvalidInputException("acl: internal error: the rewritten batch changed its statement count");
	}
	for (idx_t i = 0; i < parser.statements.size(); i++) {
		auto &statement = *parser.statements[i];
		if (acl_rs_defence_on(guard.out.check, i)) {
			ParsedNames parsed;
			try {
				parsed.Statement(statement);
			} catch (std::exception &) {
				throw InvalidInputException("acl: internal error: the second check could not read the statement");
			}
			OutGuard failure;
			if (!acl_rs_check(guard.out.check, i, parsed.refs.data(), parsed.refs.size(), parsed.strs.data(),
			                  parsed.strs.size(), &failure.out)) {
				throw InvalidInputException(failure.Text());
			}
		}
		if (acl_rs_versioned(guard.out.check, i)) {
			statement.query = VersionTag(guard.out.version) + statement.query;
			statement.stmt_location = QueryLocation(0, statement.query.size());
		}
	}
	auto names = guard.Names();
	if (options.context) {
		auto client = options.context->registered_state->GetOrCreate<AclClientState>("acl_errors", acl.state);
		if (!names.empty()) {
			client->Remember(parser.statements, names);
		}
	}
	return ParserOverrideResult(std::move(parser.statements));
}

// The duckdb crate registers Rust table/scalar functions through the C extension API; these
// callbacks hand it this instance's database and API table.
struct AccessInfo {
	DatabaseWrapper *wrapper;
	duckdb_ext_api_v1 api;
	string error;
};

void AccessSetError(duckdb_extension_info info, const char *error) {
	reinterpret_cast<AccessInfo *>(info)->error = error ? error : "unknown error";
}
duckdb_database *AccessGetDatabase(duckdb_extension_info info) {
	return reinterpret_cast<duckdb_database *>(&reinterpret_cast<AccessInfo *>(info)->wrapper);
}
const void *AccessGetApi(duckdb_extension_info info, const char *) {
	return &reinterpret_cast<AccessInfo *>(info)->api;
}

void LoadInternal(ExtensionLoader &loader) {
	auto &db = loader.GetDatabaseInstance();
	auto &config = DBConfig::GetConfig(db);

	void *state = acl_rs_state_new();
	if (!state) {
		throw InvalidInputException("acl: could not create the extension state");
	}
	auto parser_info = make_shared_ptr<AclParserInfo>(state); // owns state from here on

	AccessInfo access_info {new DatabaseWrapper(), db.GetExtensionAPIV1(), string()};
	access_info.wrapper->database = make_shared_ptr<DuckDB>(db);
	duckdb_extension_access access {AccessSetError, AccessGetDatabase, AccessGetApi};
	bool ok = acl_rs_register(state, &access_info, &access);
	delete access_info.wrapper; // the wrapper holds the instance; it must not outlive the load
	if (!ok) {
		throw InvalidInputException("acl: load failed: %s", access_info.error);
	}

	config.AddExtensionOption(CLOCK_SKEW_SETTING,
	                          "seconds of clock skew tolerated when ACL TOKEN judges exp and nbf",
	                          LogicalType::UBIGINT, Value::UBIGINT(DEFAULT_CLOCK_SKEW));

	ParserExtension extension;
	extension.parser_override = AclParserOverride;
	extension.parser_info = parser_info;
	ParserExtension::Register(config, extension);

	// Turn the hook on, unless the operator already chose a mode.
	Value current;
	db.TryGetCurrentSetting("allow_parser_override_extension", current);
	if (current.IsNull() || StringUtil::Lower(current.ToString()) == "default") {
		config.SetOptionByName("allow_parser_override_extension", Value("strict"));
	}
}

} // namespace

// Metadata under a principal (specs/005): the listing table function asks, from its bind, for
// the output columns of each object as the principal reads it. The query is bound in the
// caller's own context and transaction (so it sees exactly what the principal's statement would),
// never executed. Nothing here throws into Rust: any failure is `false`.
typedef void (*AclColumnSink)(void *user, const char *name, size_t name_len, const char *type, size_t type_len);

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

// Called by the Rust cdylib's exported `acl_duckdb_cpp_init` (a cdylib exports only Rust
// symbols). DuckDB exceptions thrown here unwind through that `C-unwind` frame to DuckDB.
extern "C" void acl_shim_init(ExtensionLoader *loader) {
	LoadInternal(*loader);
}
