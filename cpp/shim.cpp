// The C++ side of duckdb-acl: it bridges DuckDB's C++-only parser hook to Rust and decides
// nothing. Rust answers "not ours", a rewritten SQL text, or a refusal; refusals are thrown
// (a returned error would be swallowed in fallback mode).
#include "acl_shim.hpp"
#include "duckdb/planner/planner_extension.hpp"

#include <cstdint>
#include <cstring>
#include <cstdlib>

using namespace acl_shim;

namespace {

const char *const CLOCK_SKEW_SETTING = "acl_jwt_clock_skew";
const uint64_t DEFAULT_CLOCK_SKEW = 60;
const char *const MAX_REWRITE_SETTING = "acl_max_rewrite_bytes";
const uint64_t DEFAULT_MAX_REWRITE_BYTES = 1 << 20;

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
	AclOut out {{nullptr, 0}, {nullptr, 0}, 0, nullptr, 0, 0, {nullptr, 0}};
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

// Per connection: the names each principal's statement was decided with (every such statement
// has a non-empty blob, also one that names no table), so each of DuckDB's errors about it is
// reported as the principal may see it: in the principal's names where a message names an object
// the rewrite placed, without the `LINE 1:` excerpt of the rewritten text or DuckDB's
// suggestions, and otherwise as DuckDB wrote it (src/rewrite/errors.rs).
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
	// Is the query running now a principal's statement?
	bool Ours() {
		lock_guard<mutex> guard(lock);
		return !current.empty();
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
		translated.clear();
	}
	RebindQueryInfo OnPlanningError(ClientContext &, SQLStatement &statement, ErrorData &error) override {
		auto names = Lookup(statement.query);
		if (!names.empty()) {
			auto message = Translate(names, error.Type(), error.RawMessage());
			{
				lock_guard<mutex> guard(lock);
				translated = message;
			}
			throw Exception(error.Type(), message);
		}
		return RebindQueryInfo::DO_NOT_REBIND;
	}
	void QueryEnd(ClientContext &, optional_ptr<ErrorData> error) override {
		string names, done;
		{
			lock_guard<mutex> guard(lock);
			names = std::move(current);
			current.clear();
			done = std::move(translated);
			translated.clear();
		}
		// A planning error arrives here a second time, already translated: translating it again
		// would read the principal's names as unknown objects.
		if (error && error->HasError() && !names.empty() && error->RawMessage() != done) {
			*error = ErrorData(error->Type(), Translate(names, error->Type(), error->RawMessage()));
		}
	}

private:
	static constexpr idx_t MAX_REMEMBERED = 1024;

	string Lookup(const string &query) {
		lock_guard<mutex> guard(lock);
		auto entry = by_query.find(query);
		return entry == by_query.end() ? string() : entry->second;
	}
	static string Translate(const string &names, ExceptionType type, const string &message) {
		OutGuard guard;
		auto kind = Exception::ExceptionTypeToString(type);
		if (!acl_rs_translate_error(names.data(), names.size(), kind.data(), kind.size(), message.data(),
		                            message.size(), &guard.out)) {
			return "acl: the statement failed (the details are withheld)";
		}
		return guard.Text();
	}

	void *state;
	mutex lock;
	unordered_map<string, string> by_query;
	string current;
	string translated; // what OnPlanningError threw for the current query
};

// SQL value keywords (CURRENT_TIMESTAMP, current_user, …) are column references in DuckDB's parse;
// the binder turns one that names no column into an unqualified call (`get_current_timestamp()`,
// Binder::GetSQLValueFunction), which a macro in temp.main or the default database would capture.
// In a principal's statement that call is to the built-in, like every call DuckDB's parser
// produces (the walk qualifies those); other statements bind as DuckDB would.
const char *ValueFunctionName(const string &column) {
	static const char *const NAMES[][2] = {
	    {"current_catalog", "current_catalog"}, {"current_date", "current_date"},
	    {"current_schema", "current_schema"},   {"current_role", "current_role"},
	    {"current_time", "get_current_time"},   {"current_timestamp", "get_current_timestamp"},
	    {"current_user", "current_user"},       {"localtime", "current_localtime"},
	    {"localtimestamp", "current_localtimestamp"}, {"session_user", "session_user"},
	    {"user", "user"}};
	auto lower = StringUtil::Lower(column);
	for (auto &entry : NAMES) {
		if (lower == entry[0]) {
			return entry[1];
		}
	}
	return nullptr;
}

