// The C++ side of duckdb-acl: it bridges DuckDB's C++-only parser hook to Rust and decides
// nothing. Rust answers "not ours", a rewritten SQL text, or a refusal; refusals are thrown
// (a returned error would be swallowed in fallback mode).
#include "acl_shim.hpp"
#include "duckdb/planner/planner_extension.hpp"

#include <chrono>
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

// What a statement was decided under travels in its query text (statement->query, which DuckDB
// copies into a prepared statement), so an execution can tell it no longer holds: the policy
// version, and the `exp` of the token it was decided under (`/* acl:policy-version=N expires=E */`,
// E in unix seconds, absent when there is no token).
const char *const VERSION_TAG = "/* acl:policy-version=";
const char *const EXPIRES_TAG = " expires=";
const char *const STALE = "acl: the policy changed since this statement was prepared; prepare it again";
const char *const EXPIRED = "acl: the token this statement was prepared under has expired; prepare it again";

struct Tag {
	uint64_t version;
	int64_t expires; // 0: none
};

string VersionTag(uint64_t version, int64_t expires) {
	auto tag = string(VERSION_TAG) + std::to_string(version);
	if (expires != 0) {
		tag += EXPIRES_TAG + std::to_string(expires);
	}
	return tag + " */ ";
}

// Reads the tag at the start of `query`; false when there is none. A tag it cannot read is
// stale (a version that never matches).
bool Tagged(const string &query, Tag &tag) {
	auto n = strlen(VERSION_TAG);
	if (query.compare(0, n, VERSION_TAG) != 0) {
		return false;
	}
	auto close = query.find(" */", n);
	if (close == string::npos) {
		return false;
	}
	tag = Tag {UINT64_MAX, 0};
	auto fields = query.substr(n, close - n);
	auto at = fields.find(EXPIRES_TAG);
	auto digits = [](const string &s) {
		return !s.empty() && s.size() <= 18 && s.find_first_not_of("0123456789") == string::npos;
	};
	auto version = fields.substr(0, at);
	auto expires = at == string::npos ? string("0") : fields.substr(at + strlen(EXPIRES_TAG));
	if (!digits(version) || !(digits(expires) || (expires[0] == '-' && digits(expires.substr(1))))) {
		return true;
	}
	try {
		tag.version = std::stoull(version);
		tag.expires = std::stoll(expires);
	} catch (std::exception &) {
		tag = Tag {UINT64_MAX, 0};
	}
	return true;
}

uint64_t UnsignedSetting(ClientContext &context, const char *name, uint64_t fallback);

int64_t NowUnix() {
	return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
	    .count();
}

// A tagged statement runs only under the policy version it was decided with and, when it was
// decided under a token, until the token's exp (with `acl_jwt_clock_skew`, as the token cache).
void CheckTag(const Tag &tag, void *state, uint64_t clock_skew) {
	if (tag.version != acl_rs_policy_version(state)) {
		throw PermissionException(STALE);
	}
	auto skew = clock_skew > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(clock_skew);
	if (tag.expires != 0 && (tag.expires > INT64_MAX - skew ? INT64_MAX : tag.expires + skew) < NowUnix()) {
		throw PermissionException(EXPIRED);
	}
}

