// Kept parses (specs/012): DuckDB's parse of a rewritten batch, kept once the second check
// passed on it and copied for a repeated batch, and the kept parse of a learned statement shape,
// copied for a later instance with its numbers put into the constants.
#include "acl_shim.hpp"

#include <cstring>

namespace acl_shim {

namespace {

// DuckDB's parse of a rewritten batch, kept with the batch cache's entry (specs/012) once the
// second check passed on it: a repeated batch copies these statements instead of parsing again.
// The parse depends on the text and on the caller's parser options, so it is used only under
// the same options; the entry holds only under the policy version it was decided with.
struct ParsedBatch {
	IdentifierCaseMode identifier_case_mode;
	bool integer_division;
	RegexMatchOperatorSemantics regex_semantics;
	idx_t max_expression_depth;
	shared_ptr<CompiledGrammar> grammar; // held, so its address cannot be reused
	vector<unique_ptr<SQLStatement>> statements;

	explicit ParsedBatch(const ParserOptions &o)
	    : identifier_case_mode(o.identifier_case_mode), integer_division(o.integer_division),
	      regex_semantics(o.regex_match_operator_semantics), max_expression_depth(o.max_expression_depth),
	      grammar(o.compiled_grammar) {
	}
	bool SameOptions(const ParserOptions &o) const {
		return identifier_case_mode == o.identifier_case_mode && integer_division == o.integer_division &&
		       regex_semantics == o.regex_match_operator_semantics &&
		       max_expression_depth == o.max_expression_depth && grammar.get() == o.compiled_grammar.get();
	}
};

// Frees a `ParsedBatch` (the function Rust calls when it drops one).
extern "C" void FreeParsedBatch(void *parsed) {
	try {
		delete static_cast<ParsedBatch *>(parsed);
	} catch (...) {
	}
}

} // namespace

// Statement types whose Copy() is what DuckDB itself relies on for prepared statements.
bool Copyable(const SQLStatement &statement) {
	switch (statement.type) {
	case StatementType::SELECT_STATEMENT:
	case StatementType::INSERT_STATEMENT:
	case StatementType::UPDATE_STATEMENT:
	case StatementType::DELETE_STATEMENT:
	case StatementType::MERGE_INTO_STATEMENT:
	case StatementType::EXPLAIN_STATEMENT:
		return true;
	default:
		return false;
	}
}

bool CopyParsed(const AclChecks *check, const ParserOptions &options, vector<unique_ptr<SQLStatement>> &out) {
	auto kept = static_cast<const ParsedBatch *>(acl_rs_parsed_get(check));
	if (!kept || !kept->SameOptions(options)) {
		return false;
	}
	for (auto &statement : kept->statements) {
		out.push_back(statement->Copy());
	}
	return true;
}

namespace {

// A new instance of a learned statement shape (specs/012, "Kept parse per shape"): Rust proved
// that its rewrite differs from the kept instance's only in the plain integer literals at the
// shape's holes, so DuckDB's parse of it is the kept parse with those constants' texts replaced
// (DuckDB keeps a number as its text; the binder types it). Each hole must be found exactly
// once, at its offset in the kept text, as that literal; a number that became no constant there
// (a type's width, a sample size) or a copy the parser made, or a construct the walk does not
// know, means no copy: the text is parsed. One SELECT only.
struct ShapeWalk {
	const AclSubst *substs;
	size_t n;
	vector<vector<unique_ptr<ParsedExpression> *>> found;
	bool unknown = false;

