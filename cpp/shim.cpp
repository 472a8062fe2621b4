// The C++ side of duckdb-acl: it bridges DuckDB's C++-only parser hook to Rust and decides
// nothing. Rust answers "not ours", a rewritten SQL text, or a refusal; refusals are thrown
// (a returned error would be swallowed in fallback mode).
#include "acl_shim.hpp"
#include "duckdb/planner/planner_extension.hpp"

#include <cstdint>
#include <exception>
#include <cstring>
#include <cstdlib>

using namespace acl_shim;

// The instance as the Rust state keeps it (src/ffi/store.rs): weak, so closing the database
// frees the instance, and with it the state.
struct AclDb {
	weak_ptr<DatabaseInstance> db;
};

namespace {

// What every tag we put in a statement's text starts with (client.cpp, txn.cpp).
const char *const ACL_COMMENT = "/* acl:";

// Where the settings a decision reads sit in DuckDB's settings, found once at load: a read by name
// copies the option (its description, type and default) under the config's lock, five times a
// statement. Valid only for the instance that registered them.
struct AclSettingIndexes {
	bool found = false;
	idx_t clock_skew = 0, max_rewrite_bytes = 0, jwks_refresh = 0, jwks_max_stale = 0, anonymous_admin = 0;
};

struct AclParserInfo : public ParserExtensionInfo {
	explicit AclParserInfo(AclState *state_p) : state(state_p) {
	}
	~AclParserInfo() override {
		acl_rs_state_free(state);
	}
	AclState *state;
	AclSettingIndexes settings;
};

// DuckDB's token type as Rust's (prefix.rs `TokenKind`), by name: a reordering of DuckDB's enum
// cannot shift them. Anything else is an error token.
AclTokenKind TokenKindOf(SimplifiedTokenType type) {
	switch (type) {
	case SimplifiedTokenType::SIMPLIFIED_TOKEN_IDENTIFIER:
		return AclTokenKind::Identifier;
	case SimplifiedTokenType::SIMPLIFIED_TOKEN_NUMERIC_CONSTANT:
		return AclTokenKind::Numeric;
	case SimplifiedTokenType::SIMPLIFIED_TOKEN_STRING_CONSTANT:
		return AclTokenKind::String;
	case SimplifiedTokenType::SIMPLIFIED_TOKEN_OPERATOR:
		return AclTokenKind::Operator;
	case SimplifiedTokenType::SIMPLIFIED_TOKEN_KEYWORD:
		return AclTokenKind::Keyword;
	case SimplifiedTokenType::SIMPLIFIED_TOKEN_COMMENT:
		return AclTokenKind::Comment;
	default:
		return AclTokenKind::Error;
	}
}


// The caller's parser options with our override switched off: DuckDB's own parse.
ParserOptions WithoutOverride(const ParserOptions &options) {
	ParserOptions inner = options;
	inner.parser_override_setting = AllowParserOverride::DEFAULT_OVERRIDE;
	return inner;
}

// What DuckDB's parse of `statement` names (walk.cpp); a statement the walk cannot read is refused.
void ListOrRefuse(SQLStatement &statement, ParsedRefs &parsed) {
	try {
		ListParsedNames(statement, parsed);
	} catch (std::exception &) {
		throw InvalidInputException("acl: internal error: the second check could not read the statement");
	}
}

// The one-part calls the walk listed, qualified to system.main once a check has passed on them.
void QualifyCalls(const ParsedRefs &parsed) {
	for (auto f : parsed.qualify) {
		f->SetQualifiedName(Identifier::SystemCatalog(), Identifier::DefaultSchema(), f->FunctionName());
	}
}

// DuckDB parses the rewritten text (our override switched off), the second check compares each
// statement with the decision, and statements that carry a policy version get its tag.
vector<unique_ptr<SQLStatement>> ParseAndCheck(OutGuard &guard, const ParserOptions &options, const string &principal) {
	auto rewritten = guard.Text();
	Parser parser(WithoutOverride(options));
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
			ListOrRefuse(statement, parsed);
			OutGuard failure;
			if (!acl_rs_check(guard.out.check, i, parsed.refs.data(), parsed.refs.size(), parsed.strs.data(),
			                  parsed.strs.size(), &failure.out)) {
				throw InvalidInputException(failure.Text());
			}
			QualifyCalls(parsed);
		} else {
			keep = false; // management statements: the gateway's own, never kept
		}
		keep = keep && Copyable(statement);
		if (!principal.empty()) {
			statement.query = PrincipalTag(principal, KindOf(statement)) + statement.query;
			statement.stmt_location = QueryLocation(0, statement.query.size());
		}
		if (acl_rs_versioned(guard.out.check, i)) {
			statement.query = VersionTag(guard.out.version, guard.out.expires, guard.out.session) + statement.query;
			statement.stmt_location = QueryLocation(0, statement.query.size());
		}
	}
	if (keep) {
		KeepChecked(guard.out.check, options, parser.statements);
	}
	return std::move(parser.statements);
}

