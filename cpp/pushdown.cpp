// Leak-proof pushdown decided on DuckDB's bound plan (specs/002, "Guard and leak-proof pushdown").
//
// The rewrite always guards a slice layer: `SELECT CASE WHEN X THEN COLUMNS(*) END … FROM t WHERE X`.
// Bound, that is a projection G of `CASE WHEN X THEN col END` over a filter on X. Before DuckDB's
// own optimizers run (so before its filter pushdown), this walk finds every G and every filter
// position above it (WHERE/HAVING/QUALIFY filters, join conditions — what the pushdown may move
// down to G's filter or into its scan), and replaces a guard `CASE WHEN X THEN col END` by `col`
// only when every filter-position conjunct that reads the column (through any projection, group,
// union, CTE or correlated subquery) cannot raise on any value: column references, constants,
// comparisons, IN, BETWEEN, AND/OR/NOT, IS NULL, CASE of such, casts that cannot fail and the
// functions in LeakproofFunction. Anything else, or any operator this walk does not know, keeps
// the guard. Removing a guard never changes a result: every row reaching G passed the filter on
// X, so `CASE WHEN X THEN col END` is `col` there.
//
// C++, not Rust: the decision reads bound expressions (types, casts, bindings), and handing those
// across the FFI would be larger than the walk itself.
#include "acl_shim.hpp"
#include "duckdb/execution/expression_executor.hpp"
#include "duckdb/optimizer/optimizer_extension.hpp"
#include "duckdb/planner/expression/list.hpp"
#include "duckdb/planner/expression_iterator.hpp"
#include "duckdb/planner/operator/list.hpp"

#include <map>
#include <set>

namespace acl_shim {

namespace {

using Key = std::pair<idx_t, idx_t>;              // a column binding
using Guarded = std::pair<LogicalProjection *, idx_t>; // a guarded output of a G

struct Def {
	bool safe = true;      // evaluating what the binding stands for cannot raise
	std::set<Guarded> deps; // the guarded outputs its value comes from
};

struct Unknown { // thrown on anything the walk does not know: nothing is changed
	string what;
};

Key KeyOf(const ColumnBinding &b) {
	return {b.table_index.index, b.column_index.GetIndex()};
}

class Walk {
public:
	explicit Walk(ClientContext &context_p) : context(context_p) {
	}

	void Visit(LogicalOperator &op);
	size_t Apply();
	size_t Guards() const {
		return guards.size();
	}

private:
	ClientContext &context;
	std::map<Key, Def> defs;
	std::vector<std::vector<Def>> delim; // the duplicate-eliminated columns of the delim joins we are inside
	std::map<idx_t, std::vector<Def>> ctes;
	std::vector<std::pair<LogicalProjection *, idx_t>> guards;
	std::set<Guarded> keep;
	bool raising = false;      // some filter position holds a conjunct that may raise
	std::set<Guarded> linked;  // what the sides of a column-to-column comparison read

