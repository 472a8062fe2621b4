SELECT CAST(a.v AS INT) FROM wide a, refs b WHERE a.v = '2'
;;
SELECT 1 // (a.i - 2147483647) FROM wide a, refs b WHERE a.i < 100
;;
SELECT sum(1 // (a.i - 2147483647)) FROM wide a, refs b WHERE a.i < 100
;;
SELECT a.i + 1 FROM wide a, refs b WHERE a.i < 100 ORDER BY a.i * 2 LIMIT 1
;;
SELECT a.id FROM wide a, refs b WHERE a.i < 100 ORDER BY CAST(a.v AS INT) LIMIT 1
;;
SELECT mi FROM masked INTERSECT SELECT mi FROM masked
;;
SELECT mi FROM masked EXCEPT SELECT 3
;;
SELECT i FROM masked WHERE i < 100 INTERSECT SELECT mi FROM masked
;;
SELECT v, mi FROM masked WHERE v LIKE '%' EXCEPT SELECT rtenant, rid FROM refs
;;
SELECT DISTINCT mi FROM masked WHERE i = 2
;;
SELECT DISTINCT i + 1 FROM wide WHERE i < 100
;;
SELECT count(*) FROM (SELECT i + 1 AS k FROM wide) q, refs b WHERE q.k > 0
;;
SELECT count(*) FROM (SELECT DISTINCT i FROM wide) q, refs b WHERE q.i + 1 > 0
;;
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE b.rtenant IN ('acme') AND CAST(a.v AS INT) IN (1, 2)
;;
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE CAST(a.v AS INT) BETWEEN 1 AND 2
;;
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE a.v::INT IS NOT NULL
;;
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE a.v::INT IS NULL
;;
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE NOT (a.v::INT > 0)
;;
SELECT count(*) FROM wide a JOIN refs b ON lower(a.v) = b.rtenant WHERE CAST(lower(a.v) AS INT) = 2
;;
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE a.i > 0 AND CAST(a.v AS INT) = a.i
;;
SELECT count(*) FROM wide a JOIN wide c ON a.bi = c.bi WHERE c.bi + 1 > 0 AND a.id <> c.id
;;
SELECT count(*) FROM plain a JOIN plain c ON a.bi = c.bi WHERE c.bi + 1 > 0
;;
SELECT count(*) FROM plain a JOIN plain c ON a.v = c.v WHERE CAST(c.v AS INT) = 2
;;
# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex' to INT32 when casting from source column rtenant")
SELECT count(*) FROM plain a JOIN refs c ON a.v = c.rtenant WHERE CAST(a.v AS INT) = 2
;;
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE a.i * 2 = 24
;;
# LEAK (fails on f63f608): the principal gets ('error', 'Invalid Input Error: Division by zero in expression (1 // (rid - 11)). Use TRY(...) to return NULL for this expression, or SET error_on_division_by_zero=false to return NULL for all divisio
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE 1 // (a.i - 11) = 1 AND b.rid > 0
;;
# LEAK (fails on f63f608): the principal gets ('error', 'Invalid Input Error: Division by zero in expression (1 // (rid - 11)). Use TRY(...) to return NULL for this expression, or SET error_on_division_by_zero=false to return NULL for all divisio
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid AND 1 // (a.i - 11) = 1
