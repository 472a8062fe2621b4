//! Our sqlparser `Dialect` (spec 016): DuckDB's dialect with the forms its hooks can reach.
//!
//! Two readings. `Original` reads the principal's text as written: it adds what sqlparser reads
//! the same way DuckDB does (`* RENAME`, `* ILIKE`, `IGNORE NULLS` inside a call) and
//! refuses to guess at the rest, so that text goes to DuckDB's printed form instead. `Printed`
//! reads DuckDB's own print of its parse (`ToString()`, the shim): there every operator stands in
//! parentheses, so an operator sqlparser has no rule for (`**`, `^@`, `&&`, `@`, `~~~`, `!~~~`) can be
//! read at any precedence without changing the tree, and the printer writes it back with the same
//! parentheses. `#n`, a star filtered by a pattern (`(* ~~ 'a%')`) and `LIMIT (n) %` are read only
//! there too.
//!
//! The dialect reports DuckDB's type id, so every `dialect_of!(… DuckDbDialect)` branch of the
//! parser still applies.
use sqlparser::ast::{
    BinaryOperator, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, Ident, ObjectName,
    UnaryOperator,
};
use sqlparser::dialect::{Dialect, DuckDbDialect};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan};
use std::any::TypeId;

/// Which text the dialect reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The principal's text as written.
    Original,
    /// DuckDB's print of its own parse, or our print of a tree read from it (a view's body).
    Printed,
}

#[derive(Debug)]
pub struct AclDialect {
    pub reading: Reading,
}

/// The operators sqlparser has no rule for, as DuckDB prints them: (first token, second token,
/// the operator). The second token is `None` for a one-token operator.
fn custom_operator(parser: &Parser) -> Option<(&'static str, usize)> {
    let [a, b] = [parser.peek_nth_token_ref(0), parser.peek_nth_token_ref(1)];
    let adjacent = adjacent(a, b);
    Some(match (&a.token, &b.token) {
        (Token::Mul, Token::Mul) if adjacent => ("**", 2),
        (Token::DoubleTilde, Token::Tilde) if adjacent => ("~~~", 2),
        (Token::ExclamationMarkDoubleTilde, Token::Tilde) if adjacent => ("!~~~", 2),
        (Token::CaretAt, _) => ("^@", 1),
        (Token::Overlap, _) => ("&&", 1),
        _ => return None,
    })
}

/// Whether `next`, after a word that is no keyword, ends that word as an operand: sqlparser then
/// reads the word as `Expr::Identifier` whatever it tried first (a typed string needs a string
/// next, a function `(`, a compound name `.`, a lambda `->` or a type and `->`). The tokens are
/// the ones a column is most often followed by; anything else takes sqlparser's own way.
fn ends_operand(next: &Token, parser: &Parser) -> bool {
    ends_operand_at(parser, 1, next)
}

/// `ends_operand` for the token at `at` (`next`), the operand's first token being the parser's.
fn ends_operand_at(parser: &Parser, at: usize, next: &Token) -> bool {
    match next {
        Token::Comma
        | Token::RParen
        | Token::EOF
        | Token::SemiColon
        | Token::Eq
        | Token::DoubleEq
        | Token::Neq
        | Token::Lt
        | Token::Gt
        | Token::LtEq
        | Token::GtEq
        | Token::Plus
        | Token::Minus
        | Token::Mul
        | Token::Div
        | Token::StringConcat
        | Token::DoubleColon => true,
        // `x INT -> …` is a typed lambda parameter
        Token::Word(w) => {
            matches!(
                w.keyword,
                Keyword::AS
                    | Keyword::FROM
                    | Keyword::WHERE
                    | Keyword::AND
                    | Keyword::OR
                    | Keyword::IS
                    | Keyword::IN
                    | Keyword::NOT
                    | Keyword::BETWEEN
                    | Keyword::LIKE
                    | Keyword::ILIKE
                    | Keyword::GROUP
                    | Keyword::ORDER
                    | Keyword::LIMIT
                    | Keyword::HAVING
                    | Keyword::THEN
                    | Keyword::ELSE
                    | Keyword::END
                    | Keyword::WHEN
                    | Keyword::ASC
                    | Keyword::DESC
            ) && parser.peek_nth_token_ref(at + 1).token != Token::Arrow
        }
        _ => false,
    }
}

