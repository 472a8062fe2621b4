// Numeric acl_ settings (specs/017, "Settings"): a SET's value judged as the text written, so
// that no cast rounds a fraction into a value that switches a limit off. It decides nothing else.
#include "acl_shim.hpp"

namespace acl_shim {

namespace {

// The text of a SET's value as a whole number: ASCII digits only (blanks around them aside), at
// most 18446744073709551615. Nothing else is one: not `0.4`, `1e3`, `-1` or `+5`.
bool WholeNumber(const string &text, uint64_t &out) {
	idx_t at = 0, end = text.size();
	while (at < end && text[at] == ' ') {
		at++;
	}
	while (end > at && text[end - 1] == ' ') {
		end--;
	}
	if (at == end) {
		return false;
	}
	uint64_t n = 0;
	for (; at < end; at++) {
		auto c = text[at];
		if (c < '0' || c > '9') {
			return false;
		}
		auto digit = uint64_t(c - '0');
		if (n > (NumericLimits<uint64_t>::Maximum() - digit) / 10) {
			return false;
		}
		n = n * 10 + digit;
	}
	out = n;
	return true;
}

// A numeric acl_ setting: registered as VARCHAR, because DuckDB casts a SET's value to the
// option's type before `OnSet` sees it and its cast to UBIGINT rounds (`0.4` is 0, `1.5` is 2):
// the text written is judged here, a value that is not a whole number is refused (the SET fails,
// nothing changes), and the UBIGINT is what is kept. NULL stays NULL (the default holds).
// `acl_version_check_interval` also hands the value to the state: its background thread has no
// client context to read a setting from.
struct AclWholeNumberInfo : public ExtensionOptionInfo {
	AclWholeNumberInfo(shared_ptr<ParserExtensionInfo> owner_p, AclState *state_p, const char *name_p, bool interval_p)
	    : owner(std::move(owner_p)), state(state_p), name(name_p), interval(interval_p) {
	}
	void OnSet(ClientContext &, SetScope, Value &parameter, bool) const override {
		if (parameter.IsNull()) {
			if (interval) {
				acl_rs_set_version_check_interval(state, DEFAULT_VERSION_CHECK_INTERVAL);
			}
			return;
		}
		auto n = Take(parameter);
		parameter = Value::UBIGINT(n);
		if (interval) {
			acl_rs_set_version_check_interval(state, n);
		}
	}
	uint64_t Take(const Value &value) const {
		uint64_t n = 0;
		if (!WholeNumber(value.ToString(), n)) {
			throw InvalidInputException("acl: %s must be a whole number from 0 to 18446744073709551615", name);
		}
		return n;
	}
	shared_ptr<ParserExtensionInfo> owner; // keeps the state alive as long as the option
	AclState *state;
	const char *name;
	bool interval;
};

// Registers a numeric acl_ setting (`AclWholeNumberInfo`). A value given before the extension was
// loaded (a connect-time config) is taken over without a call to OnSet: judged here, and one that
// is not a whole number fails the load.
} // namespace

void AddWholeNumberOption(DatabaseInstance &db, DBConfig &config, const shared_ptr<ParserExtensionInfo> &owner,
                          AclState *state, const char *name, const char *description, uint64_t default_value,
                          bool global_only, bool interval) {
	ExtensionOption option(description, LogicalType::VARCHAR, nullptr, Value::UBIGINT(default_value),
	                       global_only ? SetScope::GLOBAL : SetScope::SESSION, false, false);
	if (global_only) {
		option.supports_session = false;
	}
	auto info = make_shared_ptr<AclWholeNumberInfo>(owner, state, name, interval);
	option.info = info;
	config.AddExtensionOption(name, std::move(option));
	Value now;
	if (db.TryGetCurrentSetting(name, now) && !now.IsNull()) {
		auto n = info->Take(now);
		if (interval) {
			acl_rs_set_version_check_interval(state, n);
		}
	}
}


} // namespace acl_shim
