#include "acl_shim.hpp"

// DuckDB's own parse of a principal's statement, for the rewrite (specs/016). The rewrite reads the
// text with sqlparser; DuckDB names a result column by its own reading of the text (an unaliased
// item is named `GetName()`: `count(*)` is `count_star()`, `lower(name)` is `lower("name")`), and
// some of its syntax sqlparser does not read at all. So Rust may ask for the statement printed
// back by DuckDB (`ToString()`), with every select and RETURNING item of every query node that
// DuckDB names by its text aliased by that name (a star or COLUMNS expands to columns named by
// their columns, and an alias on COLUMNS is a pattern: those stay; a column reference is named
// by its column already).
// It decides nothing: the text Rust builds from it goes through every rule and, rewritten, through
// DuckDB's parser and the second check like any other.

namespace acl_shim {
namespace {

struct HostParsed {
	string printed;
	string error;
};

// Does this item expand to several columns (a star, COLUMNS, *COLUMNS) at its own level? A
// subquery inside it is a query of its own.
bool Expands(ParsedExpression &item) {
	vector<ParsedExpression *> todo {&item};
	while (!todo.empty()) {
		auto e = todo.back();
		todo.pop_back();
		auto cls = e->GetExpressionClass();
		if (cls == ExpressionClass::STAR) {
			return true;
		}
		if (cls == ExpressionClass::SUBQUERY) {
			continue;
		}
		ParsedExpressionIterator::EnumerateChildren(*e, [&](ParsedExpression &c) { todo.push_back(&c); });
	}
	return false;
}

// Walks every query node of a statement (CTEs, set operations, subqueries in FROM and in
// expressions, table function subqueries, DESCRIBE/SUMMARIZE queries) and calls `items` with each
// list of named items (a SELECT list, a RETURNING list). Iterative.
class Items {
public:
	explicit Items(std::function<void(vector<unique_ptr<ParsedExpression>> &)> items_p) : items(std::move(items_p)) {
	}

	void Statement(SQLStatement &statement) {
		Body(statement);
		while (!nodes.empty() || !refs.empty() || !exprs.empty()) {
			if (!nodes.empty()) {
				auto n = nodes.back();
				nodes.pop_back();
				Node(*n);
			} else if (!refs.empty()) {
				auto r = refs.back();
				refs.pop_back();
				Ref(*r);
			} else {
				auto e = exprs.back();
				exprs.pop_back();
				Expr(*e);
			}
		}
	}

private:
	std::function<void(vector<unique_ptr<ParsedExpression>> &)> items;
	vector<QueryNode *> nodes;
	vector<TableRef *> refs;
	vector<ParsedExpression *> exprs;

	void PushNode(QueryNode *n) {
		if (n) {
			nodes.push_back(n);
		}
	}
	void PushRef(TableRef *r) {
		if (r) {
			refs.push_back(r);
		}
	}
	void PushExpr(ParsedExpression *e) {
		if (e) {
			exprs.push_back(e);
		}
	}
	void PushExprs(vector<unique_ptr<ParsedExpression>> &list) {
		for (auto &e : list) {
			PushExpr(e.get());
		}
	}

	void Body(SQLStatement &statement) {
		switch (statement.type) {
		case StatementType::SELECT_STATEMENT:
			return PushNode(statement.Cast<SelectStatement>().node.get());
		case StatementType::INSERT_STATEMENT:
			return PushNode(statement.Cast<InsertStatement>().node.get());
		case StatementType::UPDATE_STATEMENT:
			return PushNode(statement.Cast<UpdateStatement>().node.get());
		case StatementType::DELETE_STATEMENT:
			return PushNode(statement.Cast<DeleteStatement>().node.get());
		case StatementType::MERGE_INTO_STATEMENT:
			return PushNode(statement.Cast<MergeIntoStatement>().node.get());
		case StatementType::EXPLAIN_STATEMENT: {
			auto &inner = statement.Cast<ExplainStatement>().stmt;
			if (inner) {
				Body(*inner);
			}
			return;
		}
		case StatementType::CREATE_STATEMENT: {
			auto &info = statement.Cast<CreateStatement>().info;
			if (info && info->type == CatalogType::TABLE_ENTRY) {
				auto &table = info->Cast<CreateTableInfo>();
				if (table.query) {
					PushNode(table.query->node.get());
				}
			} else if (info && info->type == CatalogType::VIEW_ENTRY) {
				auto &view = info->Cast<CreateViewInfo>();
				if (view.query) {
					PushNode(view.query->node.get());
				}
			}
			return;
		}
		default:
			return;
		}
	}