/// Whether a word with this keyword, followed by `next`, a token that ends an operand, is a column
/// name to sqlparser whatever it tries first (`id`, `name`, `date`, `year` are keywords to it).
/// Not so for a keyword sqlparser reads as a value, a call without parentheses or the start of an
/// expression (the list `every_keyword_reads_as_sqlparser_reads_it` finds, over every keyword in
/// every place: it fails if a keyword missing here reads otherwise), nor for a keyword before `<`,
/// where a type such as `ARRAY<INTEGER>` may start a typed string.
fn reads_as_name(keyword: Keyword, next: &Token) -> bool {
    if keyword == Keyword::NoKeyword {
        return true;
    }
    *next != Token::Lt
        && !matches!(
            keyword,
            Keyword::NULL
                | Keyword::TRUE
                | Keyword::FALSE
                | Keyword::CASE
                | Keyword::NOT
                | Keyword::EXISTS
                | Keyword::INTERVAL
                | Keyword::TRIM
                | Keyword::CURRENT_DATE
                | Keyword::CURRENT_TIME
                | Keyword::CURRENT_TIMESTAMP
                | Keyword::LOCALTIME
                | Keyword::LOCALTIMESTAMP
        )
}

/// Whether a word with this keyword before `(` is a plain call's name to sqlparser, not a form of
/// its own (`CAST(…)`, `EXTRACT(…)`, `CEIL(…)`) or a value (`NULL`). `every_call_reads_as_sqlparser_reads_it`
/// fails for a keyword missing here that reads otherwise (it finds `NULL`, `TRUE`, `FALSE`, `NOT`,
/// `EXISTS`, `INTERVAL`, `TRIM`, `SUBSTR`, `SUBSTRING`, `CEIL`, `FLOOR`); the other forms of their
/// own are left to sqlparser too.
fn reads_as_call(keyword: Keyword) -> bool {
    !matches!(
        keyword,
        Keyword::CAST
            | Keyword::TRY_CAST
            | Keyword::SAFE_CAST
            | Keyword::CONVERT
            | Keyword::TRY_CONVERT
            | Keyword::EXISTS
            | Keyword::EXTRACT
            | Keyword::CEIL
            | Keyword::FLOOR
            | Keyword::POSITION
            | Keyword::SUBSTR
            | Keyword::SUBSTRING
            | Keyword::OVERLAY
            | Keyword::TRIM
            | Keyword::INTERVAL
            | Keyword::ARRAY
            | Keyword::STRUCT
            | Keyword::MAP
            | Keyword::NOT
            | Keyword::CASE
            | Keyword::NULL
            | Keyword::TRUE
            | Keyword::FALSE
    )
}

/// The most arguments a call takes the fast way (peeking further costs more than it saves).
const PLAIN_CALL_ARGS: usize = 8;

/// `name(a, 1, 'x')`, `name()`: a call whose arguments are each a plain column name, a number or
/// a string, followed by a token that ends it as an operand (so no `OVER`, `FILTER`, `WITHIN
/// GROUP`, `IGNORE NULLS`, `.field` or `[i]` after it, no `DISTINCT`, `ORDER BY` or `:=` inside).
/// How many arguments, or `None` for anything else.
fn plain_call(parser: &Parser) -> Option<usize> {
    let mut at = 2;
    let mut args = 0;
    if parser.peek_nth_token_ref(at).token != Token::RParen {
        loop {
            let sep = &parser.peek_nth_token_ref(at + 1).token;
            let plain = match &parser.peek_nth_token_ref(at).token {
                // `ALL`, `DISTINCT` and `RETURNING` start parts of the argument list of their own
                Token::Word(w) => {
                    reads_as_name(w.keyword, sep) && !matches!(w.keyword, Keyword::ALL | Keyword::DISTINCT | Keyword::RETURNING)
                }
                Token::Number(..) | Token::SingleQuotedString(_) => true,
                _ => false,
            };
            if !plain || args == PLAIN_CALL_ARGS {
                return None;
            }
            args += 1;
            at += 1;
            match sep {
                Token::Comma => at += 1,
                Token::RParen => break,
                _ => return None,
            }
        }
    }
    ends_operand_at(parser, at + 1, &parser.peek_nth_token_ref(at + 1).token).then_some(args)
}

