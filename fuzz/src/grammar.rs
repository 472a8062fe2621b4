//! A small SQL grammar driven by `arbitrary` (the `rewrite_grammar` target).
use arbitrary::{Result as AResult, Unstructured};


const TABLES: &[&str] = &[
    "orders", "items", "people", "sales.orders", "sales.main.orders", "sales.eu.orders", "eu.orders",
    "SALES.ORDERS", "\"Orders\"", "\"sales\".\"items\"", "sales.people", "hr.people", "hr.salaries",
    "vault.keys", "pdb_main.main.ph_orders", "\"pdb_main\".\"main\".\"ph_orders\"", "ph_orders",
    "main.ph_orders", "memory.main.orders", "pdb_hr.main.ph_staff", "pdb_vault.main.ph_keys",
    "\"__acl_cte1_c0\"", "__acl_cte2_c1", "'data.csv'", "system.main.duckdb_tables", "a.b.c.d",
    "information_schema.tables", "temp.main.t", "ph_eu.ph_orders", "\"sales.orders\"",
];
const COLUMNS: &[&str] = &["id", "amount", "tenant", "ssn", "email", "x", "t.id", "o.amount", "orders.id", "*"];
const FUNCTIONS: &[&str] = &[
    "lower", "upper", "abs", "count", "sum", "max", "coalesce", "length", "error", "acl_exec", "acl_claim",
    "query", "query_table", "read_csv", "getvariable", "current_setting", "json_execute_serialized_sql",
    "pdb_main.main.f", "main.lower", "\"lower\"", "nextval", "ACL_EXEC", "sqlite_query", "__internal_x",
];
const TABLE_FUNCTIONS: &[&str] = &["read_csv('x.csv')", "query('SELECT 1')", "range(3)", "glob('*')", "acl_roles()"];
const OTHER: &[&str] = &[
    "SET search_path = 'pdb_main.main'", "USE pdb_main", "PRAGMA show_tables", "COPY orders TO 'x.csv'",
    "ATTACH 'x.db' AS y", "DESCRIBE orders", "EXPLAIN SELECT * FROM orders", "BEGIN", "COMMIT", "ROLLBACK",
    "CREATE TABLE t AS SELECT * FROM orders", "DROP TABLE orders", "SHOW TABLES", "CALL acl_exec('x')",
    "PREPARE p AS SELECT 1", "EXECUTE p", "SUMMARIZE orders", "LOAD httpfs", "TABLE orders",
];

pub struct Gen<'u, 'd> {
    u: &'u mut Unstructured<'d>,
    ctes: Vec<String>,
    next_cte: usize,
}

impl<'u, 'd> Gen<'u, 'd> {
    pub fn new(u: &'u mut Unstructured<'d>) -> Self {
        Gen { u, ctes: Vec::new(), next_cte: 0 }
    }

