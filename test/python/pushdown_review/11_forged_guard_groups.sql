SELECT count(*) FROM (SELECT CASE WHEN CAST(q.id::VARCHAR AS INT) > 0 THEN q.k END AS kk FROM (SELECT a.id, 1 // (a.i - 2147483647) AS k FROM wide a GROUP BY ALL) q WHERE CAST(q.id::VARCHAR AS INT) > 0) z, refs b WHERE z.kk = 2
;;
SELECT count(*) FROM (SELECT CASE WHEN CAST(q.id::VARCHAR AS INT) > 0 THEN q.k END AS kk FROM (SELECT a.id, 1 // (a.i - 2147483647) AS k FROM wide a GROUP BY ALL) q WHERE CAST(q.id::VARCHAR AS INT) > 0) z, refs b WHERE z.kk = b.rid
;;
SELECT count(*) FROM (SELECT CASE WHEN q.id > 0 THEN q.k END AS kk FROM (SELECT a.id, 1 // (a.i - 2147483647) AS k FROM wide a GROUP BY ALL) q WHERE q.id > 0) z, refs b WHERE z.kk = 2
;;
SELECT count(*) FROM (SELECT DISTINCT a.id, 1 // (a.i - 2147483647) AS k FROM wide a) q, refs b WHERE q.k = 2
;;
SELECT count(*) FROM (SELECT a.id, 1 // (a.i - 2147483647) AS k FROM wide a GROUP BY ALL) q JOIN refs b ON q.k = b.rid
