#include "acl_shim.hpp"

namespace acl_shim {
namespace {

// The second line of defence (specs/011): lists what DuckDB's own parse of a rewritten statement
// names, for Rust to compare with the decision. It decides nothing; what it does not model is
// listed as Other (refused). The kinds are Rust's `RefKind` (src/rewrite/defence), AclRefKind in
// acl_ffi.hpp. Iterative, so a deep expression cannot exhaust the stack here.
//
// Regions: policy SQL is inserted as a derived table aliased "__acl_p<j>" (or, a sliced object,
// as a derived table or a CTE whose own FROM item carries that alias). Each such subquery outside
// every region is reported (Region, with the alias) and numbered 1, 2, ... in the order reported;
// everything below it is reported with that number, everything else with 0. Rust decides what
// each region may hold.
const char *const REGION_PREFIX = "__acl_p";

bool OpensRegion(const Identifier &alias) {
	auto &name = alias.GetIdentifierName();
	auto n = strlen(REGION_PREFIX);
	return name.size() >= n && StringUtil::CIEquals(name.substr(0, n), REGION_PREFIX);
}

// The marker of a query that is a slice: the alias of the FROM item of its SELECT.
const Identifier *SliceMarker(QueryNode *node) {
	if (node && node->type == QueryNodeType::SELECT_NODE) {
		auto &from = node->Cast<SelectNode>().from_table;
		if (from && OpensRegion(from->alias)) {
			return &from->alias;
		}
	}
	return nullptr;
}

// The marker of a subquery that is a region itself: its own alias, or (a sliced object, which
// keeps the principal's alias) the alias of the FROM item of its SELECT.
const Identifier *RegionMarker(SubqueryRef &sub) {
	if (OpensRegion(sub.alias)) {
		return &sub.alias;
	}
	return SliceMarker(sub.subquery ? sub.subquery->node.get() : nullptr);
}

// A pointer into the parse and the region it sits in.
template <class T>
struct In {
	T *item;
	uint32_t region;
};

class ParsedNames {
public:
	explicit ParsedNames(ParsedRefs &out)
	    : refs(out.refs), strs(out.strs), literals(out.literals), qualify(out.qualify) {
	}

	void Statement(SQLStatement &statement) {
		Literal(AclRefKind::Statement, StatementTypeToString(statement.type));
		Body(statement);
		while (!nodes.empty() || !tables.empty() || !exprs.empty()) {
			if (!nodes.empty()) {
				auto n = nodes.back();
				nodes.pop_back();
				region = n.region;
				VisitNode(*n.item);
			} else if (!tables.empty()) {
				auto t = tables.back();
				tables.pop_back();
				region = t.region;
				VisitTable(*t.item);
			} else {
				auto e = exprs.back();
				exprs.pop_back();
				region = e.region;
				VisitExpr(*e.item);
			}
		}
	}

private:
	void Body(SQLStatement &statement) {
		switch (statement.type) {
		case StatementType::SELECT_STATEMENT:
			Node(statement.Cast<SelectStatement>().node.get());
			break;
		case StatementType::INSERT_STATEMENT:
			Node(statement.Cast<InsertStatement>().node.get());
			break;
		case StatementType::UPDATE_STATEMENT:
			Node(statement.Cast<UpdateStatement>().node.get());
			break;
		case StatementType::DELETE_STATEMENT:
			Node(statement.Cast<DeleteStatement>().node.get());
			break;
		case StatementType::MERGE_INTO_STATEMENT:
			Node(statement.Cast<MergeIntoStatement>().node.get());
			break;
		case StatementType::EXPLAIN_STATEMENT: {
			auto &inner = statement.Cast<ExplainStatement>().stmt;
			if (inner) {
				Body(*inner);
			}
			break;
		}
		case StatementType::CREATE_STATEMENT: {
			// What a CREATE TABLE|VIEW reads or calls: its query, column defaults, CHECKs.
			auto &info = statement.Cast<CreateStatement>().info;
			if (info && info->type == CatalogType::TABLE_ENTRY) {
				auto &table = info->Cast<CreateTableInfo>();
				if (table.query) {
					Node(table.query->node.get());
				}
				for (auto &col : table.columns.Logical()) {
					if (col.HasDefaultValue()) {
						exprs.push_back({const_cast<ParsedExpression *>(&col.DefaultValue()), region});
					}
				}
				for (auto &c : table.constraints) {
					if (c && c->type == ConstraintType::CHECK) {
						Expr(c->Cast<CheckConstraint>().expression);
					}
				}
			} else if (info && info->type == CatalogType::VIEW_ENTRY) {
				auto &view = info->Cast<CreateViewInfo>();
				if (view.query) {
					Node(view.query->node.get());
				}
			} else {
				Literal(AclRefKind::Other, "CREATE");
			}
			break;
		}
		default:
			break; // its type alone decides (transaction control, DROP: they read nothing)
		}
	}

