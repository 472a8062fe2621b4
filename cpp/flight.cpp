// The Flight SQL door's functions and settings (specs/018): `acl_flight_serve(uri [, cert, key])`
// and `acl_flight_stop(uri)` hand their arguments and the caller's settings to Rust
// (src/ffi/door.rs) and throw what it refuses; the three GLOBAL settings (`acl_max_result_rows`,
// `acl_flight_stream_idle`, `acl_node_stream_budget`) are validated by Rust at every SET and RESET
// (a refused value changes nothing). It decides nothing. Principals cannot call any of them
// (`acl_` names are never callable).
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
		throw InvalidInputException(text.empty() ? string("acl: internal error in a Flight SQL door function") : text);
	}
}

void Register(ExtensionLoader &loader, ScalarFunction fun) {
	fun.SetVolatile();
	fun.SetFallible();
	loader.RegisterFunction(fun);
}

// The parser override is strict in this context: no statement can reach DuckDB's parser unrewritten.
bool Strict(ClientContext &context) {
	Value v;
	if (!context.TryGetCurrentSetting("allow_parser_override_extension", v) || v.IsNull()) {
		return false;
	}
	return StringUtil::Lower(v.ToString()) == "strict";
}

string Serve(AclState *state, ClientContext &context, string_t uri, const string_t *cert, const string_t *key) {
	auto settings = ClientSettings(context);
	OutGuard guard;
	auto status = acl_rs_flight_serve(state, uri.GetData(), uri.GetSize(), cert ? cert->GetData() : nullptr,
	                                  cert ? cert->GetSize() : 0, key ? key->GetData() : nullptr, key ? key->GetSize() : 0,
	                                  &settings, Strict(context), &guard.out);
	if (status != AclStatus::Rewritten) {
		Throw(status, guard.Text());
	}
	return guard.Text();
}

void RegisterFunctions(ExtensionLoader &loader, const Owner &owner, AclState *state) {
	// acl_flight_serve(uri) → the URI served (with the port bound when 0 was asked)
	Register(loader, ScalarFunction("acl_flight_serve", {LogicalType::VARCHAR}, LogicalType::VARCHAR,
	                                [owner, state](DataChunk &args, ExpressionState &es, Vector &result) {
		                                auto &context = es.GetContext();
		                                UnaryExecutor::Execute<string_t, string_t>(args.data[0], result, [&](string_t uri) {
			                                return StringVector::AddString(result, Serve(state, context, uri, nullptr, nullptr));
		                                });
	                                }));
	// acl_flight_serve(uri, cert, key): TLS, the certificate and key as PEM text or file paths
	Register(loader, ScalarFunction("acl_flight_serve", {LogicalType::VARCHAR, LogicalType::VARCHAR, LogicalType::VARCHAR},
	                                LogicalType::VARCHAR, [owner, state](DataChunk &args, ExpressionState &es, Vector &result) {
		                                auto &context = es.GetContext();
		                                TernaryExecutor::Execute<string_t, string_t, string_t, string_t>(
		                                    args.data[0], args.data[1], args.data[2], result, args.size(),
		                                    [&](string_t uri, string_t cert, string_t key) {
			                                    return StringVector::AddString(result, Serve(state, context, uri, &cert, &key));
		                                    });
	                                }));
	// acl_flight_stop(uri) → how many sessions it closed
	Register(loader, ScalarFunction("acl_flight_stop", {LogicalType::VARCHAR}, LogicalType::BIGINT,
	                                [owner, state](DataChunk &args, ExpressionState &, Vector &result) {
		                                UnaryExecutor::Execute<string_t, int64_t>(args.data[0], result, [&](string_t uri) {
			                                OutGuard guard;
			                                auto status = acl_rs_flight_stop(state, uri.GetData(), uri.GetSize(), &guard.out);
			                                if (status != AclStatus::Rewritten) {
				                                Throw(status, guard.Text());
			                                }
			                                return int64_t(std::stoll(guard.Text()));
		                                });
	                                }));
}

// A door setting: every SET and RESET goes through Rust, which refuses a value it does not take.
struct AclDoorSettingInfo : public ExtensionOptionInfo {
	AclDoorSettingInfo(Owner owner_p, AclState *state_p, const char *name_p)
	    : owner(std::move(owner_p)), state(state_p), name(name_p) {
	}
	// Declared VARCHAR (as cpp/settings.cpp's): DuckDB's cast to UBIGINT would round `1.5` and
	// answer `-1` with its own message; the text as written is judged in Rust and the number kept.
	void OnSet(ClientContext &, SetScope, Value &parameter, bool) const override {
		parameter = Value::UBIGINT(Hand(parameter));
	}
	uint64_t Hand(const Value &value) const {
		if (value.IsNull()) {
			throw InvalidInputException("acl: %s cannot be NULL", name);
		}
		auto text = value.ToString();
		OutGuard guard;
		if (!acl_rs_door_setting(state, name, strlen(name), text.data(), text.size(), &guard.out)) {
			throw InvalidInputException(guard.Text());
		}
		return std::stoull(guard.Text());
	}
	Owner owner;
	AclState *state;
	const char *name;
};

void RegisterSetting(DatabaseInstance &db, const Owner &owner, AclState *state, const char *name,
                     const char *description, uint64_t default_value) {
	auto &config = DBConfig::GetConfig(db);
	ExtensionOption option(description, LogicalType::VARCHAR, nullptr, Value::UBIGINT(default_value), SetScope::GLOBAL,
	                       false, false);
	option.supports_session = false;
	auto info = make_shared_ptr<AclDoorSettingInfo>(owner, state, name);
	option.info = info;
	config.AddExtensionOption(name, std::move(option));
	Value now;
	if (db.TryGetCurrentSetting(name, now) && !now.IsNull()) {
		info->Hand(now);
	}
}

} // namespace

void RegisterFlight(ExtensionLoader &loader, const Owner &owner, AclState *state) {
	RegisterFunctions(loader, owner, state);
	auto &db = loader.GetDatabaseInstance();
	RegisterSetting(db, owner, state, "acl_max_result_rows",
	                "rows a Flight SQL door's result may carry at most; a longer result fails (0: no cap)", 0);
	RegisterSetting(db, owner, state, "acl_flight_stream_idle",
	                "seconds a Flight SQL door's stream waits for a client that stopped reading before it is cut off",
	                ACL_DEFAULT_STREAM_IDLE);
	RegisterSetting(db, owner, state, "acl_node_stream_budget",
	                "bytes of results the node's Flight SQL doors buffer at most, all streams together (0: half of "
	                "memory_limit)",
	                0);
}

} // namespace acl_shim