// Per connection: the names each principal's statement was decided with (every such statement
// has a non-empty blob, also one that names no table), so each of DuckDB's errors about it is
// reported as the principal may see it: in the principal's names where a message names an object
// the rewrite placed, without the `LINE 1:` excerpt of the rewritten text or DuckDB's
// suggestions, and otherwise as DuckDB wrote it (src/rewrite/errors.rs); and who owns the open transaction.
class AclClientState : public ClientContextState {
public:
	explicit AclClientState(void *state_p) : state(state_p) {
	}
	// A batch of `principal`'s statements, at parse time: refused whole if any of them could not
	// run in the transaction state they will meet (their own BEGIN/COMMIT/ROLLBACK included).
	void CheckBatch(ClientContext &context, const string &principal, const vector<unique_ptr<SQLStatement>> &batch) {
		if (principal.empty()) {
			return;
		}
		TxnState now(context);
		TxnOwner owner;
		{
			lock_guard<mutex> guard(lock);
			owner = this->owner;
		}
		for (auto &statement : batch) {
			auto kind = KindOf(*statement);
			owner.Check(now, principal, kind);
			if (kind == TXN_BEGIN) {
				now.open = true;
				now.aborted = false;
				owner.known = true;
				owner.principal = principal;
			} else if (kind == TXN_COMMIT || kind == TXN_ROLLBACK) {
				now.open = false;
			}
		}
	}
	// Text we produced coming back to the parser (a relation re-parses its query): DuckDB parses
	// it as plain SQL, so the check runs here.
	void CheckTagged(ClientContext &context, const string &query) {
		string who;
		TxnKind kind;
		if (!TaggedPrincipal(query, who, kind)) {
			return;
		}
		TxnState now(context);
		lock_guard<mutex> guard(lock);
		owner.Check(now, who, kind);
	}
	void TransactionCommit(MetaTransaction &, ClientContext &) override {
		lock_guard<mutex> guard(lock);
		owner = TxnOwner();
	}
	void TransactionRollback(MetaTransaction &, ClientContext &) override {
		lock_guard<mutex> guard(lock);
		owner = TxnOwner();
	}
	// A prepared statement we produced runs only under the policy it was decided with: a grant or
	// revoke since then refuses it (PostgreSQL re-plans; we ask the client to prepare it again,
	// which decides it anew).
	RebindQueryInfo OnRebindPreparedStatement(ClientContext &context, BindPreparedStatementCallbackInfo &info,
	                                          RebindQueryInfo) override {
		auto &unbound = info.prepared_statement.unbound_statement;
		Tag tag;
		if (unbound && Tagged(unbound->query, tag)) {
			CheckTag(tag, state, UnsignedSetting(context, CLOCK_SKEW_SETTING, DEFAULT_CLOCK_SKEW));
		}
		return RebindQueryInfo::DO_NOT_REBIND;
	}
	// Bounded in entries and in bytes (spec 012, "Memory"): the keys are whole rewritten
	// statements, and a batch's statements share one copy of its names. When the batch would
	// take the map past either bound it starts over, keeping this batch (about to run) whatever
	// its size.
	void Remember(const vector<unique_ptr<SQLStatement>> &statements, const string &names) {
		lock_guard<mutex> guard(lock);
		idx_t adding = names.size();
		for (auto &statement : statements) {
			adding += statement->query.size() + REMEMBERED_OVERHEAD;
		}
		if (by_query.size() + statements.size() > MAX_REMEMBERED || remembered_bytes + adding > MAX_REMEMBERED_BYTES) {
			by_query.clear();
			remembered_bytes = 0;
		}
		auto shared = make_shared_ptr<const string>(names);
		for (auto &statement : statements) {
			by_query[statement->query] = shared;
		}
		remembered_bytes += adding; // a replaced entry stays counted until the next start-over
	}
	// Is the query running now a principal's statement?
	bool Ours() {
		lock_guard<mutex> guard(lock);
		return !current.empty();
	}
	bool CanRequestRebind() override {
		// Planning errors reach OnPlanningError only when some state can request a rebind, which
		// makes DuckDB bind a copy: ask for it only while one of our statements runs. A refusal
		// found when the query began is thrown from OnFinalizePrepare/OnPlanningError, where
		// DuckDB ends the query cleanly (a throw from QueryBegin would leave it half begun).
		lock_guard<mutex> guard(lock);
		return !current.empty() || !refusal.empty() || current_tagged;
	}
	void QueryBegin(ClientContext &context) override {
		auto &query = context.GetCurrentQuery();
		auto names = Lookup(query);
		// Every execution passes here, however the statement got here (parsed now, prepared
		// before, extracted and run later): who it runs as and what it was decided under are in
		// its text.
		string who;
		TxnKind kind = TXN_OTHER;
		TaggedPrincipal(query, who, kind);
		Tag tag {0, 0};
		auto tagged = Tagged(query, tag);
		TxnState now(context);
		lock_guard<mutex> guard(lock);
		current = std::move(names);
		current_tag = tag;
		current_tagged = tagged;
		running = who;
		began = true;
		began_in_transaction = now.open;
		refusal = owner.Refusal(now, who, kind);
		translated.clear();
	}
	// A statement DuckDB prepares from a parse the client kept (it executes a Statement object it
	// got from extract_statements) reaches neither the parser hook nor a rebind: its tag, read when
	// the query began, is judged here. DuckDB calls this only while CanRequestRebind().
	RebindQueryInfo OnFinalizePrepare(ClientContext &context, PreparedStatementData &, PreparedStatementMode) override {
		ThrowRefusal();
		Tag tag;
		bool tagged;
		{
			lock_guard<mutex> guard(lock);
			tag = current_tag;
			tagged = current_tagged;
		}
		if (tagged) {
			CheckTag(tag, state, UnsignedSetting(context, CLOCK_SKEW_SETTING, DEFAULT_CLOCK_SKEW));
		}
		return RebindQueryInfo::DO_NOT_REBIND;
	}
	RebindQueryInfo OnPlanningError(ClientContext &, SQLStatement &statement, ErrorData &error) override {
		ThrowRefusal();
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
	void QueryEnd(ClientContext &context, optional_ptr<ErrorData> error) override {
		string names, done;
		{
			lock_guard<mutex> guard(lock);
			names = std::move(current);
			current.clear();
			refusal.clear();
			// Only BEGIN leaves an explicit transaction open: if none was open when this query
			// began, this query began it. One that was already open with no owner known was begun
			// before this state watched the connection: the gateway's (every principal's
			// statement comes through our parser, which registers this state before it runs).
			if (!ExplicitTransaction(context)) {
				owner = TxnOwner();
			} else if (!owner.known) {
				owner.known = true;
				owner.principal = began && !began_in_transaction ? running : string();
			}
			running.clear();
			began = false;
			current_tagged = false;
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
	static constexpr idx_t MAX_REMEMBERED_BYTES = 8 << 20;
	static constexpr idx_t REMEMBERED_OVERHEAD = 128; // the node, two string headers

	void ThrowRefusal() {
		string message;
		{
			lock_guard<mutex> guard(lock);
			message = refusal;
		}
		if (!message.empty()) {
			throw PermissionException(message);
		}
	}

	string Lookup(const string &query) {
		lock_guard<mutex> guard(lock);
		auto entry = by_query.find(query);
		return entry == by_query.end() ? string() : *entry->second;
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
	unordered_map<string, shared_ptr<const string>> by_query;
	idx_t remembered_bytes = 0;
	string current;
	TxnOwner owner;  // who began the open explicit transaction
	string running;  // the principal of the running query (empty: the gateway's)
	bool began = false;                // QueryBegin saw the running query
	bool began_in_transaction = false; // an explicit transaction was open when it began
	string refusal;  // why the running query may not run, found when it began
	// The version tag of the query running now, if it has one (for OnFinalizePrepare).
	Tag current_tag {0, 0};
	bool current_tagged = false;
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
vector<unique_ptr<SQLStatement>> ParseAndCheck(OutGuard &guard, const ParserOptions &options, const string &principal) {
	auto rewritten = guard.Text();
	ParserOptions inner = options;
	inner.parser_override_setting = AllowParserOverride::DEFAULT_OVERRIDE;
	Parser parser(inner);
	try {
		parser.ParseQuery(rewritten);
	} catch (std::exception &ex) {
		// The rewritten text names physical objects: never echo DuckDB's message about it. Only
		// DuckDB's expression depth limit is a refusal of the principal's text rather than our
		// fault (the same text unprefixed hits it too); its message starts with a fixed phrase,
		// never with text from the statement.
		ErrorData error(ex);
		if (error.Type() == ExceptionType::PARSER &&
		    StringUtil::StartsWith(error.RawMessage(), "Max expression depth limit of")) {
			throw ParserException("acl: the statement is nested too deeply");
		}
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
		if (!principal.empty()) {
			statement.query = PrincipalTag(principal, KindOf(statement)) + statement.query;
			statement.stmt_location = QueryLocation(0, statement.query.size());
		}
		if (acl_rs_versioned(guard.out.check, i)) {
			statement.query = VersionTag(guard.out.version, guard.out.expires) + statement.query;
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
	// relation): it runs only under what it was decided with.
	Tag tag;
	if (Tagged(query, tag)) {
		CheckTag(tag, acl.state, ReadSettings(options).clock_skew);
	}
	if (options.context && query.compare(0, 7, "/* acl:") == 0) {
		options.context->registered_state->GetOrCreate<AclClientState>("acl_errors", acl.state)->CheckTagged(
		    *options.context, query);
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
	auto principal = OutGuard::Str(guard.out.principal);
	vector<unique_ptr<SQLStatement>> statements;
	if (!CopyParsed(guard.out.check, options, statements)) {
		statements = ParseAndCheck(guard, options, principal);
	}
	auto names = guard.Names();
	if (options.context) {
		auto client = options.context->registered_state->GetOrCreate<AclClientState>("acl_errors", acl.state);
		client->CheckBatch(*options.context, principal, statements);
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