	vector<In<QueryNode>> nodes;
	vector<In<TableRef>> tables;
	vector<In<ParsedExpression>> exprs;
	vector<AclRef> &refs;
	vector<AclStr> &strs;
	std::deque<string> &literals;
	vector<FunctionExpression *> &qualify;
	// The region of the item being visited (0: outside every region), and how many were opened.
	uint32_t region = 0;
	uint32_t opened = 0;
	QueryNode *top = nullptr;

	void Literal(AclRefKind kind, string text) {
		literals.push_back(std::move(text));
		refs.push_back(AclRef {static_cast<uint8_t>(kind), static_cast<uint32_t>(strs.size()), 1, region});
		strs.push_back(AclStr {literals.back().data(), literals.back().size()});
	}
	void Name(AclRefKind kind, const QualifiedName &name) {
		auto first = static_cast<uint32_t>(strs.size());
		for (auto &part : name.Path()) {
			auto &text = part.GetIdentifierName();
			strs.push_back(AclStr {text.data(), text.size()});
		}
		refs.push_back(AclRef {static_cast<uint8_t>(kind), first, static_cast<uint32_t>(strs.size() - first), region});
	}
	void Name(AclRefKind kind, const Identifier &name) {
		auto &text = name.GetIdentifierName();
		refs.push_back(AclRef {static_cast<uint8_t>(kind), static_cast<uint32_t>(strs.size()), 1, region});
		strs.push_back(AclStr {text.data(), text.size()});
	}
	void Names(AclRefKind kind, const vector<Identifier> &names) {
		auto first = static_cast<uint32_t>(strs.size());
		for (auto &part : names) {
			auto &text = part.GetIdentifierName();
			strs.push_back(AclStr {text.data(), text.size()});
		}
		refs.push_back(AclRef {static_cast<uint8_t>(kind), first, static_cast<uint32_t>(strs.size() - first), region});
	}
	void Node(QueryNode *n, uint32_t in) {
		if (n) {
			if (!top) {
				top = n; // the first node Body hands over is the statement's top query
			}
			nodes.push_back({n, in});
		}
	}
	void Node(QueryNode *n) {
		Node(n, region);
	}
	void Table(TableRef *t) {
		if (t) {
			tables.push_back({t, region});
		}
	}
	void Expr(unique_ptr<ParsedExpression> &e) {
		if (e) {
			exprs.push_back({e.get(), region});
		}
	}
	void Exprs(vector<unique_ptr<ParsedExpression>> &list) {
		for (auto &e : list) {
			Expr(e);
		}
	}
	void SetInfo(UpdateSetInfo *info) {
		if (info) {
			Exprs(info->expressions);
			Expr(info->condition);
		}
	}