GetSQLValueFunctionReturnType AclValueFunction(PlannerExtensionInput &input, const string &column,
                                               unique_ptr<ParsedExpression> &result) {
	auto name = ValueFunctionName(column);
	if (!name) {
		return GetSQLValueFunctionReturnType::CONTINUE_BINDING;
	}
	auto client = input.context.registered_state->Get<AclClientState>("acl_errors");
	if (!client || !client->Ours()) {
		return GetSQLValueFunctionReturnType::CONTINUE_BINDING;
	}
	result = make_uniq<FunctionExpression>(
	    QualifiedName(Identifier::SystemCatalog(), Identifier::DefaultSchema(), Identifier(string(name))),
	    vector<unique_ptr<ParsedExpression>>());
	return GetSQLValueFunctionReturnType::FINISH_BINDING;
}

// DuckDB's parse of a rewritten batch, kept with the batch cache's entry (specs/012) once the
// second check passed on it: a repeated batch copies these statements instead of parsing again.
// The parse depends on the text and on the caller's parser options, so it is used only under
// the same options; the entry holds only under the policy version it was decided with.
struct ParsedBatch {
	IdentifierCaseMode identifier_case_mode;
	bool integer_division;
	RegexMatchOperatorSemantics regex_semantics;
	idx_t max_expression_depth;
	shared_ptr<CompiledGrammar> grammar; // held, so its address cannot be reused
	vector<unique_ptr<SQLStatement>> statements;

	explicit ParsedBatch(const ParserOptions &o)
	    : identifier_case_mode(o.identifier_case_mode), integer_division(o.integer_division),
	      regex_semantics(o.regex_match_operator_semantics), max_expression_depth(o.max_expression_depth),
	      grammar(o.compiled_grammar) {
	}
	bool SameOptions(const ParserOptions &o) const {
		return identifier_case_mode == o.identifier_case_mode && integer_division == o.integer_division &&
		       regex_semantics == o.regex_match_operator_semantics &&
		       max_expression_depth == o.max_expression_depth && grammar.get() == o.compiled_grammar.get();
	}
};

extern "C" void FreeParsedBatch(void *parsed) {
	try {
		delete static_cast<ParsedBatch *>(parsed);
	} catch (...) {
	}
}

// Statement types whose Copy() is what DuckDB itself relies on for prepared statements.
bool Copyable(const SQLStatement &statement) {
	switch (statement.type) {
	case StatementType::SELECT_STATEMENT:
	case StatementType::INSERT_STATEMENT:
	case StatementType::UPDATE_STATEMENT:
	case StatementType::DELETE_STATEMENT:
	case StatementType::MERGE_INTO_STATEMENT:
	case StatementType::EXPLAIN_STATEMENT:
		return true;
	default:
		return false;
	}
}

bool CopyParsed(const void *check, const ParserOptions &options, vector<unique_ptr<SQLStatement>> &out) {
	auto kept = static_cast<const ParsedBatch *>(acl_rs_parsed_get(check));
	if (!kept || !kept->SameOptions(options)) {
		return false;
	}
	for (auto &statement : kept->statements) {
		out.push_back(statement->Copy());
	}
	return true;
}

// DuckDB parses the rewritten text (our override switched off), the second check compares each
// statement with the decision, and statements that carry a policy version get its tag.
vector<unique_ptr<SQLStatement>> ParseAndCheck(OutGuard &guard, const ParserOptions &options) {
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
	bool keep = true;
	for (idx_t i = 0; i < parser.statements.size(); i++) {
		auto &statement = *parser.statements[i];
		if (acl_rs_defence_on(guard.out.check, i)) {
			ParsedRefs parsed;
			try {
				ListParsedNames(statement, parsed);
			} catch (std::exception &) {
				throw InvalidInputException("acl: internal error: the second check could not read the statement");
			}
			OutGuard failure;
			if (!acl_rs_check(guard.out.check, i, parsed.refs.data(), parsed.refs.size(), parsed.strs.data(),
			                  parsed.strs.size(), &failure.out)) {
				throw InvalidInputException(failure.Text());
			}
			for (auto f : parsed.qualify) {
				f->SetQualifiedName(Identifier::SystemCatalog(), Identifier::DefaultSchema(), f->FunctionName());
			}
		} else {
			keep = false; // management statements: the gateway's own, never kept
		}
		keep = keep && Copyable(statement);
		if (acl_rs_versioned(guard.out.check, i)) {
			statement.query = VersionTag(guard.out.version) + statement.query;
			statement.stmt_location = QueryLocation(0, statement.query.size());
		}
	}
	if (keep && acl_rs_parsed_wanted(guard.out.check)) {
		auto kept = make_uniq<ParsedBatch>(options);
		for (auto &statement : parser.statements) {
			kept->statements.push_back(statement->Copy());
		}
		acl_rs_parsed_put(guard.out.check, kept.release(), FreeParsedBatch);
	}
	return std::move(parser.statements);
}