// Where our tags stand in `query`: the comments, as DuckDB's tokenizer reads the text, that start
// with `/* acl:` (not the same words inside a string, say a gateway logging a statement's text).
// Every occurrence counts if the text cannot be tokenized (DuckDB's parse then refuses it anyway).
vector<idx_t> TagComments(const string &query) {
	vector<idx_t> at;
	auto first = query.find(ACL_COMMENT);
	if (first == string::npos) {
		return at;
	}
	try {
		for (auto &token : Parser::Tokenize(query)) {
			if (token.type == SimplifiedTokenType::SIMPLIFIED_TOKEN_COMMENT && query.compare(token.start, 7, ACL_COMMENT) == 0) {
				at.push_back(token.start);
			}
		}
	} catch (std::exception &) {
		at.clear();
		for (auto i = first; i != string::npos; i = query.find(ACL_COMMENT, i + 1)) {
			at.push_back(i);
		}
	}
	return at;
}

// Our own text coming back (a relation re-parses its statement's query): the tree we handed
// DuckDB had the parser's one-part calls qualified to system.main, the text does not, so DuckDB
// would bind `+` or `date_part` through the search path, where a macro could capture them. Parsed
// here as DuckDB would, and qualified as the first time, once Rust has found each such call a
// built-in there (specs/011, "Text that comes back").
vector<unique_ptr<SQLStatement>> Reparse(AclState *state, const string &query, const ParserOptions &options) {
	Parser parser(WithoutOverride(options));
	parser.ParseQuery(query);
	// The tags (`/* acl:… */ ` comments at the start) stay with each statement's text, so the
	// next client that parses it again is checked again.
	idx_t tags = 0;
	while (query.compare(tags, 7, ACL_COMMENT) == 0) {
		auto close = query.find(" */ ", tags);
		if (close == string::npos) {
			break;
		}
		tags = close + 4;
	}
	for (auto &statement : parser.statements) {
		if (tags && statement->query.compare(0, tags, query, 0, tags) != 0) {
			statement->query = query.substr(0, tags) + statement->query;
			statement->stmt_location = QueryLocation(0, statement->query.size());
		}
		ParsedRefs parsed;
		ListOrRefuse(*statement, parsed);
		OutGuard failure;
		if (!acl_rs_check_reparsed(state, parsed.refs.data(), parsed.refs.size(), parsed.strs.data(),
		                           parsed.strs.size(), &failure.out)) {
			throw PermissionException(failure.Text());
		}
		QualifyCalls(parsed);
	}
	return std::move(parser.statements);
}

// DuckDB's own tokenizer finds the statement boundaries, so quotes, $$ strings and comments split
// exactly as DuckDB would split them. Rust asks for the tokens only when it needs them (not for a
// batch it kept); they live here until `acl_rs_rewrite` returns.
struct Tokens {
	const string &query;
	vector<AclToken> tokens;
	std::exception_ptr error; // rethrown once Rust has returned (nothing unwinds through Rust)
};