    fn pick<'a>(&mut self, xs: &'a [&'a str]) -> AResult<&'a str> {
        Ok(*self.u.choose(xs)?)
    }

    fn coin(&mut self) -> AResult<bool> {
        self.u.arbitrary()
    }

    fn table_name(&mut self) -> AResult<String> {
        if !self.ctes.is_empty() && self.u.ratio(1, 3)? {
            let c = self.u.choose(&self.ctes)?.clone();
            return Ok(c);
        }
        Ok(self.pick(TABLES)?.to_string())
    }

    fn alias(&mut self) -> AResult<String> {
        Ok(match self.u.int_in_range(0..=5)? {
            0 => String::new(),
            1 => " t".into(),
            2 => " AS o".into(),
            3 => " AS orders".into(),
            4 => " AS ph_orders".into(),
            _ => " AS t(a, b)".into(),
        })
    }

    fn from_item(&mut self, depth: u32) -> AResult<String> {
        let leaf = depth >= 3;
        Ok(match if leaf { 0 } else { self.u.int_in_range(0..=7)? } {
            0 | 1 => format!("{}{}", self.table_name()?, self.alias()?),
            2 => format!("({}) AS d", self.query(depth + 1)?),
            3 => format!("LATERAL ({}) AS l", self.query(depth + 1)?),
            4 => {
                let kind = self.pick(&["JOIN", "LEFT JOIN", "CROSS JOIN", "NATURAL JOIN", "POSITIONAL JOIN", "ASOF JOIN"])?;
                let on = if kind.starts_with("JOIN") || kind.starts_with("LEFT") { format!(" ON {}", self.expr(depth + 1)?) } else { String::new() };
                format!("{} {kind} {}{on}", self.from_item(depth + 1)?, self.from_item(depth + 1)?)
            }
            5 => format!("{}{}", self.pick(TABLE_FUNCTIONS)?, self.alias()?),
            6 => format!("UNNEST([1, 2]) AS u(x)"),
            _ => format!("({})", self.from_item(depth + 1)?),
        })
    }

    fn expr(&mut self, depth: u32) -> AResult<String> {
        let leaf = depth >= 4;
        Ok(match if leaf { self.u.int_in_range(0..=1)? } else { self.u.int_in_range(0..=9)? } {
            0 => self.pick(&COLUMNS[..COLUMNS.len() - 1])?.to_string(),
            1 => self.pick(&["1", "'acme'", "NULL", "true", "?", "$1", "0.5", "'pdb_main'"])?.to_string(),
            2 => {
                let op = self.pick(&["=", "<>", "+", "/", "AND", "OR", "||", "<", "IS NOT DISTINCT FROM"])?;
                format!("({} {op} {})", self.expr(depth + 1)?, self.expr(depth + 1)?)
            }
            3 => {
                let f = self.pick(FUNCTIONS)?;
                format!("{f}({})", self.expr(depth + 1)?)
            }
            4 => format!("(SELECT {} FROM {})", self.expr(depth + 1)?, self.from_item(depth + 1)?),
            5 => format!("{} IN ({})", self.expr(depth + 1)?, self.query(depth + 1)?),
            6 => format!("EXISTS ({})", self.query(depth + 1)?),
            7 => format!("CASE WHEN {} THEN {} ELSE {} END", self.expr(depth + 1)?, self.expr(depth + 1)?, self.expr(depth + 1)?),
            8 => format!("CAST({} AS {})", self.expr(depth + 1)?, self.pick(&["INTEGER", "VARCHAR", "DOUBLE"])?),
            _ => format!("list_transform([1], x -> {})", self.expr(depth + 1)?),
        })
    }

    fn select(&mut self, depth: u32) -> AResult<String> {
        let mut s = String::from("SELECT ");
        if self.u.ratio(1, 8)? {
            s.push_str("DISTINCT ");
        }
        let n = self.u.int_in_range(1..=3)?;
        for i in 0..n {
            if i > 0 {
                s.push_str(", ");
            }
            if self.u.ratio(1, 4)? {
                s.push('*');
            } else {
                s.push_str(&self.expr(depth + 1)?);
            }
        }
        if self.u.ratio(7, 8)? {
            s.push_str(" FROM ");
            s.push_str(&self.from_item(depth + 1)?);
            if self.u.ratio(1, 3)? {
                s.push_str(", ");
                s.push_str(&self.from_item(depth + 1)?);
            }
        }
        if self.coin()? {
            s.push_str(" WHERE ");
            s.push_str(&self.expr(depth + 1)?);
        }
        if self.u.ratio(1, 6)? {
            s.push_str(" GROUP BY ALL");
        }
        Ok(s)
    }

    fn with(&mut self, depth: u32) -> AResult<(String, usize)> {
        if depth >= 3 || !self.u.ratio(1, 3)? {
            return Ok((String::new(), 0));
        }
        let recursive = self.u.ratio(1, 4)?;
        let n = self.u.int_in_range(1..=3)?;
        let mut s = String::from(if recursive { "WITH RECURSIVE " } else { "WITH " });
        for i in 0..n {
            if i > 0 {
                s.push_str(", ");
            }
            // CTE names that collide with catalog and physical names on purpose
            let name = match self.u.int_in_range(0..=4)? {
                0 => "orders".to_string(),
                1 => "ph_orders".to_string(),
                2 => "pdb_main".to_string(),
                _ => {
                    self.next_cte += 1;
                    format!("c{}", self.next_cte)
                }
            };
            if recursive {
                self.ctes.push(name.clone());
            }
            let body = if self.u.ratio(1, 5)? { self.dml(depth + 1, true)? } else { self.query(depth + 1)? };
            s.push_str(&format!("{name} AS ({body})"));
            if !recursive {
                self.ctes.push(name);
            }
        }
        s.push(' ');
        Ok((s, n))
    }

    pub fn query(&mut self, depth: u32) -> AResult<String> {
        let before = self.ctes.len();
        let (with, _) = self.with(depth)?;
        let mut s = with;
        s.push_str(&self.select(depth)?);
        if depth < 3 && self.u.ratio(1, 5)? {
            let op = self.pick(&["UNION ALL", "UNION", "EXCEPT", "INTERSECT", "UNION ALL BY NAME"])?;
            s.push_str(&format!(" {op} {}", self.select(depth + 1)?));
        }
        if self.u.ratio(1, 5)? {
            s.push_str(" ORDER BY 1 LIMIT 10");
        }
        self.ctes.truncate(before);
        Ok(s)
    }

    fn returning(&mut self) -> AResult<&'static str> {
        Ok(if self.u.ratio(1, 3)? { " RETURNING *" } else { "" })
    }