	void Node(QueryNode &node) {
		for (auto &kv : node.cte_map.map) {
			PushNode(kv.second->query_node.get());
		}
		ParsedExpressionIterator::EnumerateQueryNodeModifiers(node,
		                                                      [&](unique_ptr<ParsedExpression> &e) { PushExpr(e.get()); });
		switch (node.type) {
		case QueryNodeType::SELECT_NODE: {
			auto &n = node.Cast<SelectNode>();
			items(n.select_list);
			PushExprs(n.select_list);
			PushExprs(n.groups.group_expressions);
			PushExpr(n.where_clause.get());
			PushExpr(n.having.get());
			PushExpr(n.qualify.get());
			PushRef(n.from_table.get());
			return;
		}
		case QueryNodeType::SET_OPERATION_NODE:
			for (auto &child : node.Cast<SetOperationNode>().children) {
				PushNode(child.get());
			}
			return;
		case QueryNodeType::RECURSIVE_CTE_NODE: {
			auto &n = node.Cast<RecursiveCTENode>();
			PushNode(n.left.get());
			PushNode(n.right.get());
			return;
		}
		case QueryNodeType::INSERT_QUERY_NODE: {
			auto &n = node.Cast<InsertQueryNode>();
			items(n.returning_list);
			PushExprs(n.returning_list);
			if (n.select_statement) {
				PushNode(n.select_statement->node.get());
			}
			PushRef(n.table_ref.get());
			return;
		}
		case QueryNodeType::UPDATE_QUERY_NODE: {
			auto &n = node.Cast<UpdateQueryNode>();
			items(n.returning_list);
			PushExprs(n.returning_list);
			PushRef(n.from_table.get());
			if (n.set_info) {
				PushExprs(n.set_info->expressions);
				PushExpr(n.set_info->condition.get());
			}
			return;
		}
		case QueryNodeType::DELETE_QUERY_NODE: {
			auto &n = node.Cast<DeleteQueryNode>();
			items(n.returning_list);
			PushExprs(n.returning_list);
			for (auto &u : n.using_clauses) {
				PushRef(u.get());
			}
			PushExpr(n.condition.get());
			return;
		}
		case QueryNodeType::MERGE_QUERY_NODE: {
			auto &n = node.Cast<MergeQueryNode>();
			items(n.returning_list);
			PushExprs(n.returning_list);
			PushRef(n.source.get());
			PushExpr(n.join_condition.get());
			return;
		}
		default:
			return;
		}
	}

	void Ref(TableRef &ref) {
		switch (ref.type) {
		case TableReferenceType::JOIN: {
			auto &j = ref.Cast<JoinRef>();
			PushRef(j.left.get());
			PushRef(j.right.get());
			PushExpr(j.condition.get());
			return;
		}
		case TableReferenceType::SUBQUERY:
			return PushNode(ref.Cast<SubqueryRef>().subquery->node.get());
		case TableReferenceType::TABLE_FUNCTION: {
			auto &f = ref.Cast<TableFunctionRef>();
			PushExpr(f.function.get());
			if (f.subquery) {
				PushNode(f.subquery->node.get());
			}
			return;
		}
		case TableReferenceType::EXPRESSION_LIST:
			for (auto &row : ref.Cast<ExpressionListRef>().values) {
				PushExprs(row);
			}
			return;
		case TableReferenceType::PIVOT: {
			auto &p = ref.Cast<PivotRef>();
			PushRef(p.source.get());
			PushExprs(p.aggregates);
			for (auto &col : p.pivots) {
				PushNode(col.subquery.get());
			}
			return;
		}
		case TableReferenceType::SHOW_REF:
			return PushNode(ref.Cast<ShowRef>().query.get());
		default:
			return;
		}
	}

	void Expr(ParsedExpression &expr) {
		if (expr.GetExpressionClass() == ExpressionClass::SUBQUERY) {
			PushNode(expr.Cast<SubqueryExpression>().SubqueryMutable()->node.get());
		}
		ParsedExpressionIterator::EnumerateChildren(expr, [&](ParsedExpression &c) { PushExpr(&c); });
	}
};

// Every item that DuckDB names by its own text gets that name as its alias, so the printed text
// keeps the names whatever the rewrite does to the expression.
void NameItems(SQLStatement &statement) {
	Items([&](vector<unique_ptr<ParsedExpression>> &list) {
		for (auto &item : list) {
			// a column reference (and `#n`, which DuckDB resolves to one) is named by its column
			auto cls = item ? item->GetExpressionClass() : ExpressionClass::INVALID;
			if (item && item->GetAlias().empty() && !Expands(*item) && cls != ExpressionClass::COLUMN_REF &&
			    cls != ExpressionClass::POSITIONAL_REFERENCE) {
				item->SetAlias(item->GetName());
			}
		}
	}).Statement(statement);
}

} // namespace
} // namespace acl_shim

