// The extension's numeric and boolean settings. Each is declared VARCHAR so that every value an
// operator writes reaches us (DuckDB casts to the declared type before any callback, and its cast
// error names no setting); the callback reads the word, refuses a bad one with an `acl:` message
// naming the setting and its bounds, and stores the typed value (UBIGINT or BOOLEAN), which is
// what the readers (`UnsignedSettingAt`, `acl_view_guard`) take. A bound keeps a setting from
// switching a check off (a clock skew of centuries would turn `exp` off).
#include "acl_shim.hpp"

#include <cstring>

namespace acl_shim {

namespace {

struct Bounded {
	const char *name;
	const char *meaning;
	const char *unit;
	uint64_t fallback;
	uint64_t min;
	uint64_t max;
	bool global_only;
};

// name, meaning, unit, default, min, max, GLOBAL only
const Bounded BOUNDED[] = {
    {CLOCK_SKEW_SETTING, "seconds of clock skew tolerated when ACL TOKEN judges exp and nbf", "seconds",
     DEFAULT_CLOCK_SKEW, 0, 86400, false},
    {MAX_REWRITE_SETTING, "bytes a principal's batch may grow to once the policy is applied; longer is refused (0 refuses every principal statement)",
     "bytes", DEFAULT_MAX_REWRITE_BYTES, 0, uint64_t(1) << 30, false},
    {JWKS_REFRESH_SETTING, "seconds between reads of an issuer's KEYS FROM file (0: never read again)", "seconds",
     DEFAULT_JWKS_REFRESH, 0, 604800, false},
    {JWKS_MAX_STALE_SETTING, "seconds an issuer's last keys stay valid while its KEYS FROM file cannot be read",
     "seconds", DEFAULT_JWKS_MAX_STALE, 0, 2592000, false},
    {VERSION_CHECK_SETTING, "milliseconds between a shared policy store's version checks (0: notices only)",
     "milliseconds", DEFAULT_VERSION_CHECK_INTERVAL, 0, 3600000, true},
};

// The word as a whole number within the bounds, or an `acl:` error naming the setting.
uint64_t ReadBounded(const Bounded &b, const Value &parameter) {
	if (parameter.IsNull()) {
		return b.fallback;
	}
	auto word = parameter.ToString();
	StringUtil::Trim(word);
	uint64_t n = 0;
	bool ok = !word.empty() && word.size() <= 20;
	for (auto c : word) {
		if (c < '0' || c > '9') {
			ok = false;
			break;
		}
		n = n * 10 + uint64_t(c - '0');
	}
	if (!ok || word.size() == 20 || n < b.min || n > b.max) { // 20 digits may overflow: beyond every bound
		throw InvalidInputException("acl: %s is a whole number of %s from %llu to %llu (default %llu); '%s' is not",
		                            b.name, b.unit, (unsigned long long)b.min, (unsigned long long)b.max,
		                            (unsigned long long)b.fallback, word.size() > 40 ? word.substr(0, 40) + "…" : word);
	}
	return n;
}

struct AclBoundedInfo : public ExtensionOptionInfo {
	AclBoundedInfo(const Bounded &b_p, shared_ptr<ParserExtensionInfo> owner_p, AclState *state_p)
	    : b(b_p), owner(std::move(owner_p)), state(state_p) {
	}
	void OnSet(ClientContext &, SetScope, Value &parameter, bool) const override {
		auto n = ReadBounded(b, parameter);
		// The background thread of a shared store has no context to read its interval from.
		if (strcmp(b.name, VERSION_CHECK_SETTING) == 0) {
			acl_rs_set_version_check_interval(state, n);
		}
		parameter = Value::UBIGINT(n);
	}
	const Bounded &b;
	shared_ptr<ParserExtensionInfo> owner; // keeps the state alive as long as the option
	AclState *state;
};

bool ReadBool(const Value &parameter, bool fallback) {
	if (parameter.IsNull()) {
		return fallback;
	}
	auto word = StringUtil::Lower(parameter.ToString());
	StringUtil::Trim(word);
	// Only words DuckDB's own cast takes: a value given at connect time is read back by that cast.
	if (word == "true" || word == "t" || word == "1") {
		return true;
	}
	if (word == "false" || word == "f" || word == "0") {
		return false;
	}
	throw InvalidInputException("acl: %s is true or false (default false); '%s' is not", ANONYMOUS_ADMIN_SETTING,
	                            word.size() > 40 ? word.substr(0, 40) + "…" : word);
}

struct AclBoolInfo : public ExtensionOptionInfo {
	void OnSet(ClientContext &, SetScope, Value &parameter, bool) const override {
		parameter = Value::BOOLEAN(ReadBool(parameter, false));
	}
};

string Described(const Bounded &b) {
	return StringUtil::Format("%s (%llu to %llu)", b.meaning, (unsigned long long)b.min, (unsigned long long)b.max);
}

} // namespace

void RegisterSettings(DBConfig &config, DatabaseInstance &db, shared_ptr<ParserExtensionInfo> owner, AclState *state) {
	for (auto &b : BOUNDED) {
		ExtensionOption option(Described(b), LogicalType::VARCHAR, nullptr, Value::UBIGINT(b.fallback),
		                       b.global_only ? SetScope::GLOBAL : SetScope::SESSION, false, false);
		if (b.global_only) {
			// GLOBAL only: the operator decides it for the instance, not a connection.
			option.supports_session = false;
		}
		option.info = make_shared_ptr<AclBoundedInfo>(b, owner, state);
		config.AddExtensionOption(b.name, std::move(option));
		// A value given before the extension was loaded (a connect-time config) is taken over by
		// AddExtensionOption without a call to OnSet: check it here (a bad one fails the load).
		Value now;
		if (db.TryGetCurrentSetting(b.name, now) && !now.IsNull()) {
			auto n = ReadBounded(b, now);
			if (strcmp(b.name, VERSION_CHECK_SETTING) == 0) {
				acl_rs_set_version_check_interval(state, n);
			}
		}
	}
	// GLOBAL only: the gateway's operator decides it for the instance, not a connection.
	ExtensionOption anonymous("while a policy store is in use, anonymous ACL ADMIN (and acl_exec) may change the policy "
	                          "only while this is on; in memory mode it always may (true or false)",
	                          LogicalType::VARCHAR, nullptr, Value::BOOLEAN(false), SetScope::GLOBAL, false, false);
	anonymous.supports_session = false;
	anonymous.info = make_shared_ptr<AclBoolInfo>();
	config.AddExtensionOption(ANONYMOUS_ADMIN_SETTING, std::move(anonymous));
	Value now;
	if (db.TryGetCurrentSetting(ANONYMOUS_ADMIN_SETTING, now) && !now.IsNull()) {
		ReadBool(now, false);
	}
}

} // namespace acl_shim