	void VisitNode(QueryNode &node) {
		KeepNames(node);
		switch (node.type) {
		case QueryNodeType::SELECT_NODE: {
			auto &n = node.Cast<SelectNode>();
			Exprs(n.select_list);
			Exprs(n.groups.group_expressions);
			Expr(n.where_clause);
			Expr(n.having);
			Expr(n.qualify);
			Table(n.from_table.get());
			break;
		}
		case QueryNodeType::SET_OPERATION_NODE:
			for (auto &child : node.Cast<SetOperationNode>().children) {
				Node(child.get());
			}
			break;
		case QueryNodeType::RECURSIVE_CTE_NODE: {
			auto &n = node.Cast<RecursiveCTENode>();
			Node(n.left.get());
			Node(n.right.get());
			Exprs(n.key_targets);
			break;
		}
		case QueryNodeType::INSERT_QUERY_NODE: {
			auto &n = node.Cast<InsertQueryNode>();
			Name(AclRefKind::InsertTarget, n.qualified_name);
			if (n.select_statement) {
				Node(n.select_statement->node.get());
			}
			Table(n.table_ref.get());
			Exprs(n.returning_list);
			if (n.on_conflict_info) {
				SetInfo(n.on_conflict_info->set_info.get());
				Expr(n.on_conflict_info->condition);
			}
			break;
		}
		case QueryNodeType::UPDATE_QUERY_NODE: {
			auto &n = node.Cast<UpdateQueryNode>();
			Table(n.table.get());
			Table(n.from_table.get());
			SetInfo(n.set_info.get());
			Exprs(n.returning_list);
			break;
		}
		case QueryNodeType::DELETE_QUERY_NODE: {
			auto &n = node.Cast<DeleteQueryNode>();
			Table(n.table.get());
			for (auto &u : n.using_clauses) {
				Table(u.get());
			}
			Expr(n.condition);
			Exprs(n.returning_list);
			break;
		}
		case QueryNodeType::MERGE_QUERY_NODE: {
			auto &n = node.Cast<MergeQueryNode>();
			Table(n.target.get());
			Table(n.source.get());
			Expr(n.join_condition);
			for (auto &entry : n.actions) {
				for (auto &action : entry.second) {
					Expr(action->condition);
					SetInfo(action->update_info.get());
					Exprs(action->expressions);
				}
			}
			Exprs(n.returning_list);
			break;
		}
		default:
			Literal(AclRefKind::Other, "query node");
			break;
		}
		ParsedExpressionIterator::EnumerateQueryNodeModifiers(node,
		                                                      [&](unique_ptr<ParsedExpression> &e) { Expr(e); });
		for (auto &kv : node.cte_map.map) {
			Name(AclRefKind::CteDef, kv.first);
			// A slice the statement names more than once is a CTE whose body is the slice: reported
			// right after the CTE's name (Rust pairs the two), only on the statement's top query,
			// whose scope every reference in the statement is in. Elsewhere its body is walked as
			// the principal's (its table is then refused outside its region).
			auto body = kv.second->query_node.get();
			auto marker = region == 0 && &node == top ? SliceMarker(body) : nullptr;
			if (marker) {
				Name(AclRefKind::Region, *marker);
				Node(body, ++opened);
			} else {
				Node(body);
			}
			Exprs(kv.second->key_targets);
			Exprs(kv.second->payload_aggregates);
		}
	}

	void VisitTable(TableRef &ref) {
		switch (ref.type) {
		case TableReferenceType::BASE_TABLE: {
			auto &t = ref.Cast<BaseTableRef>();
			Name(AclRefKind::Table, t.GetQualifiedName());
			if (t.at_clause) {
				Literal(AclRefKind::Other, "AT clause");
			}
			break;
		}
		case TableReferenceType::JOIN: {
			auto &j = ref.Cast<JoinRef>();
			Table(j.left.get());
			Table(j.right.get());
			Expr(j.condition);
			break;
		}
		case TableReferenceType::SUBQUERY: {
			auto &sub = ref.Cast<SubqueryRef>();
			auto in = region;
			// Regions do not nest: inside one, a marker opens nothing (a region the rules inserted
			// there is then missing, which Rust refuses).
			auto marker = region == 0 ? RegionMarker(sub) : nullptr;
			if (marker) {
				Name(AclRefKind::Region, *marker);
				in = ++opened;
			}
			Node(sub.subquery->node.get(), in);
			break;
		}
		case TableReferenceType::TABLE_FUNCTION: {
			auto &f = ref.Cast<TableFunctionRef>();
			if (f.function && f.function->GetExpressionClass() == ExpressionClass::FUNCTION) {
				Name(AclRefKind::TableFunction, f.function->Cast<FunctionExpression>().GetQualifiedName());
			} else {
				Literal(AclRefKind::Other, "table function");
			}
			Expr(f.function);
			if (f.subquery) {
				Node(f.subquery->node.get());
			}
			break;
		}
		case TableReferenceType::EXPRESSION_LIST:
			for (auto &row : ref.Cast<ExpressionListRef>().values) {
				Exprs(row);
			}
			break;
		case TableReferenceType::EMPTY_FROM:
			break;
		case TableReferenceType::PIVOT: {
			// PIVOT/UNPIVOT: its input, its aggregates and what its columns are computed from; the
			// names it creates (value and name columns, groups) are looked up in nothing. Values
			// taken from the data (a subquery, or the enum DuckDB makes of one) are not modelled.
			auto &p = ref.Cast<PivotRef>();
			Table(p.source.get());
			Exprs(p.aggregates);
			for (auto &col : p.pivots) {
				Exprs(col.pivot_expressions);
				for (auto &entry : col.entries) {
					Expr(entry.expr);
				}
				if (col.subquery || !col.pivot_enum.empty()) {
					Literal(AclRefKind::Other, "pivot values from the data");
				}
			}
			break;
		}
		case TableReferenceType::SHOW_REF: {
			auto &show = ref.Cast<ShowRef>();
			Node(show.query.get());
			if (!show.qualified_name.Path().empty()) {
				Name(AclRefKind::Table, show.qualified_name);
			}
			break;
		}
		default:
			Literal(AclRefKind::Other, "table reference");
			break;
		}
	}