extern "C" bool TokenizeForRust(void *ctx, const char *query, size_t len, const AclToken **out, size_t *n_out) {
	auto &t = *static_cast<Tokens *>(ctx);
	try {
		// Always the text `acl_rs_rewrite` was given; anything else is copied.
		bool same = query == t.query.data() && len == t.query.size();
		auto simplified = same ? Parser::Tokenize(t.query) : Parser::Tokenize(string(query, len));
		t.tokens.clear();
		t.tokens.reserve(simplified.size());
		for (auto &token : simplified) {
			t.tokens.push_back(AclToken {token.start, static_cast<uint8_t>(TokenKindOf(token.type))});
		}
		*out = t.tokens.data();
		*n_out = t.tokens.size();
		return true;
	} catch (...) {
		t.error = std::current_exception();
		return false;
	}
}

// The settings' defaults, as when there is no context to read them from (anonymous admin off).
AclSettings DefaultSettings() {
	return AclSettings {DEFAULT_CLOCK_SKEW, DEFAULT_MAX_REWRITE_BYTES, 0, DEFAULT_JWKS_REFRESH, DEFAULT_JWKS_MAX_STALE, 0, 0};
}

uint64_t UnsignedSettingAt(ClientContext &context, idx_t index, uint64_t fallback) {
	Value value;
	if (context.TryGetCurrentUserSetting(index, value) && !value.IsNull()) {
		return value.GetValue<uint64_t>();
	}
	return fallback;
}

// The settings a decision depends on, read from a client context by the indexes found at load
// (`FindSettingIndexes`), DuckDB's own lookup without finding the name. None found means none
// registered: a lookup by name would find none either, so the defaults hold.
AclSettings ReadContextSettings(ClientContext &context, const AclSettingIndexes &at) {
	auto settings = DefaultSettings();
	if (at.found) {
		settings.clock_skew = UnsignedSettingAt(context, at.clock_skew, DEFAULT_CLOCK_SKEW);
		settings.max_rewrite_bytes = UnsignedSettingAt(context, at.max_rewrite_bytes, DEFAULT_MAX_REWRITE_BYTES);
		settings.jwks_refresh_interval = UnsignedSettingAt(context, at.jwks_refresh, DEFAULT_JWKS_REFRESH);
		settings.jwks_max_stale = UnsignedSettingAt(context, at.jwks_max_stale, DEFAULT_JWKS_MAX_STALE);
		Value anonymous;
		settings.allow_anonymous_admin = context.TryGetCurrentUserSetting(at.anonymous_admin, anonymous) &&
		                                 !anonymous.IsNull() && anonymous.GetValue<bool>();
	}
	settings.in_transaction = context.transaction.HasActiveTransaction() && !context.transaction.IsAutoCommit();
	return settings;
}

// The settings a decision depends on, read from the caller's context.
AclSettings ReadSettings(ParserOptions &options, const AclParserInfo &acl) {
	return options.context ? ReadContextSettings(*options.context, acl.settings) : DefaultSettings();
}

// Finds the indexes of the settings registered by `LoadInternal` (all or none).
AclSettingIndexes FindSettingIndexes(DBConfig &config) {
	AclSettingIndexes at;
	auto find = [&](const char *name, idx_t &out) {
		optional_ptr<const ConfigurationOption> option;
		auto index = config.TryGetSettingIndex(name, option);
		if (!index.IsValid()) {
			return false;
		}
		out = index.GetIndex();
		return true;
	};
	at.found = find(CLOCK_SKEW_SETTING, at.clock_skew) && find(MAX_REWRITE_SETTING, at.max_rewrite_bytes) &&
	           find(JWKS_REFRESH_SETTING, at.jwks_refresh) && find(JWKS_MAX_STALE_SETTING, at.jwks_max_stale) &&
	           find(ANONYMOUS_ADMIN_SETTING, at.anonymous_admin);
	return at;
}