using namespace acl_shim;

extern "C" bool acl_shim_host_parse(const char *sql, size_t len, AclHostParse *out) {
	HostParsed *parsed = nullptr;
	try {
		parsed = new HostParsed();
		out->handle = parsed;
		Parser parser(ParserOptions::Builtin());
		try {
			parser.ParseQuery(string(sql, len));
		} catch (std::exception &ex) {
			// DuckDB's message about the principal's own text (it names nothing of the policy).
			ErrorData error(ex);
			parsed->error = error.RawMessage();
			out->error = AclStr {parsed->error.data(), parsed->error.size()};
			return false;
		}
		uint64_t count = 0;
		for (auto &statement : parser.statements) {
			// a dynamic PIVOT is a CREATE TYPE of its values and the query: more than one
			count += statement->type == StatementType::MULTI_STATEMENT ? 2 : 1;
			NameItems(*statement);
			if (!parsed->printed.empty()) {
				parsed->printed += ";\n";
			}
			parsed->printed += statement->ToString();
		}
		out->n_statements = count;
		out->printed = AclStr {parsed->printed.data(), parsed->printed.size()};
		return true;
	} catch (...) {
		if (parsed) {
			parsed->error = "the statement could not be read";
			out->error = AclStr {parsed->error.data(), parsed->error.size()};
		}
		return false;
	}
}

extern "C" void acl_shim_host_parse_free(void *handle) {
	try {
		delete static_cast<HostParsed *>(handle);
	} catch (...) {
	}
}

// The second check learns DuckDB's parse-time spellings from DuckDB's parser (specs/011, 016): for
// each select item of the first statement of `sql`, every call in it (name parts, in no particular
// order), subqueries included. It decides nothing: Rust compares what is reported with what the
// probe wrote.
namespace acl_shim {
namespace {
void ProbeCalls(ParsedExpression &root, const std::function<void(const QualifiedName &)> &report) {
	vector<ParsedExpression *> todo {&root};
	while (!todo.empty()) {
		auto e = todo.back();
		todo.pop_back();
		switch (e->GetExpressionClass()) {
		case ExpressionClass::FUNCTION:
			report(e->Cast<FunctionExpression>().GetQualifiedName());
			break;
		case ExpressionClass::WINDOW:
			report(e->Cast<WindowExpression>().GetQualifiedName());
			break;
		case ExpressionClass::SUBQUERY: {
			auto &node = *e->Cast<SubqueryExpression>().SubqueryMutable()->node;
			ParsedExpressionIterator::EnumerateQueryNodeChildren(
			    node, [&](unique_ptr<ParsedExpression> &c) { todo.push_back(c.get()); });
			break;
		}
		default:
			break;
		}
		ParsedExpressionIterator::EnumerateChildren(*e, [&](ParsedExpression &c) { todo.push_back(&c); });
	}
}
} // namespace
} // namespace acl_shim

extern "C" bool acl_shim_probe_calls(const char *sql, size_t len, AclProbeSink sink, void *user) {
	try {
		Parser parser(ParserOptions::Builtin());
		parser.ParseQuery(string(sql, len));
		if (parser.statements.empty() || parser.statements[0]->type != StatementType::SELECT_STATEMENT) {
			return false;
		}
		auto &node = *parser.statements[0]->Cast<SelectStatement>().node;
		if (node.type != QueryNodeType::SELECT_NODE) {
			return false;
		}
		auto &list = node.Cast<SelectNode>().select_list;
		vector<AclStr> parts;
		for (idx_t i = 0; i < list.size(); i++) {
			ProbeCalls(*list[i], [&](const QualifiedName &name) {
				parts.clear();
				for (auto &part : name.Path()) {
					auto &text = part.GetIdentifierName();
					parts.push_back(AclStr {text.data(), text.size()});
				}
				sink(user, static_cast<uint32_t>(i), parts.data(), parts.size());
			});
		}
		return true;
	} catch (...) {
		return false;
	}
}