uint64_t UnsignedSetting(ClientContext &context, const char *name, uint64_t fallback) {
	Value value;
	if (context.TryGetCurrentSetting(name, value) && !value.IsNull()) {
		return value.GetValue<uint64_t>();
	}
	return fallback;
}

// The settings a decision depends on, read from the caller's context.
AclSettings ReadSettings(ParserOptions &options) {
	AclSettings settings {DEFAULT_CLOCK_SKEW, DEFAULT_MAX_REWRITE_BYTES, 0};
	if (options.context) {
		auto &context = *options.context;
		settings.clock_skew = UnsignedSetting(context, CLOCK_SKEW_SETTING, DEFAULT_CLOCK_SKEW);
		settings.max_rewrite_bytes = UnsignedSetting(context, MAX_REWRITE_SETTING, DEFAULT_MAX_REWRITE_BYTES);
		settings.in_transaction = context.transaction.HasActiveTransaction() && !context.transaction.IsAutoCommit();
	}
	return settings;
}

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
	auto settings = ReadSettings(options);
	OutGuard guard;
	// A batch seen before under the same policy needs no tokenizing.
	auto status = acl_rs_rewrite_cached(acl.state, query.data(), query.size(), &settings, &guard.out);
	if (status == MISS) {
		// DuckDB's own tokenizer finds the statement boundaries, so quotes, $$ strings and
		// comments split exactly as DuckDB would split them.
		auto simplified = Parser::Tokenize(query);
		vector<AclToken> tokens;
		tokens.reserve(simplified.size());
		for (auto &t : simplified) {
			tokens.push_back(AclToken {t.start, static_cast<uint8_t>(t.type)});
		}
		status = acl_rs_rewrite(acl.state, query.data(), query.size(), tokens.data(), tokens.size(), &settings,
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
	vector<unique_ptr<SQLStatement>> statements;
	if (!CopyParsed(guard.out.check, options, statements)) {
		statements = ParseAndCheck(guard, options);
	}
	auto names = guard.Names();
	if (options.context) {
		auto client = options.context->registered_state->GetOrCreate<AclClientState>("acl_errors", acl.state);
		if (!names.empty()) { // a principal's batch (management batches have no blob)
			client->Remember(statements, names);
		}
	}
	return ParserOverrideResult(std::move(statements));
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
	config.AddExtensionOption(MAX_REWRITE_SETTING,
	                          "bytes a principal's batch may grow to once the policy is applied; longer is refused",
	                          LogicalType::UBIGINT, Value::UBIGINT(DEFAULT_MAX_REWRITE_BYTES));

	ParserExtension extension;
	extension.parser_override = AclParserOverride;
	extension.parser_info = parser_info;
	ParserExtension::Register(config, extension);

	PlannerExtension planner;
	planner.get_sql_value_function = AclValueFunction;
	PlannerExtension::Register(config, planner);

	// Turn the hook on, unless the operator already chose a mode.
	Value current;
	db.TryGetCurrentSetting("allow_parser_override_extension", current);
	if (current.IsNull() || StringUtil::Lower(current.ToString()) == "default") {
		config.SetOptionByName("allow_parser_override_extension", Value("strict"));
	}
}

} // namespace

// Called by the Rust cdylib's exported `acl_duckdb_cpp_init` (a cdylib exports only Rust
// symbols). DuckDB exceptions thrown here unwind through that `C-unwind` frame to DuckDB.
extern "C" void acl_shim_init(ExtensionLoader *loader) {
	LoadInternal(*loader);
}
