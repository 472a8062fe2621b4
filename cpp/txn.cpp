// Transactions belong to their principal (spec 001, "Transactions"): the statement tag, the
// transaction state a principal's statement meets, and the rules. AclClientState (shim.cpp)
// keeps the owner per connection and applies them.
#include "acl_shim.hpp"

namespace acl_shim {

namespace {
const char *const PRINCIPAL_TAG = "/* acl:principal=";
const char *const OTHERS_TRANSACTION = "acl: another principal's transaction is open on this connection";
const char *const ALREADY_OPEN = "acl: a transaction is already open on this connection";
const char *const NOT_ITS_TRANSACTION = "acl: COMMIT and ROLLBACK end only a transaction this principal began";
const char *const ABORTED = "acl: the transaction is aborted and nothing of it will be committed; ROLLBACK to end it";
} // namespace

TxnKind KindOf(const SQLStatement &statement) {
	if (statement.type != StatementType::TRANSACTION_STATEMENT) {
		return TXN_OTHER;
	}
	auto &info = statement.Cast<TransactionStatement>().info;
	switch (info ? info->type : TransactionType::INVALID) {
	case TransactionType::BEGIN_TRANSACTION:
		return TXN_BEGIN;
	case TransactionType::ROLLBACK:
		return TXN_ROLLBACK;
	default:
		return TXN_COMMIT; // COMMIT, and anything unknown: the most restricted kind
	}
}

string PrincipalTag(const string &principal, TxnKind kind) {
	return string(PRINCIPAL_TAG) + principal + ";" + static_cast<char>(kind) + " */ ";
}

bool TaggedPrincipal(const string &query, string &principal, TxnKind &kind) {
	static const string ACL_COMMENT = "/* acl:";
	auto n = strlen(PRINCIPAL_TAG);
	idx_t at = 0;
	while (query.compare(at, ACL_COMMENT.size(), ACL_COMMENT) == 0) {
		auto end = query.find(" */ ", at);
		if (end == string::npos) {
			return false;
		}
		if (query.compare(at, n, PRINCIPAL_TAG) == 0) {
			auto semi = query.find(';', at + n);
			if (semi == string::npos || semi + 2 != end) {
				return false;
			}
			principal = query.substr(at + n, semi - at - n);
			auto k = query[semi + 1];
			kind = k == TXN_BEGIN || k == TXN_ROLLBACK || k == TXN_OTHER ? TxnKind(k) : TXN_COMMIT;
			return !principal.empty();
		}
		at = end + 4;
	}
	return false;
}

bool ExplicitTransaction(ClientContext &context) {
	return context.transaction.HasActiveTransaction() && !context.transaction.IsAutoCommit();
}

// DuckDB aborted the open transaction (an error in it): its COMMIT rolls back without an error.
static bool Aborted(ClientContext &context) {
	return context.transaction.HasActiveTransaction() &&
	       ValidChecker::IsInvalidated(context.transaction.ActiveTransaction());
}

TxnState::TxnState(ClientContext &context) : open(ExplicitTransaction(context)), aborted(open && Aborted(context)) {
}

string TxnOwner::Refusal(TxnState now, const string &who, TxnKind kind) const {
	if (who.empty() || !now.open) {
		return string(); // the gateway is not restricted; autocommit runs on its own
	}
	if (kind == TXN_BEGIN) {
		return ALREADY_OPEN;
	}
	if (known && !principal.empty()) {
		if (principal != who) {
			return OTHERS_TRANSACTION;
		}
		// DuckDB would turn this COMMIT into a silent ROLLBACK: the principal must learn that its
		// work is lost (whoever's refused statement aborted the transaction).
		return kind == TXN_COMMIT && now.aborted ? ABORTED : string();
	}
	// The gateway's transaction: its principals' statements join it, but only it ends it.
	return kind == TXN_COMMIT || kind == TXN_ROLLBACK ? NOT_ITS_TRANSACTION : string();
}

void TxnOwner::Check(TxnState now, const string &who, TxnKind kind) const {
	auto refusal = Refusal(now, who, kind);
	if (!refusal.empty()) {
		throw PermissionException(refusal);
	}
}

} // namespace acl_shim

using namespace acl_shim;

// For acl_exec (src/ffi/functions.rs): is an explicit transaction open in the client context it
// runs in? A `duckdb_client_context` is the C API's wrapper of the ClientContext.
extern "C" bool acl_shim_explicit_transaction(duckdb_client_context context) {
	try {
		return !context || ExplicitTransaction(reinterpret_cast<CClientContextWrapper *>(context)->context);
	} catch (...) {
		return true; // fail closed: refused
	}
}

// For the table functions' text parameters (src/ffi/table_fn.rs): a VARCHAR value's bytes with
// their length. The C API's `duckdb_get_varchar` hands back a C string, which ends at the first
// NUL, so `'GRANT …' || chr(0) || ' RLS (…)'` would reach management cut short and wider than
// written. False (nothing written) for NULL, another type, or a failure.
extern "C" bool acl_shim_value_text(duckdb_value value, const char **data, size_t *len) {
	try {
		if (!value) {
			return false;
		}
		auto &v = *reinterpret_cast<Value *>(value);
		if (v.IsNull() || v.type().id() != LogicalTypeId::VARCHAR) {
			return false;
		}
		auto &s = StringValue::Get(v);
		*data = s.data();
		*len = s.size();
		return true;
	} catch (...) {
		return false;
	}
}
