// The typed guard's functions (specs/002, "Known types"): `acl_leakproof(key, kind, col)` and
// `acl_leakproof_strict(kind, col)`. Both are folded away when DuckDB binds them: they hand
// the column's bound type to Rust (`acl_rs_leakproof`, which records it under `key` and decides
// whether a literal of `kind` compares with it without a cast that can fail) and become the
// constant answer. The strict one is emitted where the rewrite already relied on the type being
// safe: if it is not (the column changed since), it refuses the statement instead. Principals
// cannot call either (`acl_` names are never callable; the second check admits them only in
// the policy's own SQL).
#include "acl_shim.hpp"
#include "duckdb/execution/expression_executor.hpp"
#include "duckdb/planner/expression/bound_constant_expression.hpp"

namespace acl_shim {

struct AclLeakproofInfo : public ScalarFunctionInfo {
	AclLeakproofInfo(shared_ptr<ParserExtensionInfo> owner_p, AclState *state_p, bool strict_p)
	    : owner(std::move(owner_p)), state(state_p), strict(strict_p) {
	}
	shared_ptr<ParserExtensionInfo> owner; // keeps the state alive as long as the function
	AclState *state;
	bool strict;
};

static bool ConstantText(ClientContext &context, Expression &e, string &out) {
	if (!e.IsFoldable()) {
		return false;
	}
	auto v = ExpressionExecutor::EvaluateScalar(context, e);
	if (v.IsNull()) {
		return false;
	}
	out = v.ToString();
	return true;
}

static unique_ptr<Expression> BindLeakproof(FunctionBindExpressionInput &input) {
	auto &info = input.bound_function.GetExtraFunctionInfo().Cast<AclLeakproofInfo>();
	bool safe = false;
	string key, kind;
	auto &args = input.children;
	idx_t n = info.strict ? 2 : 3; // the strict one has no key: it records nothing
	if (args.size() == n && (info.strict || ConstantText(input.context, *args[0], key)) &&
	    ConstantText(input.context, *args[n - 2], kind)) {
		auto &type = args[n - 1]->GetReturnType();
		if (type.id() != LogicalTypeId::UNKNOWN && type.id() != LogicalTypeId::SQLNULL) {
			auto name = type.ToString();
			safe = acl_rs_leakproof(info.state, key.data(), key.size(), kind.data(), kind.size(), name.data(),
			                        name.size(), info.strict);
		}
	}
	if (!safe && info.strict) {
		throw InvalidInputException("acl: a column this statement compares changed type after the statement was "
		                            "rewritten; run the statement again");
	}
	return make_uniq<BoundConstantExpression>(Value::BOOLEAN(safe));
}

// Never runs (the bind folds every call); should it, it answers "not safe".
static void RunLeakproof(DataChunk &args, ExpressionState &, Vector &result) {
	result.Reference(Value::BOOLEAN(false), count_t(args.size()));
}

void RegisterLeakproof(ExtensionLoader &loader, shared_ptr<ParserExtensionInfo> owner, AclState *state) {
	for (bool strict : {false, true}) {
		vector<LogicalType> params {LogicalType::VARCHAR, LogicalType::ANY};
		if (!strict) {
			params.insert(params.begin(), LogicalType::VARCHAR);
		}
		ScalarFunction fun(strict ? "acl_leakproof_strict" : "acl_leakproof", params, LogicalType::BOOLEAN,
		                   RunLeakproof);
		fun.SetNullHandling(FunctionNullHandling::SPECIAL_HANDLING);
		fun.SetBindExpressionCallback(BindLeakproof);
		fun.SetExtraFunctionInfo(make_shared_ptr<AclLeakproofInfo>(owner, state, strict));
		loader.RegisterFunction(fun);
	}
}

} // namespace acl_shim