fn adjacent(a: &TokenWithSpan, b: &TokenWithSpan) -> bool {
    a.span.end == b.span.start
}

/// What `LIMIT (n) %` may be followed by: the end of the LIMIT clause.
fn ends_clause(t: &Token) -> bool {
    match t {
        Token::EOF | Token::RParen | Token::SemiColon => true,
        Token::Word(w) => matches!(w.keyword, Keyword::OFFSET | Keyword::UNION | Keyword::EXCEPT | Keyword::INTERSECT),
        _ => false,
    }
}

fn is_pattern_operator(t: &Token) -> bool {
    matches!(
        t,
        Token::DoubleTilde
            | Token::ExclamationMarkDoubleTilde
            | Token::DoubleTildeAsterisk
            | Token::ExclamationMarkDoubleTildeAsterisk
    )
}

/// An identifier that prints exactly `text`, unquoted: how a token sqlparser has no node for
/// (`#2`, a pattern's `*`) stands in the tree. The rules read it as a column name.
pub fn raw(text: &str) -> Expr {
    Expr::Identifier(Ident::new(text))
}

impl AclDialect {
    fn refuse<T>(&self, parser: &Parser, what: &str) -> Option<Result<T, ParserError>> {
        let at = parser.peek_token_ref().span.start;
        Some(Err(ParserError::ParserError(format!("{what} is read from DuckDB's print at {at}"))))
    }
}