	ShapeWalk(const AclSubst *substs_p, size_t n_p) : substs(substs_p), n(n_p), found(n_p) {
	}
	void Expr(unique_ptr<ParsedExpression> &e) {
		if (!e) {
			return;
		}
		if (e->GetExpressionClass() == ExpressionClass::CONSTANT) {
			auto at = e->GetQueryLocation();
			auto &literal = e->Cast<ConstantExpression>().GetLiteral();
			for (size_t i = 0; at.IsValid() && i < n; i++) {
				if (at.offset == substs[i].old_at && literal.kind == LiteralKind::INTEGER &&
				    literal.text.size() == substs[i].old_text.len &&
				    memcmp(literal.text.data(), substs[i].old_text.ptr, substs[i].old_text.len) == 0) {
					found[i].push_back(&e);
				}
			}
			return;
		}
		if (e->GetExpressionClass() == ExpressionClass::SUBQUERY) {
			auto &sub = e->Cast<SubqueryExpression>().SubqueryMutable();
			if (!sub || !sub->node) {
				unknown = true;
				return;
			}
			Node(*sub->node);
		}
		ParsedExpressionIterator::EnumerateChildren(*e, [&](unique_ptr<ParsedExpression> &c) { Expr(c); });
	}
	void Node(QueryNode &node) {
		switch (node.type) {
		case QueryNodeType::SELECT_NODE:
		case QueryNodeType::SET_OPERATION_NODE:
		case QueryNodeType::RECURSIVE_CTE_NODE:
			break;
		default:
			unknown = true;
			return;
		}
		// (modifiers and CTEs included)
		ParsedExpressionIterator::EnumerateQueryNodeChildren(
		    node, [&](unique_ptr<ParsedExpression> &e) { Expr(e); },
		    [&](TableRef &ref) {
			    switch (ref.type) {
			    case TableReferenceType::BASE_TABLE:
			    case TableReferenceType::JOIN:
			    case TableReferenceType::SUBQUERY:
			    case TableReferenceType::TABLE_FUNCTION:
			    case TableReferenceType::EXPRESSION_LIST:
			    case TableReferenceType::EMPTY_FROM:
				    break;
			    default:
				    unknown = true;
			    }
		    });
	}
};

bool CopyShapeWith(const ParsedBatch *kept, const AclSubst *substs, size_t n, AclStr kept_text, OutGuard &guard,
                   const ParserOptions &options, vector<unique_ptr<SQLStatement>> &out) {
	if (n == 0 || guard.out.n_statements != 1 || !kept->SameOptions(options) ||
	    kept->statements.size() != 1 || kept->statements[0]->type != StatementType::SELECT_STATEMENT) {
		return false;
	}
	auto &old_stmt = *kept->statements[0];
	// The kept statement's text is its tags (the same principal, version and expiry: the shape
	// holds only under them) followed by the kept rewrite.
	auto &old_query = old_stmt.query;
	if (kept_text.len > old_query.size() ||
	    old_query.compare(old_query.size() - kept_text.len, kept_text.len, kept_text.ptr, kept_text.len) != 0) {
		return false;
	}
	auto copy = old_stmt.Copy();
	auto &node = copy->Cast<SelectStatement>().node;
	if (!node) {
		return false;
	}
	ShapeWalk walk(substs, n);
	try {
		walk.Node(*node);
	} catch (std::exception &) {
		return false; // a node the iterator does not know
	}
	if (walk.unknown) {
		return false;
	}
	for (auto &hits : walk.found) {
		if (hits.size() != 1) {
			return false;
		}
	}
	for (size_t i = 0; i < n; i++) {
		auto &slot = *walk.found[i][0];
		auto repl = ConstantExpression::Number(string(substs[i].new_text.ptr, substs[i].new_text.len));
		repl->SetAlias(slot->GetAlias());
		repl->SetQueryLocation(QueryLocation(substs[i].new_at, substs[i].new_text.len));
		slot = std::move(repl);
	}
	copy->query = old_query.substr(0, old_query.size() - kept_text.len) + guard.Text();
	copy->stmt_location = QueryLocation(0, copy->query.size());
	out.push_back(std::move(copy));
	return true;
}

} // namespace

// Copies the kept parse of the batch's shape, if it has one, and counts how that went.
bool CopyShape(AclState *state, OutGuard &guard, const ParserOptions &options, vector<unique_ptr<SQLStatement>> &out) {
	const AclSubst *substs = nullptr;
	size_t n = 0;
	AclStr kept_text {nullptr, 0};
	auto kept = static_cast<const ParsedBatch *>(acl_rs_shape_parsed(guard.out.check, &substs, &n, &kept_text));
	if (!kept) {
		return false;
	}
	bool copied = CopyShapeWith(kept, substs, n, kept_text, guard, options, out);
	acl_rs_shape_copied(state, copied);
	return copied;
}

// Keeps copies of a checked parse where Rust wants them: with the batch's cache entry (a batch
// met before), and as its shape's kept parse (one SELECT that taught a shape).
void KeepChecked(const AclChecks *check, const ParserOptions &options, const vector<unique_ptr<SQLStatement>> &statements) {
	auto copy = [&]() {
		auto kept = make_uniq<ParsedBatch>(options);
		for (auto &statement : statements) {
			kept->statements.push_back(statement->Copy());
		}
		return kept.release();
	};
	if (acl_rs_parsed_wanted(check)) {
		acl_rs_parsed_put(check, copy(), FreeParsedBatch);
	}
	if (statements.size() == 1 && statements[0]->type == StatementType::SELECT_STATEMENT && acl_rs_shape_wanted(check)) {
		acl_rs_shape_put(check, copy(), FreeParsedBatch);
	}
}

} // namespace acl_shim
