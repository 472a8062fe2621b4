//! A `Backend` in memory for the unit tests: it runs the few statement shapes `sql` writes
//! (parsed with sqlparser), keeps each transaction's changes on a copy, and can be told to fail
//! (the store gone, or the n-th statement refused), so the core's rules are tested without DuckDB.
use super::{Backend, Dialect, Row, Txn};
use crate::error::{AclError, Result, StoreError};
use parking_lot::Mutex;
use sqlparser::ast::{
    AssignmentTarget, BinaryOperator, Expr, FromTable, ObjectName, ObjectNamePart, SelectItem, SetExpr, Statement,
    TableFactor, TableObject, Value,
};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct Data {
    /// Table name (last part) → (columns, rows).
    pub tables: BTreeMap<String, (Vec<String>, Vec<Row>)>,
}

#[derive(Default)]
pub struct Fake {
    pub data: Mutex<Data>,
    /// The catalog is detached: every statement fails.
    pub gone: Mutex<bool>,
    /// Refuse the statement after this many more (then stop refusing).
    pub fail_in: Mutex<Option<usize>>,
    /// Every statement run, in order.
    pub log: Mutex<Vec<String>>,
}

impl Fake {
    pub fn rows(&self, table: &str) -> Vec<Row> {
        self.data.lock().tables.get(table).map(|(_, r)| r.clone()).unwrap_or_default()
    }

    /// A direct edit (as an operator's unprefixed SQL would make it).
    pub fn edit(&self, f: impl FnOnce(&mut Data)) {
        f(&mut self.data.lock())
    }
}

struct FakeTxn<'a> {
    fake: &'a Fake,
    data: Data,
}

fn failed(why: impl Into<String>) -> AclError {
    StoreError::Failed { location: "fake.acl".into(), why: why.into() }.into()
}

fn name(n: &ObjectName) -> String {
    match n.0.last() {
        Some(ObjectNamePart::Identifier(i)) => i.value.clone(),
        _ => String::new(),
    }
}

fn literal(e: &Expr) -> Result<Option<String>> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Null => Ok(None),
            Value::SingleQuotedString(s) => Ok(Some(s.clone())),
            Value::Boolean(b) => Ok(Some(b.to_string())),
            Value::Number(n, _) => Ok(Some(n.to_string())),
            other => Err(failed(format!("fake: literal {other}"))),
        },
        Expr::Cast { expr, .. } => literal(expr),
        other => Err(failed(format!("fake: expression {other}"))),
    }
}

/// A `WHERE` of `(c IS NOT DISTINCT FROM v AND …) OR …`, or `c = v`, on one row.
fn matches(e: &Expr, cols: &[String], row: &Row) -> Result<bool> {
    let cell = |c: &Expr| -> Result<Option<String>> {
        let Expr::Identifier(i) = c else { return Err(failed("fake: column")) };
        let at = cols.iter().position(|x| *x == i.value).ok_or_else(|| failed("fake: no such column"))?;
        Ok(row[at].clone())
    };
    match e {
        Expr::Nested(e) => matches(e, cols, row),
        Expr::BinaryOp { left, op: BinaryOperator::Or, right } => Ok(matches(left, cols, row)? || matches(right, cols, row)?),
        Expr::BinaryOp { left, op: BinaryOperator::And, right } => Ok(matches(left, cols, row)? && matches(right, cols, row)?),
        Expr::IsNotDistinctFrom(a, b) => Ok(cell(a)? == literal(b)?),
        Expr::BinaryOp { left, op: BinaryOperator::Eq, right } => Ok(cell(left)?.is_some() && cell(left)? == literal(right)?),
        other => Err(failed(format!("fake: condition {other}"))),
    }
}

