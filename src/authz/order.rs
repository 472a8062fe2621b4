//! A column list shows the object's columns in the object's order, not the order a grant lists
//! them in (issue 34, item 6): `GRANT TABLE c.t … COLUMNS (tenant, id)` over a table of `(id,
//! amount, tenant)` reads `id, tenant`, as the reference system and a view over the table would.
//! Each layer's list is put in the order of the nearest list below it (the object's own COLUMNS,
//! or a grant's under it): a column by the position of the column it passes through (a rename
//! by its source, a mask by the column of its own name), the rest (computed columns) after them
//! in their written order. A list straight over the table (no COLUMNS on the object) keeps the
//! grant's order: the table's order is DuckDB's, and the rewrite runs without a connection
//! (spec 002, "Column order").
use super::slices::plain;
use super::Layer;
use crate::policy::{Column, Slice};
use std::borrow::Cow;

pub(super) fn in_object_order(layers: Vec<Layer<'_>>) -> Vec<Layer<'_>> {
    let mut below: Option<Vec<String>> = None;
    layers
        .into_iter()
        .map(|layer| {
            let Layer::Slice(slice) = layer else {
                below = None; // a union's columns: the order of the layer under it is kept
                return layer;
            };
            let Some(cols) = &slice.columns else { return Layer::Slice(slice) };
            let ordered = below.as_deref().and_then(|b| reordered(b, cols));
            let slice = match ordered {
                Some(cols) => Cow::Owned(Slice { rls: slice.rls.clone(), columns: Some(cols) }),
                None => slice,
            };
            below = slice.columns.as_ref().map(|c| c.iter().map(|c| c.name.clone()).collect());
            Layer::Slice(slice)
        })
        .collect()
}

/// `cols` in the order of `below`; `None` when it already is.
fn reordered(below: &[String], cols: &[Column]) -> Option<Vec<Column>> {
    let at = |c: &Column| {
        let source = plain(c).unwrap_or_else(|| c.name.clone());
        below.iter().position(|b| *b == source).unwrap_or(usize::MAX)
    };
    let positions: Vec<usize> = cols.iter().map(at).collect();
    if positions.windows(2).all(|w| w[0] <= w[1]) {
        return None;
    }
    let mut indexed: Vec<(usize, &Column)> = positions.into_iter().zip(cols).collect();
    indexed.sort_by_key(|(p, _)| *p); // stable: computed columns keep their written order
    Some(indexed.into_iter().map(|(_, c)| c.clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str, expr: Option<&str>) -> Column {
        Column { name: name.into(), expr: expr.map(str::to_string) }
    }

    #[test]
    fn a_grant_list_follows_the_object_list() {
        let own = Slice { rls: None, columns: Some(vec![col("id", None), col("amount", None), col("tenant", None)]) };
        let grant = Slice {
            rls: Some("tenant = 'a'".into()),
            columns: Some(vec![col("t", Some("tenant")), col("calc", Some("amount * 2")), col("id", None), col("amount", Some("0"))]),
        };
        let out = in_object_order(vec![Layer::Slice(Cow::Borrowed(&own)), Layer::Slice(Cow::Borrowed(&grant))]);
        let Layer::Slice(s) = &out[1] else { panic!() };
        let names: Vec<&str> = s.columns.as_ref().unwrap().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["id", "amount", "t", "calc"]);
        assert_eq!(s.rls, grant.rls);
        // already in order: the grant's own slice, borrowed
        let ok = Slice { rls: None, columns: Some(vec![col("id", None), col("tenant", None)]) };
        let out = in_object_order(vec![Layer::Slice(Cow::Borrowed(&own)), Layer::Slice(Cow::Borrowed(&ok))]);
        assert!(matches!(&out[1], Layer::Slice(Cow::Borrowed(_))));
    }
}
