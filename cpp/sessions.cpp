// The session functions and settings (specs/017): scalar functions that hand their arguments to
// Rust (src/ffi/sessions.rs) row by row and throw what it refuses, and the three GLOBAL settings,
// whose every SET and RESET is validated by Rust (refused values change nothing) and handed to
// the state, where the statement path reads them without a lock. It decides nothing. Principals
// cannot call any of them (`acl_` names are never callable).
#include "acl_shim.hpp"

namespace acl_shim {

namespace {

using Owner = shared_ptr<ParserExtensionInfo>;

[[noreturn]] void Throw(AclStatus status, const string &text) {
	switch (status) {
	case AclStatus::Refused:
		throw PermissionException(text);
	case AclStatus::Syntax:
		throw ParserException(text);
	default:
		throw InvalidInputException(text.empty() ? string("acl: internal error in a session function") : text);
	}
}

// Every session function has effects or reads the clock: never folded, never cached, never
// pushed or reordered as a pure function would be, and it may throw.
void Register(ExtensionLoader &loader, ScalarFunction fun) {
	fun.SetVolatile();
	fun.SetFallible();
	loader.RegisterFunction(fun);
}

// The door label of a session opened by SQL (engine::sessions::SQL_DOOR).
const string SQL_DOOR = "sql";

// Each row is a call of its own: a constant argument is one entry to DuckDB's executors, which
// would call once for all the rows (three rows opening a session would share one). A NULL
// argument answers NULL. `one(value, writer)` writes the row's answer.
template <class IN, class OUT, class FN>
void EachRow(const Vector &in, Vector &result, idx_t count, FN &&one) {
	auto values = in.Values<IN>();
	auto out = FlatVector::Writer<OUT>(result, count);
	for (idx_t i = 0; i < count; i++) {
		auto entry = values[i];
		if (!entry.IsValid()) {
			out.WriteNull();
			continue;
		}
		one(entry.GetValue(), out);
	}
}

void WriteText(VectorWriter<string_t> &out, const string &text) {
	out.WriteValue(string_t(text.data(), UnsafeNumericCast<uint32_t>(text.size())));
}

// A function of no argument, called once per row (a sweep per row, a count per row).
template <class FN>
void EachRowNoArgs(idx_t count, Vector &result, FN &&one) {
	auto out = FlatVector::Writer<int64_t>(result, count);
	for (idx_t i = 0; i < count; i++) {
		out.WriteValue(int64_t(one()));
	}
}

void RegisterFunctions(ExtensionLoader &loader, const Owner &owner, AclState *state) {
	// acl_session_open(token [, door]) → handle
	auto open = [owner, state](DataChunk &args, ExpressionState &es, Vector &result) {
		auto settings = ClientSettings(es.GetContext());
		auto one = [&](const string_t &token, const char *door, idx_t door_len, VectorWriter<string_t> &out) {
			OutGuard guard;
			auto status = acl_rs_session_open(state, token.GetData(), token.GetSize(), door, door_len, &settings,
			                                  &guard.out);
			if (status != AclStatus::Rewritten) {
				Throw(status, guard.Text());
			}
			WriteText(out, guard.Text());
		};
		auto count = args.size();
		if (args.ColumnCount() == 1) {
			EachRow<string_t, string_t>(args.data[0], result, count,
			                            [&](const string_t &token, VectorWriter<string_t> &out) {
				                            one(token, SQL_DOOR.data(), SQL_DOOR.size(), out);
			                            });
			return;
		}
		auto tokens = args.data[0].Values<string_t>();
		auto doors = args.data[1].Values<string_t>();
		auto out = FlatVector::Writer<string_t>(result, count);
		for (idx_t i = 0; i < count; i++) {
			auto token = tokens[i];
			auto door = doors[i];
			if (!token.IsValid() || !door.IsValid()) {
				out.WriteNull();
				continue;
			}
			one(token.GetValue(), door.GetValue().GetData(), door.GetValue().GetSize(), out);
		}
	};
	Register(loader, ScalarFunction("acl_session_open", {LogicalType::VARCHAR}, LogicalType::VARCHAR, open));
	Register(loader, ScalarFunction("acl_session_open", {LogicalType::VARCHAR, LogicalType::VARCHAR},
	                                LogicalType::VARCHAR, open));

	// acl_session_sql(handle, sql) → 'ACL SESSION ''<handle>'' <sql>' (no effect: a pure function of
	// its arguments, row by row all the same)
	Register(loader, ScalarFunction("acl_session_sql", {LogicalType::VARCHAR, LogicalType::VARCHAR},
	                                LogicalType::VARCHAR, [owner](DataChunk &args, ExpressionState &, Vector &result) {
		                                BinaryExecutor::Execute<string_t, string_t, string_t>(
		                                    args.data[0], args.data[1], result, args.size(),
		                                    [&](string_t handle, string_t sql) {
			                                    OutGuard guard;
			                                    if (!acl_rs_session_sql(handle.GetData(), handle.GetSize(),
			                                                            sql.GetData(), sql.GetSize(), &guard.out)) {
				                                    Throw(AclStatus::Invalid, guard.Text());
			                                    }
			                                    return StringVector::AddString(result, guard.Text());
		                                    });
	                                }));

	// acl_session_close(handle) → whether this call closed a live session
	Register(loader, ScalarFunction("acl_session_close", {LogicalType::VARCHAR}, LogicalType::BOOLEAN,
	                                [owner, state](DataChunk &args, ExpressionState &, Vector &result) {
		                                EachRow<string_t, bool>(
		                                    args.data[0], result, args.size(),
		                                    [&](const string_t &h, VectorWriter<bool> &out) {
			                                    out.WriteValue(acl_rs_session_close(state, h.GetData(), h.GetSize()));
		                                    });
	                                }));

	// acl_session_reason(handle) → live|closed|idle|expired|killed|revoked|unknown (read-only)
	Register(loader, ScalarFunction("acl_session_reason", {LogicalType::VARCHAR}, LogicalType::VARCHAR,
	                                [owner, state](DataChunk &args, ExpressionState &es, Vector &result) {
		                                auto skew = ClientSettings(es.GetContext()).clock_skew;
		                                EachRow<string_t, string_t>(
		                                    args.data[0], result, args.size(),
		                                    [&](const string_t &h, VectorWriter<string_t> &out) {
			                                    OutGuard guard;
			                                    if (!acl_rs_session_reason(state, h.GetData(), h.GetSize(), skew,
			                                                               &guard.out)) {
				                                    Throw(AclStatus::Invalid, guard.Text());
			                                    }
			                                    WriteText(out, guard.Text());
		                                    });
	                                }));

	// acl_session_kill(id) → whether this call ended a live session
	Register(loader, ScalarFunction("acl_session_kill", {LogicalType::BIGINT}, LogicalType::BOOLEAN,
	                                [owner, state](DataChunk &args, ExpressionState &, Vector &result) {
		                                EachRow<int64_t, bool>(args.data[0], result, args.size(),
		                                                       [&](const int64_t &id, VectorWriter<bool> &out) {
			                                                       out.WriteValue(acl_rs_session_kill(state, id));
		                                                       });
	                                }));

	// acl_session_sweep() → how many sessions it ended; acl_session_count() → live sessions
	Register(loader, ScalarFunction("acl_session_sweep", {}, LogicalType::BIGINT,
	                                [owner, state](DataChunk &args, ExpressionState &es, Vector &result) {
		                                auto skew = ClientSettings(es.GetContext()).clock_skew;
		                                EachRowNoArgs(args.size(), result,
		                                              [&]() { return acl_rs_session_sweep(state, skew); });
	                                }));
	Register(loader, ScalarFunction("acl_session_count", {}, LogicalType::BIGINT,
	                                [owner, state](DataChunk &args, ExpressionState &es, Vector &result) {
		                                auto skew = ClientSettings(es.GetContext()).clock_skew;
		                                EachRowNoArgs(args.size(), result,
		                                              [&]() { return acl_rs_session_count(state, skew); });
	                                }));
}

// A session setting: every SET and RESET goes through Rust, which refuses a value it does not take
// (the SET fails, nothing changes) and keeps the rest; the stored value is the one Rust kept
// (`'EVERY_USE'` is stored as `'every_use'`). Every one is registered as VARCHAR: DuckDB casts a
// SET's value to the option's type before `OnSet` sees it, and its cast to UBIGINT rounds (0.4 is
// 0: "never", "no cap"); as text, Rust sees what was written and refuses what is not a whole
// number. A number is kept as the UBIGINT Rust kept.
struct AclSessionSettingInfo : public ExtensionOptionInfo {
	AclSessionSettingInfo(Owner owner_p, AclState *state_p, const char *name_p, bool numeric_p)
	    : owner(std::move(owner_p)), state(state_p), name(name_p), numeric(numeric_p) {
	}
	void OnSet(ClientContext &, SetScope, Value &parameter, bool) const override {
		auto kept = Hand(parameter);
		parameter = numeric ? Value::UBIGINT(std::stoull(kept)) : Value(kept);
	}
	// Validates and keeps `value`; the kept text, or throws.
	string Hand(const Value &value) const {
		if (value.IsNull()) {
			throw InvalidInputException("acl: %s cannot be NULL", name);
		}
		auto text = value.ToString();
		OutGuard guard;
		if (!acl_rs_session_setting(state, name, strlen(name), text.data(), text.size(), &guard.out)) {
			throw InvalidInputException(guard.Text());
		}
		return guard.Text();
	}
	Owner owner; // keeps the state alive as long as the option
	AclState *state;
	const char *name;
	bool numeric;
};

void RegisterSetting(DatabaseInstance &db, const Owner &owner, AclState *state, const char *name,
                     const char *description, Value default_value) {
	auto &config = DBConfig::GetConfig(db);
	auto numeric = default_value.type().id() != LogicalTypeId::VARCHAR;
	ExtensionOption option(description, LogicalType::VARCHAR, nullptr, std::move(default_value), SetScope::GLOBAL,
	                       false, false);
	option.supports_session = false;
	auto info = make_shared_ptr<AclSessionSettingInfo>(owner, state, name, numeric);
	option.info = info;
	config.AddExtensionOption(name, std::move(option));
	// A value given before the extension was loaded (a connect-time config) is taken over without
	// a call to OnSet: it is judged and handed over here, and one Rust refuses fails the load.
	Value now;
	if (db.TryGetCurrentSetting(name, now) && !now.IsNull()) {
		info->Hand(now);
	}
}

} // namespace

void RegisterSessions(ExtensionLoader &loader, const Owner &owner, AclState *state) {
	RegisterFunctions(loader, owner, state);
	auto &db = loader.GetDatabaseInstance();
	RegisterSetting(db, owner, state, SESSION_IDLE_TIMEOUT_SETTING,
	                "seconds a session may stay unused before it ends (0: never)",
	                Value::UBIGINT(ACL_DEFAULT_SESSION_IDLE_TIMEOUT));
	RegisterSetting(db, owner, state, MAX_SESSIONS_SETTING,
	                "sessions the node holds at most; at the cap a new one is refused (0: no cap)",
	                Value::UBIGINT(ACL_DEFAULT_MAX_SESSIONS));
	RegisterSetting(db, owner, state, SESSION_BINDING_SETTING,
	                "'connect': a session's token exp is judged at open only; 'every_use': at every statement",
	                Value("connect"));
}

} // namespace acl_shim