impl Dialect for AclDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<DuckDbDialect>()
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        // Decided on borrowed tokens (this runs before every operand): only `#2` keeps a copy.
        enum Form {
            Column(Ident),
            Call(Ident, usize),
            Literal,
            Positional(String),
            StarFilter,
            Abs,
        }
        let form = {
            let [a, b] = [parser.peek_nth_token_ref(0), parser.peek_nth_token_ref(1)];
            match (&a.token, &b.token) {
                // A plain column name: what sqlparser makes of it too, without first trying it as
                // a type name before a string (`DATE '…'`), whose failure formats an error message
                // only to drop it (a tenth of a never-seen statement's rewrite). Only for a word
                // that is no keyword or a keyword with no meaning of its own there (`reads_as_name`)
                // and a next token that no form starting with a name continues with (`(`, `.`, a
                // string, `->`, a type before `->`): see `ends_operand`.
                (Token::Word(w), next) if reads_as_name(w.keyword, next) && ends_operand(next, parser) => {
                    Form::Column(w.to_ident(a.span))
                }
                // A call of plain arguments (`upper(customer)`): as sqlparser reads it, without first
                // trying the name as a type, the call as a reserved word's form, and each argument
                // as a named one (three error messages formatted and dropped).
                (Token::Word(w), Token::LParen) if reads_as_call(w.keyword) => match plain_call(parser) {
                    Some(n) => Form::Call(w.to_ident(a.span), n),
                    None => return None,
                },
                // A number or a string: never a type name, so sqlparser's typed-string attempt
                // always fails (formatting its message) before it reads the literal as this does.
                (Token::Number(..) | Token::SingleQuotedString(_), _) => Form::Literal,
                // `#2`: the second column of the FROM clause
                (Token::Sharp, Token::Number(n, false)) if adjacent(a, b) => Form::Positional(n.clone()),
                // `(* ~~ 'a%')`: the columns whose names match (DuckDB's `* LIKE 'a%'`)
                (Token::Mul, next) if is_pattern_operator(next) || custom_operator_after_star(parser) => Form::StarFilter,
                // `@(-5)`: absolute value
                (Token::AtSign, Token::LParen) => Form::Abs,
                _ => return None,
            }
        };
        match form {
            Form::Column(ident) => {
                parser.advance_token();
                Some(Ok(Expr::Identifier(ident)))
            }
            Form::Call(name, n) => {
                parser.advance_token(); // the name
                parser.advance_token(); // `(`
                let mut args = Vec::with_capacity(n);
                for _ in 0..n {
                    let t = parser.peek_token_ref();
                    let arg = match &t.token {
                        Token::Word(w) => {
                            let ident = w.to_ident(t.span);
                            parser.advance_token();
                            Expr::Identifier(ident)
                        }
                        _ => match parser.parse_value() {
                            Ok(v) => Expr::Value(v),
                            Err(e) => return Some(Err(e)),
                        },
                    };
                    args.push(FunctionArg::Unnamed(FunctionArgExpr::Expr(arg)));
                    parser.advance_token(); // `,` or `)`
                }
                if n == 0 {
                    parser.advance_token(); // `)`
                }
                Some(Ok(Expr::Function(Function {
                    name: ObjectName::from(vec![name]),
                    uses_odbc_syntax: false,
                    parameters: FunctionArguments::None,
                    args: FunctionArguments::List(FunctionArgumentList { duplicate_treatment: None, args, clauses: vec![] }),
                    filter: None,
                    null_treatment: None,
                    over: None,
                    within_group: vec![],
                })))
            }
            Form::Literal => Some(parser.parse_value().map(Expr::Value)),
            Form::Positional(n) => {
                if self.reading == Reading::Original {
                    return self.refuse(parser, "a positional reference");
                }
                let text = format!("#{n}");
                parser.advance_token();
                parser.advance_token();
                Some(Ok(raw(&text)))
            }
            Form::StarFilter => {
                if self.reading == Reading::Original {
                    return self.refuse(parser, "a star filter");
                }
                parser.advance_token();
                Some(Ok(raw("*")))
            }
            Form::Abs => {
                if self.reading == Reading::Original {
                    return self.refuse(parser, "the @ operator");
                }
                parser.advance_token();
                let prec = self.prec_value(sqlparser::dialect::Precedence::PlusMinus);
                Some(parser.parse_subexpr(prec).map(|e| Expr::UnaryOp { op: UnaryOperator::PGAbs, expr: Box::new(e) }))
            }
        }
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        if let Some((op, _)) = custom_operator(parser) {
            let prec = match op {
                "**" => self.prec_value(sqlparser::dialect::Precedence::MulDivModOp) + 1,
                "~~~" | "!~~~" => self.prec_value(sqlparser::dialect::Precedence::Like),
                _ => self.prec_value(sqlparser::dialect::Precedence::PgOther),
            };
            return Some(Ok(prec));
        }
        if parser.peek_token_ref().token == Token::Mod && ends_clause(&parser.peek_nth_token_ref(1).token) {
            return Some(Ok(self.prec_value(sqlparser::dialect::Precedence::MulDivModOp)));
        }
        None
    }

    fn parse_infix(&self, parser: &mut Parser, expr: &Expr, precedence: u8) -> Option<Result<Expr, ParserError>> {
        if let Some((op, n)) = custom_operator(parser) {
            if self.reading == Reading::Original {
                return self.refuse(parser, "this operator");
            }
            for _ in 0..n {
                parser.advance_token();
            }
            return Some(parser.parse_subexpr(precedence).map(|right| Expr::BinaryOp {
                left: Box::new(expr.clone()),
                op: BinaryOperator::Custom(op.to_string()),
                right: Box::new(right),
            }));
        }
        if parser.peek_token_ref().token == Token::Mod && ends_clause(&parser.peek_nth_token_ref(1).token) {
            if self.reading == Reading::Original {
                return self.refuse(parser, "a percentage limit");
            }
            // `LIMIT (n) %`: printed as `(n) % ` (an operator with nothing on its right)
            parser.advance_token();
            return Some(Ok(Expr::BinaryOp {
                left: Box::new(expr.clone()),
                op: BinaryOperator::Custom("%".to_string()),
                right: Box::new(raw("")),
            }));
        }
        None
    }

    // DuckDB's own choices (sqlparser's `DuckDbDialect`), then ours. `E'…'` is tokenized as one
    // string, as DuckDB does, so that it is never read as a typed literal `E '…'`; the parser does
    // not take it in DuckDB's dialect, so such a text is read from DuckDB's print.
    fn supports_string_escape_constant(&self) -> bool {
        true
    }
    fn supports_select_wildcard_rename(&self) -> bool {
        true
    }
    fn supports_select_wildcard_ilike(&self) -> bool {
        true
    }
    fn supports_window_function_null_treatment_arg(&self) -> bool {
        true
    }
    fn is_identifier_start(&self, ch: char) -> bool {
        DuckDbDialect.is_identifier_start(ch)
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        DuckDbDialect.is_identifier_part(ch)
    }
    fn supports_cte_materialization(&self) -> bool {
        true
    }
    fn supports_string_literal_column_alias(&self, explicit: bool) -> bool {
        explicit
    }
    fn supports_string_literal_table_alias(&self, explicit: bool) -> bool {
        explicit
    }
    fn supports_trailing_commas(&self) -> bool {
        true
    }
    fn identifier_quote_style(&self, _identifier: &str) -> Option<char> {
        Some('"')
    }
    fn supports_filter_during_aggregation(&self) -> bool {
        true
    }
    fn supports_group_by_expr(&self) -> bool {
        true
    }
    fn supports_bitwise_shift_operators(&self) -> bool {
        true
    }
    fn supports_tilde_like_match_operator(&self) -> bool {
        true
    }
    fn supports_aggregate_order_by_with_empty_args(&self) -> bool {
        true
    }
    fn supports_comparison_in_between_low_bound(&self) -> bool {
        true
    }
    fn supports_named_fn_args_with_eq_operator(&self) -> bool {
        true
    }
    fn supports_named_fn_args_with_assignment_operator(&self) -> bool {
        true
    }
    fn supports_dictionary_syntax(&self) -> bool {
        true
    }
    fn support_map_literal_syntax(&self) -> bool {
        true
    }
    fn supports_lambda_functions(&self) -> bool {
        true
    }
    fn allow_extract_single_quotes(&self) -> bool {
        true
    }
    fn supports_explain_with_utility_options(&self) -> bool {
        true
    }
    fn supports_load_extension(&self) -> bool {
        true
    }
    fn supports_array_typedef_with_brackets(&self) -> bool {
        true
    }
    fn supports_from_first_select(&self) -> bool {
        true
    }
    fn supports_order_by_all(&self) -> bool {
        true
    }
    fn supports_select_wildcard_exclude(&self) -> bool {
        true
    }
    fn supports_notnull_operator(&self) -> bool {
        true
    }
    fn supports_install(&self) -> bool {
        true
    }
    fn supports_detach(&self) -> bool {
        true
    }
    fn supports_select_wildcard_replace(&self) -> bool {
        true
    }
    fn supports_comma_separated_trim(&self) -> bool {
        true
    }
    fn supports_numeric_literal_underscores(&self) -> bool {
        true
    }
    fn supports_nested_comments(&self) -> bool {
        true
    }
    fn supports_add_column_if_not_exists(&self) -> bool {
        true
    }
    // `x ISNULL` is DuckDB's postfix IS NULL, never `x` named "isnull" (sqlparser has no such
    // operator: the text then goes to DuckDB's print)
    fn is_select_item_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        let word = &parser.get_current_token().token;
        if !explicit && matches!(word, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("isnull")) {
            return false;
        }
        explicit || self.is_column_alias(kw, parser)
    }
    // `a POSITIONAL JOIN b` is DuckDB's positional join, never `a` aliased "positional" and
    // joined without a condition (read from DuckDB's print: `cuts`)
    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        let word = &parser.get_current_token().token;
        let positional = matches!(word, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("positional"));
        if !explicit && positional && matches!(&parser.peek_token_ref().token, Token::Word(w) if w.keyword == Keyword::JOIN) {
            return false;
        }
        explicit || self.is_table_alias(kw, parser)
    }
}

/// `(* ~~~ 'a*')` and `(* !~~~ 'a*')`: the glob forms of a star filter (three tokens).
fn custom_operator_after_star(parser: &Parser) -> bool {
    let [b, c] = [parser.peek_nth_token_ref(1), parser.peek_nth_token_ref(2)];
    matches!((&b.token, &c.token), (Token::DoubleTilde | Token::ExclamationMarkDoubleTilde, Token::Tilde) if adjacent(b, c))
}

#[cfg(test)]
mod tests;