impl FakeTxn<'_> {
    fn run(&mut self, sql: &str) -> Result<(Vec<Row>, u64)> {
        self.fake.log.lock().push(sql.to_string());
        if *self.fake.gone.lock() {
            return Err(failed("Catalog \"fake\" does not exist"));
        }
        {
            let mut fail = self.fake.fail_in.lock();
            match *fail {
                Some(0) => {
                    *fail = None;
                    return Err(failed("fake: refused"));
                }
                Some(n) => *fail = Some(n - 1),
                None => {}
            }
        }
        if sql.contains("duckdb_databases()") {
            return Ok((vec![vec![Some("1".into())]], 0));
        }
        if sql.contains("information_schema.tables") {
            let n = u8::from(self.data.tables.contains_key("meta"));
            return Ok((vec![vec![Some(n.to_string())]], 0));
        }
        let dialect = sqlparser::dialect::DuckDbDialect {};
        let stmt = sqlparser::parser::Parser::parse_sql(&dialect, sql).map_err(|e| failed(e.to_string()))?.remove(0);
        let tables = &mut self.data.tables;
        match stmt {
            Statement::CreateSchema { .. } => Ok((vec![], 0)),
            Statement::CreateTable(ct) => {
                let t = name(&ct.name);
                if tables.contains_key(&t) {
                    return Err(failed(format!("table {t} exists")));
                }
                tables.insert(t, (ct.columns.iter().map(|c| c.name.value.clone()).collect(), vec![]));
                Ok((vec![], 0))
            }
            Statement::AlterTable(at) => {
                let (cols, rows) = tables.get_mut(&name(&at.name)).ok_or_else(|| failed("no such table"))?;
                for op in &at.operations {
                    let sqlparser::ast::AlterTableOperation::AddColumn { column_def, .. } = op else { return Err(failed("fake: alter")) };
                    cols.push(column_def.name.value.clone());
                    rows.iter_mut().for_each(|r| r.push(None));
                }
                Ok((vec![], 0))
            }
            Statement::Insert(ins) => {
                let TableObject::TableName(n) = &ins.table else { return Err(failed("fake: insert target")) };
                let (cols, rows) = tables.get_mut(&name(n)).ok_or_else(|| failed("no such table"))?;
                let Some(SetExpr::Values(v)) = ins.source.as_ref().map(|s| &*s.body) else { return Err(failed("fake: values")) };
                let named: Vec<String> = ins.columns.iter().map(|c| c.to_string().trim_matches('"').to_string()).collect();
                let mut n = 0;
                for r in &v.rows {
                    let vals = r.iter().map(literal).collect::<Result<Vec<_>>>()?;
                    let row = if named.is_empty() {
                        vals
                    } else {
                        cols.iter().map(|c| named.iter().position(|x| x == c).and_then(|i| vals[i].clone())).collect()
                    };
                    rows.push(row);
                    n += 1;
                }
                Ok((vec![], n))
            }
            Statement::Delete(d) => {
                let FromTable::WithFromKeyword(from) = &d.from else { return Err(failed("fake: delete")) };
                let TableFactor::Table { name: n, .. } = &from[0].relation else { return Err(failed("fake: delete table")) };
                let (cols, rows) = tables.get_mut(&name(n)).ok_or_else(|| failed("no such table"))?;
                let cond = d.selection.as_ref().ok_or_else(|| failed("fake: delete without WHERE"))?;
                let before = rows.len();
                let mut keep = Vec::new();
                for r in rows.drain(..) {
                    if !matches(cond, cols, &r)? {
                        keep.push(r);
                    }
                }
                *rows = keep;
                Ok((vec![], (before - rows.len()) as u64))
            }
            Statement::Update(u) => {
                let TableFactor::Table { name: n, .. } = &u.table.relation else { return Err(failed("fake: update")) };
                let (cols, rows) = tables.get_mut(&name(n)).ok_or_else(|| failed("no such table"))?;
                let mut changed = 0;
                for r in rows.iter_mut() {
                    if u.selection.as_ref().map_or(Ok(true), |c| matches(c, cols, r))? {
                        for a in &u.assignments {
                            let AssignmentTarget::ColumnName(c) = &a.target else { return Err(failed("fake: set")) };
                            let at = cols.iter().position(|x| *x == name(c)).ok_or_else(|| failed("no such column"))?;
                            r[at] = literal(&a.value)?;
                        }
                        changed += 1;
                    }
                }
                Ok((vec![], changed))
            }
            Statement::Query(q) => {
                let SetExpr::Select(s) = &*q.body else { return Err(failed("fake: query")) };
                let TableFactor::Table { name: n, .. } = &s.from[0].relation else { return Err(failed("fake: from")) };
                let (cols, rows) = tables.get(&name(n)).ok_or_else(|| failed(format!("Table {} does not exist", name(n))))?;
                let picks = s
                    .projection
                    .iter()
                    .map(|p| match p {
                        SelectItem::UnnamedExpr(Expr::Cast { expr, .. }) => match &**expr {
                            Expr::Identifier(i) => cols.iter().position(|c| *c == i.value).ok_or_else(|| failed("no such column")),
                            _ => Err(failed("fake: projection")),
                        },
                        _ => Err(failed("fake: projection")),
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok((rows.iter().map(|r| picks.iter().map(|&i| r[i].clone()).collect()).collect(), 0))
            }
            other => Err(failed(format!("fake: statement {other}"))),
        }
    }
}

impl Txn for FakeTxn<'_> {
    fn query(&mut self, sql: &str) -> Result<Vec<Row>> {
        self.run(sql).map(|(rows, _)| rows)
    }

    fn execute(&mut self, sql: &str) -> Result<u64> {
        self.run(sql).map(|(_, n)| n)
    }
}

impl Backend for Fake {
    fn dialect(&self) -> Dialect {
        Dialect::DuckDb
    }

    fn kind(&self) -> &'static str {
        "duckdb"
    }

    fn describe(&self) -> String {
        "fake.acl".into()
    }

    fn transaction(&self, work: &mut dyn FnMut(&mut dyn Txn) -> Result<()>) -> Result<()> {
        let mut txn = FakeTxn { fake: self, data: self.data.lock().clone() };
        work(&mut txn)?;
        *self.data.lock() = txn.data;
        Ok(())
    }
}