    fn dml(&mut self, depth: u32, in_cte: bool) -> AResult<String> {
        let target = self.table_name()?;
        let s = match self.u.int_in_range(0..=4)? {
            0 => {
                let src = if self.coin()? { "VALUES (1, 2)".to_string() } else { self.query(depth + 1)? };
                let on = self.pick(&["", " ON CONFLICT DO NOTHING", " ON CONFLICT (id) DO UPDATE SET amount = excluded.amount"])?;
                let or = self.pick(&["", "OR REPLACE ", "OR IGNORE "])?;
                format!("INSERT {or}INTO {target} {src}{on}{}", self.returning()?)
            }
            1 => {
                let from = if self.coin()? { format!(" FROM {}", self.from_item(depth + 1)?) } else { String::new() };
                format!("UPDATE {target}{} SET amount = {}{from} WHERE {}{}", self.alias()?, self.expr(depth + 1)?, self.expr(depth + 1)?, self.returning()?)
            }
            2 => {
                let using = if self.coin()? { format!(" USING {}", self.from_item(depth + 1)?) } else { String::new() };
                format!("DELETE FROM {target}{using} WHERE {}{}", self.expr(depth + 1)?, self.returning()?)
            }
            3 => format!(
                "MERGE INTO {target} t USING {} s ON {} WHEN MATCHED THEN {} WHEN NOT MATCHED THEN INSERT VALUES (1, 2)",
                self.from_item(depth + 1)?,
                self.expr(depth + 1)?,
                self.pick(&["DELETE", "UPDATE SET amount = 1"])?,
            ),
            _ if in_cte => format!("DELETE FROM {target} RETURNING *"),
            _ => self.pick(OTHER)?.to_string(),
        };
        Ok(s)
    }

    /// One statement: mostly queries, then DML, then statements the gate refuses.
    pub fn statement(&mut self) -> AResult<String> {
        match self.u.int_in_range(0..=9)? {
            0..=5 => self.query(0),
            6..=8 => {
                let (with, _) = self.with(1)?;
                Ok(format!("{with}{}", self.dml(1, false)?))
            }
            _ => Ok(self.pick(OTHER)?.to_string()),
        }
    }
}
