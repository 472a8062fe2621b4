// What the extension keeps per connection (a ClientContextState): the names each principal's
// statement was decided with, for DuckDB's errors about it (spec 002); the tag of the statement
// running now, judged when a kept statement runs (spec 011); who owns the open transaction (spec
// 001, rules in txn.cpp); and, while a principal's statement binds, the SQL value keywords bound
// to the built-ins and no replacement scan (specs 004, 005). It decides nothing.
#include "acl_shim.hpp"
#include "duckdb/planner/planner_extension.hpp"

#include <chrono>

namespace acl_shim {

uint64_t UnsignedSetting(ClientContext &context, const char *name, uint64_t fallback) {
	Value value;
	if (context.TryGetCurrentSetting(name, value) && !value.IsNull()) {
		return value.GetValue<uint64_t>();
	}
	return fallback;
}

// What a statement was decided under travels in its query text (statement->query, which DuckDB
// copies into a prepared statement), so an execution can tell it no longer holds: the policy
// version, the `exp` of the token it was decided under, and the session it runs under
// (`/* acl:policy-version=N expires=E session=S */`, E in unix seconds, absent when there is no
// token; S the session's operator id, never its handle, absent outside a session).
const char *const VERSION_TAG = "/* acl:policy-version=";
const char *const EXPIRES_TAG = "expires=";
const char *const SESSION_TAG = "session=";
const char *const STALE = "acl: the policy changed since this statement was prepared; prepare it again";
const char *const EXPIRED = "acl: the token this statement was prepared under has expired; prepare it again";

string VersionTag(uint64_t version, int64_t expires, uint64_t session) {
	auto tag = string(VERSION_TAG) + std::to_string(version);
	if (expires != 0) {
		tag += string(" ") + EXPIRES_TAG + std::to_string(expires);
	}
	if (session != 0) {
		tag += string(" ") + SESSION_TAG + std::to_string(session);
	}
	return tag + " */ ";
}

// Reads the tag at the start of `query`; false when there is none. A tag it cannot read is
// stale (a version that never matches): fields other than these, out of order, twice, or not
// numbers.
bool Tagged(const string &query, Tag &tag) {
	auto n = strlen(VERSION_TAG);
	if (query.compare(0, n, VERSION_TAG) != 0) {
		return false;
	}
	auto close = query.find(" */", n);
	if (close == string::npos) {
		return false;
	}
	static const Tag STALE_TAG {UINT64_MAX, 0, 0};
	tag = STALE_TAG;
	auto digits = [](const string &s) {
		return !s.empty() && s.size() <= 18 && s.find_first_not_of("0123456789") == string::npos;
	};
	auto fields = StringUtil::Split(query.substr(n, close - n), ' ');
	if (fields.empty() || fields.size() > 3 || !digits(fields[0])) {
		return true;
	}
	Tag read {0, 0, 0};
	idx_t i = 1;
	try {
		read.version = std::stoull(fields[0]);
		if (i < fields.size() && StringUtil::StartsWith(fields[i], EXPIRES_TAG)) {
			auto e = fields[i++].substr(strlen(EXPIRES_TAG));
			if (!(digits(e) || (e.size() > 1 && e[0] == '-' && digits(e.substr(1))))) {
				return true;
			}
			read.expires = std::stoll(e);
		}
		if (i < fields.size() && StringUtil::StartsWith(fields[i], SESSION_TAG)) {
			auto s = fields[i++].substr(strlen(SESSION_TAG));
			if (!digits(s)) {
				return true;
			}
			read.session = std::stoull(s);
		}
	} catch (std::exception &) {
		return true;
	}
	if (i == fields.size()) {
		tag = read;
	}
	return true;
}

uint64_t UnsignedSetting(ClientContext &context, const char *name, uint64_t fallback);

int64_t NowUnix() {
	return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
	    .count();
}

// A tagged statement runs only under the policy version it was decided with and, when it was
// decided under a token, until the token's exp (with `acl_jwt_clock_skew`, as the token cache);
// under a session, while the session is live.
void CheckTag(const Tag &tag, AclState *state, uint64_t clock_skew) {
	if (tag.version != acl_rs_policy_version(state)) {
		throw PermissionException(STALE);
	}
	auto skew = clock_skew > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(clock_skew);
	if (tag.expires != 0 && (tag.expires > INT64_MAX - skew ? INT64_MAX : tag.expires + skew) < NowUnix()) {
		throw PermissionException(EXPIRED);
	}
	// A session's statement runs while the session is live, and counts as its use.
	if (tag.session != 0) {
		OutGuard guard;
		if (!acl_rs_session_check(state, tag.session, clock_skew, &guard.out)) {
			throw PermissionException(guard.Text().empty() ? string("acl: the session this statement was prepared under has ended") : guard.Text());
		}
	}
}

// Per connection: the names each principal's statement was decided with (every such statement
// has a non-empty blob, also one that names no table), so each of DuckDB's errors about it is
// reported as the principal may see it: in the principal's names where a message names an object
// the rewrite placed, without the `LINE 1:` excerpt of the rewritten text or DuckDB's
// suggestions, and otherwise as DuckDB wrote it (src/rewrite/errors.rs); and who owns the open transaction.
class AclClientState : public ClientContextState {
public:
	explicit AclClientState(AclState *state_p) : state(state_p) {
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
		Tag tag {0, 0, 0};
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
		// A name the binder cannot find goes to the replacement scans, which read files
		// (`temp.main.__acl_…_x.csv`) or a client's variables by that name: never for a name of a
		// principal's statement, whose names are all the rewrite's own (spec 005).
		if (!current.empty() && !replacement_off) {
			replacement_saved = context.config.use_replacement_scans;
			context.config.use_replacement_scans = false;
			replacement_off = true;
		}
	}
	// A statement DuckDB prepares from a parse the client kept (it executes a Statement object it
	// got from extract_statements) reaches neither the parser hook nor a rebind: its tag, read when
	// the query began, is judged here. DuckDB calls this only while CanRequestRebind().
	RebindQueryInfo OnFinalizePrepare(ClientContext &context, PreparedStatementData &prepared,
	                                  PreparedStatementMode) override {
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
		// An UPDATE or MERGE (also under EXPLAIN, which may be ANALYZE) of a column-restricted
		// target: refused when a CHECK of its table relates a visible column to a hidden one (spec
		// 002). Only such statements whose blob has a `W` line pay for the catalog lookup.
		auto type = prepared.statement_type;
		if (type == StatementType::EXPLAIN_STATEMENT && prepared.unbound_statement &&
		    prepared.unbound_statement->type == StatementType::EXPLAIN_STATEMENT) {
			auto &explained = prepared.unbound_statement->Cast<ExplainStatement>().stmt;
			type = explained ? explained->type : type;
		}
		if (type != StatementType::UPDATE_STATEMENT && type != StatementType::MERGE_INTO_STATEMENT &&
		    type != StatementType::EXPLAIN_STATEMENT) {
			return RebindQueryInfo::DO_NOT_REBIND;
		}
		string names;
		{
			lock_guard<mutex> guard(lock);
			names = current;
		}
		if (names.compare(0, 2, "W\t") == 0 || names.find("\nW\t") != string::npos) {
			CClientContextWrapper wrapper(context);
			OutGuard guard;
			if (!acl_rs_hidden_check(reinterpret_cast<duckdb_client_context>(&wrapper), names.data(), names.size(),
			                         type == StatementType::MERGE_INTO_STATEMENT, &guard.out)) {
				throw PermissionException("acl: the statement was refused (its target could not be checked)");
			}
			if (!guard.Text().empty()) {
				throw PermissionException(guard.Text());
			}
		}
		return RebindQueryInfo::DO_NOT_REBIND;
	}
	RebindQueryInfo OnPlanningError(ClientContext &context, SQLStatement &statement, ErrorData &error) override {
		ThrowRefusal();
		auto names = Lookup(statement.query);
		if (!names.empty()) {
			// A policy object the statement used that no longer binds over its source: DuckDB's
			// error would name its physical columns (spec 002, "Drift"). Checked only here, on
			// DuckDB's refusal, in the caller's transaction.
			if (error.Type() == ExceptionType::BINDER || error.Type() == ExceptionType::CATALOG) {
				auto drift = Drift(context, names);
				if (!drift.empty()) {
					{
						lock_guard<mutex> guard(lock);
						translated = drift;
					}
					throw PermissionException(drift);
				}
			}
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
			if (replacement_off) {
				context.config.use_replacement_scans = replacement_saved;
				replacement_off = false;
			}
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

	// The drift refusal for a statement DuckDB refused (empty: none), or the withheld message
	// when the check itself failed.
	string Drift(ClientContext &context, const string &names) {
		CClientContextWrapper wrapper(context);
		OutGuard guard;
		if (!acl_rs_drift(state, reinterpret_cast<duckdb_client_context>(&wrapper), names.data(), names.size(),
		                  &guard.out)) {
			return "acl: the statement failed (the details are withheld)";
		}
		return guard.Text();
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

	AclState *state;
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
	Tag current_tag {0, 0, 0};
	bool current_tagged = false;
	string translated; // what OnPlanningError threw for the current query
	bool replacement_off = false;  // QueryBegin switched replacement scans off for this query
	bool replacement_saved = true; // what they were before
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
	auto client = input.context.registered_state->Get<AclClientState>(CLIENT_STATE);
	if (!client || !client->Ours()) {
		return GetSQLValueFunctionReturnType::CONTINUE_BINDING;
	}
	result = make_uniq<FunctionExpression>(
	    QualifiedName(Identifier::SystemCatalog(), Identifier::DefaultSchema(), Identifier(string(name))),
	    vector<unique_ptr<ParsedExpression>>());
	return GetSQLValueFunctionReturnType::FINISH_BINDING;
}

void ClientCheckTagged(ClientContext &context, AclState *state, const string &query) {
	context.registered_state->GetOrCreate<AclClientState>(CLIENT_STATE, state)->CheckTagged(context, query);
}

void ClientAccept(ClientContext &context, AclState *state, const string &principal,
                  const vector<unique_ptr<SQLStatement>> &statements, const string &names) {
	auto client = context.registered_state->GetOrCreate<AclClientState>(CLIENT_STATE, state);
	client->CheckBatch(context, principal, statements);
	if (!names.empty()) { // a principal's batch (management batches have no blob)
		client->Remember(statements, names);
	}
}

} // namespace acl_shim