	// An unqualified call the binder resolves by name through the search path; unnest/unlist are
	// bound by name before any catalog lookup (ExpressionBinder::IsUnnestFunction) and stay.
	static bool Qualifiable(const FunctionExpression &f) {
		if (f.GetQualifiedName().Path().size() != 1) {
			return false;
		}
		auto &name = f.FunctionName().GetIdentifierName();
		return name != "unnest" && name != "unlist";
	}

	// DuckDB names an unaliased select item (and RETURNING item) by its text, and a qualified call
	// prints its qualification: such an item gets its current name as its alias before anything in
	// it is qualified (this runs before the node's expressions are visited).
	void KeepNames(QueryNode &node) {
		switch (node.type) {
		case QueryNodeType::SELECT_NODE:
			return KeepNames(node.Cast<SelectNode>().select_list);
		case QueryNodeType::INSERT_QUERY_NODE:
			return KeepNames(node.Cast<InsertQueryNode>().returning_list);
		case QueryNodeType::UPDATE_QUERY_NODE:
			return KeepNames(node.Cast<UpdateQueryNode>().returning_list);
		case QueryNodeType::DELETE_QUERY_NODE:
			return KeepNames(node.Cast<DeleteQueryNode>().returning_list);
		case QueryNodeType::MERGE_QUERY_NODE:
			return KeepNames(node.Cast<MergeQueryNode>().returning_list);
		default:
			return;
		}
	}
	void KeepNames(vector<unique_ptr<ParsedExpression>> &items) {
		for (auto &item : items) {
			if (item && item->GetAlias().empty() && NameChanges(*item)) {
				item->SetAlias(item->GetName());
			}
		}
	}
	// Would qualifying the calls in `item` change its printed text? Not for a star or COLUMNS,
	// which expand to columns named by their columns (an alias would break that); an unnest of a
	// struct ignores the alias, as DuckDB names its fields. Iterative.
	static bool NameChanges(ParsedExpression &item) {
		bool changes = false;
		vector<ParsedExpression *> todo {&item};
		while (!todo.empty()) {
			auto e = todo.back();
			todo.pop_back();
			switch (e->GetExpressionClass()) {
			case ExpressionClass::STAR:
				return false;
			case ExpressionClass::SUBQUERY:
				changes = true; // its text includes the subquery's calls
				break;
			case ExpressionClass::FUNCTION: {
				auto &f = e->Cast<FunctionExpression>();
				// an operator prints by its symbol alone (FunctionExpression::ToString)
				auto args = f.GetArguments().size();
				changes = changes || (Qualifiable(f) && !(f.IsOperator() && (args == 1 || args == 2)));
				break;
			}
			default:
				break;
			}
			ParsedExpressionIterator::EnumerateChildren(*e, [&](unique_ptr<ParsedExpression> &c) {
				if (c) {
					todo.push_back(c.get());
				}
			});
		}
		return changes;
	}

	void VisitExpr(ParsedExpression &expr) {
		switch (expr.GetExpressionClass()) {
		case ExpressionClass::FUNCTION: {
			auto &f = expr.Cast<FunctionExpression>();
			Name(f.IsOperator() ? AclRefKind::Operator : AclRefKind::Function, f.GetQualifiedName());
			if (Qualifiable(f)) {
				// What DuckDB's parser produced for syntax (`+`, `~~`, `[…]` → list_value, EXTRACT →
				// date_part, …) binds through the search path, where a macro in temp.main or the
				// default database would capture it: qualified to system.main, where every built-in
				// lives, once the check has passed on the name as parsed (specs/004, 011).
				qualify.push_back(&f);
			}
			break;
		}
		case ExpressionClass::WINDOW:
			Name(AclRefKind::Function, expr.Cast<WindowExpression>().GetQualifiedName());
			break;
		case ExpressionClass::SUBQUERY:
			Node(expr.Cast<SubqueryExpression>().SubqueryMutable()->node.get());
			break;
		case ExpressionClass::COLUMN_REF:
			Names(AclRefKind::Column, expr.Cast<ColumnRefExpression>().ColumnNames());
			break;
		case ExpressionClass::POSITIONAL_REFERENCE:
			Literal(AclRefKind::Column, "#");
			break;
		default:
			break;
		}
		ParsedExpressionIterator::EnumerateChildren(expr, [&](unique_ptr<ParsedExpression> &c) { Expr(c); });
	}
};

} // namespace

void ListParsedNames(SQLStatement &statement, ParsedRefs &out) {
	ParsedNames(out).Statement(statement);
}

} // namespace acl_shim