	Def Of(const ColumnBinding &b) {
		auto it = defs.find(KeyOf(b));
		return it == defs.end() ? Def() : it->second; // a base table's column, an aggregate, a mark
	}
	Def DefOf(const Expression &e) {
		Def d;
		Deps(e, d.deps);
		d.safe = CannotRaise(e);
		return d;
	}
	void Deps(const Expression &e, std::set<Guarded> &out) {
		if (e.GetExpressionClass() == ExpressionClass::BOUND_COLUMN_REF) {
			auto &col = e.Cast<BoundColumnRefExpression>();
			if (col.Depth() != 0) {
				throw Unknown {"correlated or unmatched reference"};
			}
			auto d = Of(col.Binding());
			out.insert(d.deps.begin(), d.deps.end());
			return;
		}
		ExpressionIterator::EnumerateChildren(e, [&](const Expression &c) { Deps(c, out); });
	}
	bool CannotRaise(const Expression &e);
	bool LeakproofFunction(const BoundFunctionExpression &f);
	void Filter(const Expression &e) { // a filter position: a conjunct that may be moved below G
		if (e.GetExpressionClass() == ExpressionClass::BOUND_CONJUNCTION &&
		    e.GetExpressionType() == ExpressionType::CONJUNCTION_AND) {
			for (auto &c : e.Cast<BoundConjunctionExpression>().GetChildren()) {
				Filter(*c);
			}
			return;
		}
		std::set<Guarded> d;
		Deps(e, d);
		if (!CannotRaise(e)) {
			raising = true;
			keep.insert(d.begin(), d.end());
		} else if (e.GetExpressionClass() == ExpressionClass::BOUND_FUNCTION && BoundComparisonExpression::IsComparison(e)) {
			auto &cmp = e.Cast<BoundFunctionExpression>();
			Link(BoundComparisonExpression::Left(cmp), BoundComparisonExpression::Right(cmp));
		}
	}
	// Two sides of a comparison that both read columns: DuckDB's filter combiner makes equal
	// expressions one set and copies every filter on one member to the others (whether it can
	// raise or not), so a filter that raises, wherever it stands, may land on either side.
	void Link(const Expression &l, const Expression &r) {
		if (l.IsFoldable() || r.IsFoldable()) {
			return;
		}
		Deps(l, linked);
		Deps(r, linked);
	}
	void Set(TableIndex t, idx_t i, Def d) {
		defs[{t.index, i}] = std::move(d);
	}
	void Guard(LogicalProjection &proj);
	void Children(LogicalOperator &op) {
		for (auto &c : op.children) {
			Visit(*c);
		}
	}
};

bool Walk::CannotRaise(const Expression &e) {
	switch (e.GetExpressionClass()) {
	case ExpressionClass::BOUND_COLUMN_REF: {
		auto d = Of(e.Cast<BoundColumnRefExpression>().Binding());
		return d.safe || d.deps.empty();
	}
	case ExpressionClass::BOUND_CONSTANT:
	case ExpressionClass::BOUND_PARAMETER: // its value is cast when bound, never per row
		return true;
	case ExpressionClass::BOUND_CONJUNCTION: {
		for (auto &c : e.Cast<BoundConjunctionExpression>().GetChildren()) {
			if (!CannotRaise(*c)) {
				return false;
			}
		}
		return true;
	}
	case ExpressionClass::BOUND_OPERATOR: {
		auto &op = e.Cast<BoundOperatorExpression>();
		switch (e.GetExpressionType()) {
		case ExpressionType::OPERATOR_NOT:
		case ExpressionType::OPERATOR_IS_NULL:
		case ExpressionType::OPERATOR_IS_NOT_NULL:
		case ExpressionType::OPERATOR_COALESCE:
		case ExpressionType::COMPARE_IN:
		case ExpressionType::COMPARE_NOT_IN:
			break;
		default:
			return false;
		}
		for (auto &c : op.GetChildren()) {
			bool in = e.GetExpressionType() == ExpressionType::COMPARE_IN ||
			          e.GetExpressionType() == ExpressionType::COMPARE_NOT_IN;
			if (!CannotRaise(*c) || (in && c->GetReturnType() != op.GetChildren()[0]->GetReturnType())) {
				return false;
			}
		}
		return true;
	}
	case ExpressionClass::BOUND_CASE: {
		auto &c = e.Cast<BoundCaseExpression>();
		for (auto &check : c.CaseChecks()) {
			if (!CannotRaise(*check.when_expr) || !CannotRaise(*check.then_expr)) {
				return false;
			}
		}
		return !c.ElseExpression() || CannotRaise(c.Else());
	}
	case ExpressionClass::BOUND_FUNCTION: {
		auto &f = e.Cast<BoundFunctionExpression>();
		if (e.IsFoldable()) {
			// a constant: whether it raises does not depend on any row (DuckDB folds it)
			Value v;
			return ExpressionExecutor::TryEvaluateScalar(context, e, v);
		}
		auto &args = f.GetChildren();
		for (auto &c : args) {
			if (!CannotRaise(*c)) {
				return false;
			}
		}
		if (BoundCastExpression::IsCast(e)) {
			return BoundCastExpression::IsTryCast(f) ||
			       PushdownSafeCast(BoundCastExpression::SourceType(f), BoundCastExpression::TargetType(f));
		}
		auto type = e.GetExpressionType();
		if (BoundComparisonExpression::IsComparison(e) || type == ExpressionType::COMPARE_BETWEEN ||
		    type == ExpressionType::COMPARE_NOT_BETWEEN) {
			// same-typed values: no cast per row (the binder put any cast in as its own node)
			for (auto &c : args) {
				if (c->GetReturnType() != args[0]->GetReturnType()) {
					return false;
				}
			}
			return true;
		}
		return LeakproofFunction(f);
	}
	default:
		return false;
	}
}

// The leak-proof list (PostgreSQL's proleakproof): name and exact overload; the arguments are
// already known not to raise. specs/002 gives the reason for each.
bool Walk::LeakproofFunction(const BoundFunctionExpression &f) {
	auto &name = f.Function().GetName().GetIdentifierName();
	auto &args = f.GetChildren();
	auto is = [&](idx_t i, LogicalTypeId id) { return i < args.size() && args[i]->GetReturnType().id() == id; };
	auto varchar = [&](idx_t n) {
		if (args.size() != n || f.GetReturnType().HasAlias()) {
			return false;
		}
		for (idx_t i = 0; i < n; i++) {
			if (!is(i, LogicalTypeId::VARCHAR) || args[i]->GetReturnType().HasAlias()) {
				return false;
			}
		}
		return true;
	};
	static const std::set<string> text2 {"~~", "!~~", "~~*", "!~~*", "prefix", "suffix", "contains"};
	if (text2.count(name)) {
		return varchar(2) && f.GetReturnType().id() == LogicalTypeId::BOOLEAN;
	}
	if (name == "lower" || name == "upper") {
		return varchar(1);
	}
	if (name == "year") { // EXTRACT(YEAR …): total on DATE and TIMESTAMP (infinities give NULL)
		return args.size() == 1 && (is(0, LogicalTypeId::DATE) || is(0, LogicalTypeId::TIMESTAMP));
	}
	if (name == "substring" || name == "substr") {
		// raises only on an offset or length outside ±2^32: constants in range only
		if ((args.size() != 2 && args.size() != 3) || !is(0, LogicalTypeId::VARCHAR)) {
			return false;
		}
		for (idx_t i = 1; i < args.size(); i++) {
			Value v;
			if (!is(i, LogicalTypeId::BIGINT) || !args[i]->IsFoldable() ||
			    !ExpressionExecutor::TryEvaluateScalar(context, *args[i], v) || v.IsNull()) {
				return false;
			}
			auto n = v.GetValue<int64_t>();
			if (n < -(int64_t(1) << 31) || n > (int64_t(1) << 31)) {
				return false;
			}
		}
		return true;
	}
	return false;
}

// A projection is a guard G when its CASE items are `CASE WHEN X THEN col END` over a filter whose
// conjuncts include every conjunct of X (and X is not volatile).
void Walk::Guard(LogicalProjection &proj) {
	if (proj.children.size() != 1 || proj.children[0]->type != LogicalOperatorType::LOGICAL_FILTER) {
		return;
	}
	auto &filter = proj.children[0]->Cast<LogicalFilter>();
	std::vector<const Expression *> below;
	std::function<void(const Expression &, std::vector<const Expression *> &)> split =
	    [&](const Expression &e, std::vector<const Expression *> &out) {
		    if (e.GetExpressionClass() == ExpressionClass::BOUND_CONJUNCTION &&
		        e.GetExpressionType() == ExpressionType::CONJUNCTION_AND) {
			    for (auto &c : e.Cast<BoundConjunctionExpression>().GetChildren()) {
				    split(*c, out);
			    }
		    } else {
			    out.push_back(&e);
		    }
	    };
	for (auto &e : filter.expressions) {
		split(*e, below);
	}
	for (idx_t i = 0; i < proj.expressions.size(); i++) {
		auto &e = *proj.expressions[i];
		if (e.GetExpressionClass() != ExpressionClass::BOUND_CASE) {
			continue;
		}
		auto &c = e.Cast<BoundCaseExpression>();
		Value otherwise; // ELSE NULL (a NULL constant, or its cast to the column's type)
		if (c.CaseChecks().size() != 1 || !c.ElseExpression() || !c.Else().IsFoldable() ||
		    !ExpressionExecutor::TryEvaluateScalar(context, c.Else(), otherwise) || !otherwise.IsNull()) {
			continue;
		}
		auto &check = c.CaseChecks()[0];
		if (check.then_expr->GetExpressionClass() != ExpressionClass::BOUND_COLUMN_REF ||
		    check.then_expr->GetReturnType() != e.GetReturnType() || check.when_expr->IsVolatile()) {
			continue;
		}
		std::vector<const Expression *> x;
		split(*check.when_expr, x);
		bool implied = !x.empty();
		for (auto *xe : x) {
			bool found = false;
			for (auto *be : below) {
				found = found || xe->Equals(*be);
			}
			implied = implied && found;
		}
		if (!implied) {
			continue;
		}
		// its value is the column below, unchanged: it depends on this guard and on the column's own
		auto d = DefOf(*check.then_expr);
		d.deps.insert({&proj, i});
		// as safe as the column it passes on (a guard over an expression that may raise is not)
		d.safe = Of(check.then_expr->Cast<BoundColumnRefExpression>().Binding()).safe;
		Set(proj.table_index, i, std::move(d));
		guards.emplace_back(&proj, i);
	}
}

void Walk::Visit(LogicalOperator &op) {
	switch (op.type) {
	case LogicalOperatorType::LOGICAL_PROJECTION: {
		Children(op);
		auto &proj = op.Cast<LogicalProjection>();
		for (idx_t i = 0; i < proj.expressions.size(); i++) {
			auto &e = *proj.expressions[i];
			auto d = DefOf(e);
			// DuckDB's projection placement moves an item it believes cannot throw (its own
			// function flags, which most functions leave unset) down the plan, through filters:
			// one that this list cannot confirm keeps the guard on what it reads
			if (!d.deps.empty() && !d.safe && !e.CanThrow() && !e.IsVolatile()) {
				keep.insert(d.deps.begin(), d.deps.end());
			}
			Set(proj.table_index, i, std::move(d));
		}
		Guard(proj);
		return;
	}
	case LogicalOperatorType::LOGICAL_FILTER:
		Children(op);
		for (auto &e : op.expressions) {
			Filter(*e);
		}
		return;
	case LogicalOperatorType::LOGICAL_AGGREGATE_AND_GROUP_BY: {
		// aggregates are computed above G, on rows its filter let through; a filter on them is not
		// moved below the aggregate. A group is its expression (a filter on it is pushed through).
		Children(op);
		auto &agg = op.Cast<LogicalAggregate>();
		for (idx_t i = 0; i < agg.groups.size(); i++) {
			Set(agg.group_index, i, DefOf(*agg.groups[i]));
		}
		return;
	}
	case LogicalOperatorType::LOGICAL_UNNEST: {
		Children(op);
		auto &un = op.Cast<LogicalUnnest>();
		for (idx_t i = 0; i < un.expressions.size(); i++) {
			auto d = DefOf(*un.expressions[i]);
			d.safe = false;
			Set(un.unnest_index, i, std::move(d));
		}
		return;
	}
	case LogicalOperatorType::LOGICAL_EXPRESSION_GET: {
		Children(op);
		auto &get = op.Cast<LogicalExpressionGet>();
		for (auto &row : get.expressions) {
			for (idx_t i = 0; i < row.size(); i++) {
				auto d = DefOf(*row[i]);
				auto &slot = defs[{get.table_index.index, i}];
				slot.safe = false;
				slot.deps.insert(d.deps.begin(), d.deps.end());
			}
		}
		return;
	}
	case LogicalOperatorType::LOGICAL_UNION:
	case LogicalOperatorType::LOGICAL_EXCEPT:
	case LogicalOperatorType::LOGICAL_INTERSECT: {
		Children(op);
		auto &set = op.Cast<LogicalSetOperation>();
		for (auto &c : op.children) {
			auto bindings = c->GetColumnBindings();
			for (idx_t i = 0; i < bindings.size(); i++) {
				auto d = Of(bindings[i]);
				auto &slot = defs[{set.table_index.index, i}];
				slot.safe = slot.safe && (d.safe || d.deps.empty());
				slot.deps.insert(d.deps.begin(), d.deps.end());
			}
		}
		return;
	}
	case LogicalOperatorType::LOGICAL_MATERIALIZED_CTE: {
		auto &cte = op.Cast<LogicalMaterializedCTE>();
		Visit(*op.children[0]);
		auto &slot = ctes[cte.table_index.index];
		for (auto &b : op.children[0]->GetColumnBindings()) {
			slot.push_back(Of(b));
		}
		for (idx_t i = 1; i < op.children.size(); i++) {
			Visit(*op.children[i]);
		}
		return;
	}
	case LogicalOperatorType::LOGICAL_CTE_REF: {
		auto &ref = op.Cast<LogicalCTERef>();
		auto it = ctes.find(ref.cte_index.index);
		if (it == ctes.end() || it->second.size() != ref.chunk_types.size()) {
			throw Unknown {"correlated or unmatched reference"};
		}
		for (idx_t i = 0; i < it->second.size(); i++) {
			Set(ref.table_index, i, it->second[i]);
		}
		return;
	}
	case LogicalOperatorType::LOGICAL_DELIM_GET: {
		auto &get = op.Cast<LogicalDelimGet>();
		if (delim.empty() || delim.back().size() != get.chunk_types.size()) {
			throw Unknown {"correlated or unmatched reference"};
		}
		for (idx_t i = 0; i < get.chunk_types.size(); i++) {
			Set(get.table_index, i, delim.back()[i]);
		}
		return;
	}
	case LogicalOperatorType::LOGICAL_DELIM_JOIN:
	case LogicalOperatorType::LOGICAL_COMPARISON_JOIN: {
		auto &join = op.Cast<LogicalComparisonJoin>();
		if (op.children.size() != 2) {
			throw Unknown {"correlated or unmatched reference"};
		}
		idx_t outer = join.delim_flipped ? 1 : 0;
		Visit(*op.children[outer]);
		bool is_delim = op.type == LogicalOperatorType::LOGICAL_DELIM_JOIN;
		if (is_delim) {
			std::vector<Def> cols;
			for (auto &e : join.duplicate_eliminated_columns) {
				cols.push_back(DefOf(*e));
			}
			delim.push_back(std::move(cols));
		}
		Visit(*op.children[1 - outer]);
		if (is_delim) {
			delim.pop_back();
		}
		for (auto &cond : join.conditions) {
			if (!cond.IsComparison()) {
				Filter(cond.GetJoinExpression());
				continue;
			}
			std::set<Guarded> d;
			Deps(cond.GetLHS(), d);
			Deps(cond.GetRHS(), d);
			if (!(CannotRaise(cond.GetLHS()) && CannotRaise(cond.GetRHS()) &&
			      cond.GetLHS().GetReturnType() == cond.GetRHS().GetReturnType())) {
				raising = true;
				keep.insert(d.begin(), d.end());
			} else {
				Link(cond.GetLHS(), cond.GetRHS());
			}
		}
		for (auto &e : op.expressions) {
			Filter(*e);
		}
		return;
	}
	case LogicalOperatorType::LOGICAL_ANY_JOIN:
		Children(op);
		Filter(*op.Cast<LogicalAnyJoin>().condition);
		return;
	case LogicalOperatorType::LOGICAL_WINDOW:       // results over rows above G; child columns pass through
	case LogicalOperatorType::LOGICAL_CROSS_PRODUCT:
	case LogicalOperatorType::LOGICAL_LIMIT:
	case LogicalOperatorType::LOGICAL_ORDER_BY:
	case LogicalOperatorType::LOGICAL_TOP_N:
	case LogicalOperatorType::LOGICAL_DISTINCT:
	case LogicalOperatorType::LOGICAL_EXPLAIN:
	case LogicalOperatorType::LOGICAL_PREPARE:
		Children(op);
		return;
	case LogicalOperatorType::LOGICAL_GET:
	case LogicalOperatorType::LOGICAL_CHUNK_GET:
	case LogicalOperatorType::LOGICAL_DUMMY_SCAN:
	case LogicalOperatorType::LOGICAL_EMPTY_RESULT:
		if (!op.children.empty()) {
			// a table function over a relation's rows (in-out): what its columns hold is its own
			throw Unknown {"table function with input"};
		}
		return;
	default:
		throw Unknown {LogicalOperatorToString(op.type)};
	}
}

size_t Walk::Apply() {
	// A conjunct that may raise can be copied across every comparison of columns (above): then no
	// guard on either side of one is dropped.
	if (raising) {
		keep.insert(linked.begin(), linked.end());
	}
	size_t dropped = 0;
	for (auto &g : guards) {
		if (keep.count(g)) {
			continue;
		}
		dropped++;
		auto &slot = g.first->expressions[g.second];
		auto &c = slot->Cast<BoundCaseExpression>();
		auto plain = std::move(c.CaseChecksMutable()[0].then_expr);
		plain->SetAlias(slot->GetAlias());
		slot = std::move(plain);
	}
	return dropped;
}

// ACL_PUSHDOWN_DEBUG=1: what was decided, on stderr (tests and benchmarks only).
bool Debug() {
	static const bool on = getenv("ACL_PUSHDOWN_DEBUG") != nullptr;
	return on;
}

void PreOptimize(OptimizerExtensionInput &input, unique_ptr<LogicalOperator> &plan) {
	Walk walk(input.context);
	try {
		walk.Visit(*plan);
	} catch (Unknown &u) {
		if (Debug()) {
			fprintf(stderr, "acl pushdown: every guard kept (%s)\n", u.what.c_str());
		}
		return; // every guard stays
	}
	auto dropped = walk.Apply();
	if (Debug()) {
		fprintf(stderr, "acl pushdown: %zu guarded items, %zu dropped\n", walk.Guards(), dropped);
	}
}

} // namespace

void RegisterPushdown(DBConfig &config) {
	OptimizerExtension ext;
	ext.pre_optimize_function = PreOptimize;
	OptimizerExtension::Register(config, std::move(ext));
}

} // namespace acl_shim
