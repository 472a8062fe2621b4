SELECT count(*) FROM (SELECT CASE WHEN CAST(q.id::VARCHAR AS INT) > 0 THEN q.k END AS kk FROM (SELECT a.id, CAST(a.v AS INT) AS k FROM wide a) q WHERE CAST(q.id::VARCHAR AS INT) > 0) z, refs b WHERE z.kk = 2
;;
SELECT count(*) FROM (SELECT CASE WHEN CAST(q.id::VARCHAR AS INT) > 0 THEN q.k END AS kk FROM (SELECT a.id, CAST(a.v AS INT) AS k FROM wide a) q WHERE CAST(q.id::VARCHAR AS INT) > 0) z WHERE z.kk = 2
;;
SELECT count(*) FROM (SELECT CASE WHEN make_date(2000, 1, 1) < DATE '2001-01-01' + q.id THEN q.k END AS kk FROM (SELECT a.id, CAST(a.v AS INT) AS k FROM wide a) q WHERE make_date(2000, 1, 1) < DATE '2001-01-01' + q.id) z WHERE z.kk = 2
;;
SELECT count(*) FROM (SELECT CASE WHEN CAST(q.t AS INT) IS NULL THEN q.k END AS kk FROM (SELECT TRY_CAST(a.tenant AS INT)::VARCHAR AS t, 1 // (a.i - 2147483647) AS k FROM wide a) q WHERE CAST(q.t AS INT) IS NULL) z WHERE z.kk = 2
