// The casts the leak-proof pushdown (cpp/pushdown.cpp, specs/002 "Guard and leak-proof pushdown")
// takes for ones that cannot raise: those no value of the source type can fail.
#include "acl_shim.hpp"

namespace acl_shim {

// Casts that cannot fail for any value of the source type (widening numerics).
bool PushdownSafeCast(const LogicalType &from, const LogicalType &to) {
	if (from == to) {
		return true;
	}
	if (from.HasAlias() || to.HasAlias()) {
		return false;
	}
	auto f = from.id(), t = to.id();
	if (t == LogicalTypeId::VARCHAR) {
		return true; // every value has a text form (DuckDB's CastCanThrow says the same)
	}
	// integer ranges: [digits needed, signed?] and rank among the integer types
	auto int_digits = [](LogicalTypeId id) -> int {
		switch (id) {
		case LogicalTypeId::TINYINT:
		case LogicalTypeId::UTINYINT:
			return 3;
		case LogicalTypeId::SMALLINT:
		case LogicalTypeId::USMALLINT:
			return 5;
		case LogicalTypeId::INTEGER:
		case LogicalTypeId::UINTEGER:
			return 10;
		case LogicalTypeId::BIGINT:
			return 19;
		case LogicalTypeId::UBIGINT:
			return 20;
		default:
			return 0;
		}
	};
	auto contains = [](LogicalTypeId outer, LogicalTypeId inner) {
		// outer's range contains inner's
		static const std::map<LogicalTypeId, std::set<LogicalTypeId>> wider {
		    {LogicalTypeId::SMALLINT, {LogicalTypeId::TINYINT, LogicalTypeId::UTINYINT}},
		    {LogicalTypeId::INTEGER,
		     {LogicalTypeId::TINYINT, LogicalTypeId::UTINYINT, LogicalTypeId::SMALLINT, LogicalTypeId::USMALLINT}},
		    {LogicalTypeId::BIGINT,
		     {LogicalTypeId::TINYINT, LogicalTypeId::UTINYINT, LogicalTypeId::SMALLINT, LogicalTypeId::USMALLINT,
		      LogicalTypeId::INTEGER, LogicalTypeId::UINTEGER}},
		    {LogicalTypeId::HUGEINT,
		     {LogicalTypeId::TINYINT, LogicalTypeId::UTINYINT, LogicalTypeId::SMALLINT, LogicalTypeId::USMALLINT,
		      LogicalTypeId::INTEGER, LogicalTypeId::UINTEGER, LogicalTypeId::BIGINT, LogicalTypeId::UBIGINT}},
		    {LogicalTypeId::USMALLINT, {LogicalTypeId::UTINYINT}},
		    {LogicalTypeId::UINTEGER, {LogicalTypeId::UTINYINT, LogicalTypeId::USMALLINT}},
		    {LogicalTypeId::UBIGINT, {LogicalTypeId::UTINYINT, LogicalTypeId::USMALLINT, LogicalTypeId::UINTEGER}},
		    {LogicalTypeId::UHUGEINT,
		     {LogicalTypeId::UTINYINT, LogicalTypeId::USMALLINT, LogicalTypeId::UINTEGER, LogicalTypeId::UBIGINT}},
		};
		auto it = wider.find(outer);
		return it != wider.end() && it->second.count(inner) > 0;
	};
	if (contains(t, f)) {
		return true;
	}
	bool numeric_from = int_digits(f) > 0 || f == LogicalTypeId::HUGEINT || f == LogicalTypeId::UHUGEINT ||
	                    f == LogicalTypeId::FLOAT || f == LogicalTypeId::DECIMAL;
	if (t == LogicalTypeId::DOUBLE && numeric_from) {
		return true; // every such value is a finite double (UHUGEINT's maximum is ~3.4e38)
	}
	if (t == LogicalTypeId::DECIMAL) {
		auto tw = DecimalType::GetWidth(to), ts = DecimalType::GetScale(to);
		if (f == LogicalTypeId::DECIMAL) {
			auto fw = DecimalType::GetWidth(from), fs = DecimalType::GetScale(from);
			return ts >= fs && tw - ts >= fw - fs;
		}
		return int_digits(f) > 0 && tw - ts >= int_digits(f);
	}
	return false;
}

} // namespace acl_shim
