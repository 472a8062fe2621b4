// ENUM exposure (specs/002, "ENUM labels"): an ENUM type lists every label, also those only
// hidden rows carry, so where `acl_enum_types` (or an object's TYPES) says so, what a principal
// reads is cast to VARCHAR above every row filter. `acl_enum_varchar(x)` is folded away when DuckDB binds it: x itself when its type holds
// no ENUM (the plan is the one without it: filters and statistics reach the scan), else x cast to
// its type with every ENUM, nested ones included, made VARCHAR. The rewrite emits it over a
// policy object's columns (`acl_enum_varchar(COLUMNS(*))`) and around the target's columns in a
// write; principals cannot call it (`acl_` names are never callable). And the setting
// `acl_enum_types` (GLOBAL): each SET, RESET and the value at load go to Rust, which checks the word.
#include "acl_shim.hpp"
#include "duckdb/common/type_visitor.hpp"
#include "duckdb/planner/expression/bound_cast_expression.hpp"

namespace acl_shim {

namespace {

// `type` with every ENUM in it (nested ones included) made VARCHAR.
LogicalType WithoutEnums(const LogicalType &type) {
	return TypeVisitor::VisitReplace(type, [](const LogicalType &t) {
		return t.id() == LogicalTypeId::ENUM ? LogicalType::VARCHAR : t;
	});
}

bool HoldsEnum(const LogicalType &type) {
	return TypeVisitor::Contains(type, [](const LogicalType &t) { return t.id() == LogicalTypeId::ENUM; });
}

unique_ptr<Expression> BindEnumVarchar(FunctionBindExpressionInput &input) {
	auto &args = input.children;
	if (args.size() != 1) {
		throw InvalidInputException("acl: internal error: the ENUM cast takes one argument");
	}
	auto child = std::move(args[0]);
	auto type = child->GetReturnType();
	if (!HoldsEnum(type)) {
		return child;
	}
	return BoundCastExpression::AddCastToType(input.context, std::move(child), WithoutEnums(type));
}

// Never runs (the bind folds every call); should it, it refuses rather than pass a value on.
void RunEnumVarchar(DataChunk &, ExpressionState &, Vector &) {
	throw InvalidInputException("acl: internal error: the ENUM cast was not folded");
}

// `acl_enum_types`: the word goes to Rust, which refuses anything but sliced, varchar and keep.
struct AclEnumTypesInfo : public ExtensionOptionInfo {
	AclEnumTypesInfo(shared_ptr<ParserExtensionInfo> owner_p, AclState *state_p)
	    : owner(std::move(owner_p)), state(state_p) {
	}
	void OnSet(ClientContext &, SetScope, Value &parameter, bool) const override {
		auto word = parameter.IsNull() ? string(DefaultEnumTypes()) : parameter.ToString();
		if (!acl_rs_set_enum_types(state, word.data(), word.size())) {
			throw InvalidInputException("acl: acl_enum_types is 'sliced', 'varchar' or 'keep'");
		}
		StringUtil::Trim(word);
		parameter = Value(StringUtil::Lower(word));
	}
	static const char *DefaultEnumTypes() {
		return acl_rs_default_enum_types();
	}
	shared_ptr<ParserExtensionInfo> owner; // keeps the state alive as long as the option
	AclState *state;
};

} // namespace

void RegisterEnums(ExtensionLoader &loader, DBConfig &config, DatabaseInstance &db,
                   shared_ptr<ParserExtensionInfo> owner, AclState *state) {
	ScalarFunction fun("acl_enum_varchar", {LogicalType::ANY}, LogicalType::ANY, RunEnumVarchar);
	fun.SetNullHandling(FunctionNullHandling::SPECIAL_HANDLING);
	fun.SetBindExpressionCallback(BindEnumVarchar);
	loader.RegisterFunction(fun);

	// GLOBAL only: the operator decides it for the instance (every principal, every connection).
	ExtensionOption option("how principals are shown ENUM columns (an ENUM type lists labels only hidden rows carry): "
	                       "'sliced' (as VARCHAR wherever a policy narrows the object, DuckDB's type where the table "
	                       "is read whole), 'varchar' (as VARCHAR everywhere) or 'keep' (DuckDB's type everywhere); an "
	                       "object's TYPES (enums = …) wins",
	                       LogicalType::VARCHAR, nullptr, Value(AclEnumTypesInfo::DefaultEnumTypes()), SetScope::GLOBAL,
	                       false, false);
	option.supports_session = false;
	option.info = make_shared_ptr<AclEnumTypesInfo>(owner, state);
	config.AddExtensionOption(ENUM_TYPES_SETTING, std::move(option));
	// A value given before the extension was loaded (a connect-time config) is taken over by
	// AddExtensionOption without a call to OnSet: hand it over here (an unknown word fails the load).
	Value now;
	if (db.TryGetCurrentSetting(ENUM_TYPES_SETTING, now) && !now.IsNull()) {
		auto word = now.ToString();
		if (!acl_rs_set_enum_types(state, word.data(), word.size())) {
			throw InvalidInputException("acl: acl_enum_types is 'sliced', 'varchar' or 'keep'");
		}
	}
}

} // namespace acl_shim
