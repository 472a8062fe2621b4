SELECT count(*) FROM (SELECT CASE WHEN CAST(q.id::VARCHAR AS INT) > 0 THEN q.k END AS kk FROM (SELECT a.id, 1 // (a.i - 2147483647) AS k FROM wide a) q WHERE CAST(q.id::VARCHAR AS INT) > 0) z WHERE z.kk = 2
;;
SELECT count(*) FROM (SELECT CASE WHEN CAST(q.id::VARCHAR AS INT) > 0 THEN q.k END AS kk FROM (SELECT a.id, CAST(a.v || a.id AS INT) AS k FROM wide a) q WHERE CAST(q.id::VARCHAR AS INT) > 0) z WHERE z.kk = 2
;;
SELECT count(*) FROM (SELECT CASE WHEN CAST(q.id::VARCHAR AS INT) > 0 THEN q.k END AS kk FROM (SELECT a.id, CAST(a.v || a.id AS INT) AS k FROM wide a) q WHERE CAST(q.id::VARCHAR AS INT) > 0) z, refs b WHERE z.kk = 2