ParserOverrideResult AclParserOverride(ParserExtensionInfo *info, const string &query, ParserOptions &options) {
	auto &acl = info->Cast<AclParserInfo>();
	// Text we produced coming back (a client re-parses a statement's query, e.g. for a relation,
	// or builds a text around it, as a relation's filter or projection does): it runs only under
	// what it was decided with, wherever our tags stand in it.
	auto tagged = false;
	for (auto at : TagComments(query)) {
		auto from = query.substr(at);
		Tag tag;
		string who;
		TxnKind kind;
		// A version tag's principal tag is a comment of its own, judged at its own turn.
		if (Tagged(from, tag)) {
			tagged = true;
			CheckTag(tag, acl.state, ReadSettings(options, acl).clock_skew);
		} else if (TaggedPrincipal(from, who, kind)) {
			tagged = true;
			if (options.context) {
				ClientCheckTagged(*options.context, acl.state, from);
			}
		}
	}
	// Not a principal's batch: DuckDB parses it, except our own text coming back.
	auto not_ours = [&]() {
		return tagged ? ParserOverrideResult(Reparse(acl.state, query, options)) : ParserOverrideResult();
	};
	if (!acl_rs_is_ours(query.data(), query.size())) {
		return not_ours();
	}
	auto settings = ReadSettings(options, acl);
	OutGuard guard;
	Tokens tokens {query, {}, nullptr};
	auto status = acl_rs_rewrite(acl.state, query.data(), query.size(), TokenizeForRust, &tokens, &settings,
	                             &guard.out);
	if (tokens.error) {
		std::rethrow_exception(tokens.error);
	}
	switch (status) {
	case AclStatus::NotOurs:
		return not_ours();
	case AclStatus::Rewritten:
		break;
	case AclStatus::Refused:
		throw PermissionException(guard.Text());
	case AclStatus::Syntax:
		throw ParserException(guard.Text());
	default: // Invalid: refused
		throw InvalidInputException(guard.Text());
	}
	auto principal = OutGuard::Str(guard.out.principal);
	vector<unique_ptr<SQLStatement>> statements;
	// A shape's instance is never a batch met before (a repeat is a batch-cache hit, which has no
	// shape), so a copy made from its shape is never kept as the batch's own.
	if (!CopyParsed(guard.out.check, options, statements) && !CopyShape(acl.state, guard, options, statements)) {
		statements = ParseAndCheck(guard, options, principal);
	}
	auto names = guard.Names();
	if (options.context) {
		ClientAccept(*options.context, acl.state, principal, statements, names);
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

// The reference system's call forms of the policy source (spec 006): positional or named
// arguments with defaults, which a C API scalar function cannot take and a macro can. Each runs
// its table function once, when the statement executes (an uncorrelated scalar subquery),
// qualified so that no macro of a user's schema can stand in for it.
const DefaultMacro ACL_MACROS[] = {
    {DEFAULT_SCHEMA, "acl_use_db",
     "(db, schema := 'acl', init := false) AS (SELECT status FROM system.main.acl_store_use(db, schema, init))"},
    {DEFAULT_SCHEMA, "acl_use_postgres",
     "(connection, schema := 'acl', init := false) AS "
     "(SELECT status FROM system.main.acl_store_use_postgres(connection, schema, init))"},
    {DEFAULT_SCHEMA, "acl_reload", "() AS (SELECT status FROM system.main.acl_store_reload())"},
    {nullptr, nullptr, nullptr}};

// `acl_check_catalog([catalog])` (spec 007, "Drift"): every catalog, or the one named.
const DefaultTableMacro ACL_TABLE_MACROS[] = {
    {DEFAULT_SCHEMA,
     "acl_check_catalog",
     {nullptr},
     {{"catalog", "NULL"}, {nullptr, nullptr}},
     "SELECT * FROM system.main.acl_check_catalog_of(catalog)"},
    // `acl_export(secrets := false)` (spec 023): the policy as a replayable `ACL ADMIN` script.
    {DEFAULT_SCHEMA,
     "acl_export",
     {nullptr},
     {{"secrets", "false"}, {nullptr, nullptr}},
     "SELECT * FROM system.main.acl_export_of(secrets)"},
    {nullptr, nullptr, {nullptr}, {{nullptr, nullptr}}, nullptr}};

// DuckDB's parser calls this only where its own grammar failed; `ACL` there was not read by the
// override: either the override is off (`allow_parser_override_extension = 'default'`) or the
// prefix does not begin the text. Say so, rather than DuckDB's "syntax error at or near".
ParserExtensionParseResult AclParseFallback(ParserExtensionInfo *, const vector<SimpleToken> &tokens) {
	if (!tokens.empty() && StringUtil::CIEquals(tokens[0].text, "acl")) {
		throw ParserException("acl: an ACL prefix is read only at the start of a text, and only while "
		                      "allow_parser_override_extension is 'strict' or 'fallback'; if it was set to "
		                      "'default', SET GLOBAL allow_parser_override_extension = 'strict' turns ACL back on");
	}
	ParserExtensionParseResult not_ours;
	not_ours.consumed_tokens = 0;
	return not_ours;
}

// Never reached: the fallback above claims no tokens.
ParserExtensionPlanResult AclPlanFallback(ParserExtensionInfo *, ClientContext &, unique_ptr<ParserExtensionParseData>) {
	throw InternalException("acl: internal error: an ACL statement reached the planner unrewritten");
}

// `acl_write_refused(message)`: the write check's refusal (src/rewrite/writes), DuckDB's `error()`
// raised as a Permission Error, as every refusal of a principal is. Principals cannot call it
// (`acl_` names are never callable); the rewrite emits it qualified.
void RunWriteRefused(DataChunk &args, ExpressionState &, Vector &result) {
	if (args.size() > 0) {
		auto message = args.data[0].GetValue(0);
		throw PermissionException(message.IsNull() ? string("acl: a row written is outside the principal's slice")
		                                           : message.ToString());
	}
	result.SetVectorType(VectorType::CONSTANT_VECTOR);
	ConstantVector::SetNull(result, true);
}

void LoadInternal(ExtensionLoader &loader) {
	auto &db = loader.GetDatabaseInstance();
	auto &config = DBConfig::GetConfig(db);

	AclState *state = acl_rs_state_new();
	if (!state) {
		throw InvalidInputException("acl: could not create the extension state");
	}
	auto parser_info = make_shared_ptr<AclParserInfo>(state); // owns state from here on
	// A weak pointer only: the instance owns the state, so the state must not own the instance.
	if (!acl_rs_set_database(state, new AclDb {weak_ptr<DatabaseInstance>(db.shared_from_this())})) {
		throw InvalidInputException("acl: load failed: the instance's database could not be kept");
	}
	for (idx_t i = 0; ACL_MACROS[i].name != nullptr; i++) {
		auto info = DefaultFunctionGenerator::CreateInternalMacroInfo(ACL_MACROS[i]);
		loader.RegisterFunction(*info);
	}
	for (idx_t i = 0; ACL_TABLE_MACROS[i].name != nullptr; i++) {
		auto info = DefaultTableFunctionGenerator::CreateTableMacroInfo(ACL_TABLE_MACROS[i]);
		loader.RegisterFunction(*info);
	}

	RegisterApi(loader);
	RegisterSessions(loader, parser_info, state);
	RegisterFlight(loader, parser_info, state);
	RegisterPushdown(config);
	{
		ScalarFunction refused("acl_write_refused", {LogicalType::VARCHAR}, LogicalType::SQLNULL, RunWriteRefused);
		refused.SetVolatile(); // never folded: it runs only for a row outside the slice
		refused.SetFallible();
		refused.SetNullHandling(FunctionNullHandling::SPECIAL_HANDLING);
		loader.RegisterFunction(refused);
	}

	AccessInfo access_info {new DatabaseWrapper(), db.GetExtensionAPIV1(), string()};
	access_info.wrapper->database = make_shared_ptr<DuckDB>(db);
	duckdb_extension_access access {AccessSetError, AccessGetDatabase, AccessGetApi};
	bool ok = acl_rs_register(state, reinterpret_cast<duckdb_extension_info>(&access_info), &access);
	delete access_info.wrapper; // the wrapper holds the instance; it must not outlive the load
	if (!ok) {
		throw InvalidInputException("acl: load failed: %s", access_info.error);
	}

	RegisterSettings(config, db, parser_info, state);
	RegisterEnums(loader, config, db, parser_info, state);

	parser_info->settings = FindSettingIndexes(config);

	ParserExtension extension;
	extension.parser_override = AclParserOverride;
	extension.parse_function = AclParseFallback;
	extension.plan_function = AclPlanFallback;
	extension.parser_info = parser_info;
	ParserExtension::Register(config, extension);

	PlannerExtension planner;
	planner.get_sql_value_function = AclValueFunction;
	PlannerExtension::Register(config, planner);

	// Turn the hook on, unless the operator already chose a mode.
	Value current;
	db.TryGetCurrentSetting("allow_parser_override_extension", current);
	if (current.IsNull() || StringUtil::Lower(current.ToString()) == "default") {
		// spelled as DuckDB spells its own values (`DEFAULT`, `FALLBACK`, `STRICT`)
		config.SetOptionByName("allow_parser_override_extension", Value("STRICT"));
	}
}

} // namespace

// The settings of a client context, for the session functions (sessions.cpp): rare, so the
// indexes are looked up here rather than kept.
AclSettings acl_shim::ClientSettings(ClientContext &context) {
	return ReadContextSettings(context, FindSettingIndexes(DBConfig::GetConfig(context)));
}

// For acl_exec and acl_exec_as (src/ffi/functions.rs): the settings of the client context they run
// in, read when they run. False (nothing written) when they cannot be read.
extern "C" bool acl_shim_context_settings(duckdb_client_context context, AclSettings *out) {
	try {
		if (!context || !out) {
			return false;
		}
		auto &client = reinterpret_cast<CClientContextWrapper *>(context)->context;
		// rare (acl_exec): the indexes are looked up here rather than kept
		*out = ReadContextSettings(client, FindSettingIndexes(DBConfig::GetConfig(client)));
		// DuckDB reads the value case-insensitively (`STRICT`, `strict`): so does this. Unreadable
		// counts as off.
		Value override_mode;
		out->parser_override_off = !client.TryGetCurrentSetting("allow_parser_override_extension", override_mode) ||
		                           override_mode.IsNull() ||
		                           StringUtil::Upper(override_mode.ToString()) == "DEFAULT";
		return true;
	} catch (...) {
		return false;
	}
}

// A connection of the policy store's own (one per store transaction), or null once the instance
// is gone. The C API's `duckdb_connection` is a `Connection *`; Rust closes it with
// `duckdb_disconnect`.
extern "C" duckdb_connection acl_shim_db_connect(const AclDb *db) {
	try {
		auto instance = db ? db->db.lock() : nullptr;
		if (!instance) {
			return nullptr;
		}
		return reinterpret_cast<duckdb_connection>(new Connection(*instance));
	} catch (...) {
		return nullptr;
	}
}

extern "C" void acl_shim_db_free(AclDb *db) {
	delete db;
}

// Called by the Rust cdylib's exported `acl_duckdb_cpp_init` (a cdylib exports only Rust
// symbols). DuckDB exceptions thrown here unwind through that `C-unwind` frame to DuckDB.
extern "C" void acl_shim_init(void *loader) {
	LoadInternal(*static_cast<ExtensionLoader *>(loader));
}
