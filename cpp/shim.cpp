// The C++ side of duckdb-acl: it bridges DuckDB's C++-only parser hook to Rust and decides
// nothing. Rust answers "not ours", a rewritten SQL text, or a refusal; refusals are thrown
// (a returned error would be swallowed in fallback mode).
#include "duckdb.hpp"
#include "duckdb/common/exception/parser_exception.hpp"
#include "duckdb/main/capi/capi_internal.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/parser_extension.hpp"

#include <cstdint>
#include <cstdlib>

using namespace duckdb;

extern "C" {
struct AclToken {
	uint64_t start;
	uint8_t type;
};
struct AclOut {
	char *text;
	size_t len;
	uint64_t n_statements;
};
void *acl_rs_state_new(void);
void acl_rs_state_free(void *state);
bool acl_rs_is_ours(const char *query, size_t len);
int32_t acl_rs_rewrite(void *state, const char *query, size_t len, const AclToken *tokens, size_t n_tokens,
                       uint64_t clock_skew, AclOut *out);
void acl_rs_out_free(AclOut *out);
bool acl_rs_register(void *state, void *info, const duckdb_extension_access *access);
}

namespace {

const char *const CLOCK_SKEW_SETTING = "acl_jwt_clock_skew";
const uint64_t DEFAULT_CLOCK_SKEW = 60;

enum RewriteStatus : int32_t { NOT_OURS = 0, REWRITTEN = 1, REFUSED = 2, SYNTAX = 3, INVALID = 4 };

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
	AclOut out {nullptr, 0, 0};
	~OutGuard() {
		acl_rs_out_free(&out);
	}
	string Text() const {
		return string(out.text ? out.text : "", out.len);
	}
};

ParserOverrideResult AclParserOverride(ParserExtensionInfo *info, const string &query, ParserOptions &options) {
	if (!acl_rs_is_ours(query.data(), query.size())) {
		return ParserOverrideResult();
	}
	auto &acl = info->Cast<AclParserInfo>();
	// DuckDB's own tokenizer finds the statement boundaries, so quotes, $$ strings and
	// comments split exactly as DuckDB would split them.
	auto simplified = Parser::Tokenize(query);
	vector<AclToken> tokens;
	tokens.reserve(simplified.size());
	for (auto &t : simplified) {
		tokens.push_back(AclToken {t.start, static_cast<uint8_t>(t.type)});
	}
	// Settings the decision depends on are read from the caller's context.
	uint64_t clock_skew = DEFAULT_CLOCK_SKEW;
	Value skew;
	if (options.context && options.context->TryGetCurrentSetting(CLOCK_SKEW_SETTING, skew) && !skew.IsNull()) {
		clock_skew = skew.GetValue<uint64_t>();
	}
	OutGuard guard;
	auto status = acl_rs_rewrite(acl.state, query.data(), query.size(), tokens.data(), tokens.size(), clock_skew,
	                             &guard.out);
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

// Called by the Rust cdylib's exported `acl_duckdb_cpp_init` (a cdylib exports only Rust
// symbols). DuckDB exceptions thrown here unwind through that `C-unwind` frame to DuckDB.
extern "C" void acl_shim_init(ExtensionLoader *loader) {
	LoadInternal(*loader);
}
