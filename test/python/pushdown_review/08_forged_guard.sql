# a principal-written guard shape over an unsafe expression launders it (Guard() sets safe = true)
SELECT count(*) FROM (SELECT CASE WHEN q.id > 0 THEN q.k END AS kk FROM (SELECT a.id, CAST(a.v AS INT) AS k FROM wide a) q WHERE q.id > 0) z, refs b WHERE z.kk = 2
;;
SELECT count(*) FROM (SELECT CASE WHEN q.id > 0 THEN q.k END AS kk FROM (SELECT a.id, 1 // (a.i - 2147483647) AS k FROM wide a) q WHERE q.id > 0) z, refs b WHERE z.kk = 2
;;
SELECT count(*) FROM (SELECT CASE WHEN q.k IS NOT NULL THEN q.k END AS kk FROM (SELECT CAST(a.v AS INT) AS k FROM wide a) q WHERE q.k IS NOT NULL) z WHERE z.kk = 2
;;
SELECT count(*) FROM (SELECT CASE WHEN true THEN q.k END AS kk FROM (SELECT CAST(a.v AS INT) AS k FROM wide a) q WHERE true) z WHERE z.kk = 2
