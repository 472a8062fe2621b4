SELECT count(*) FROM masked a, refs b WHERE a.mi > 0
;;
SELECT count(*) FROM masked a, refs b WHERE a.i = 2
;;
SELECT a.mi FROM masked a, refs b WHERE a.i = 2
;;
SELECT a.mi FROM masked a, refs b WHERE a.v LIKE '%'
;;
SELECT count(*) FROM masked a, refs b WHERE a.mv = 'X'
;;
SELECT count(*) FROM masked a, refs b WHERE a.mt = 'glo'
;;
# skip: differs from the materialised slice only by raising on a VISIBLE value (('error', "Conversion Error: Could not convert string 'acme' to INT32 when casting from source column rtenant")); plan-dependent, not recorded
SELECT count(*) FROM masked a JOIN refs b ON a.mt = b.rtenant WHERE CAST(a.mt AS INT) = 2
;;
SELECT count(*) FROM masked a JOIN wide b ON a.i = b.i WHERE b.i + 1 > 0
;;
SELECT count(*) FROM masked a JOIN wide b ON a.i = b.i WHERE a.mi > 0
;;
SELECT count(*) FROM plain a, refs b WHERE a.v = a.p AND CAST(a.p AS INT) = 2
;;
SELECT count(*) FROM wide a JOIN refs b USING (id) WHERE 1 = 1
;;
SELECT count(*) FROM refs b LEFT JOIN wide a ON a.v = b.rtenant AND CAST(a.v AS INT) = 2
;;
SELECT count(*) FROM refs b LEFT JOIN wide a ON a.v = b.rtenant WHERE CAST(a.v AS INT) = 2
;;
# skip: differs from the materialised slice only by raising on a VISIBLE value (('error', "Conversion Error: Could not convert string 'acme' to INT32 when casting from source column rtenant")); plan-dependent, not recorded
SELECT count(*) FROM refs b RIGHT JOIN wide a ON a.v = b.rtenant WHERE CAST(a.v AS INT) = 2
;;
SELECT count(*) FROM refs b FULL JOIN wide a ON a.v = b.rtenant WHERE CAST(a.v AS INT) = 2
;;
SELECT count(*) FROM wide a JOIN refs b ON a.v IS NOT DISTINCT FROM b.rtenant WHERE CAST(a.v AS INT) = 2
;;
# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex' to INT32 when casting from source column rtenant")
SELECT count(*) FROM wide a, refs b WHERE a.v = b.rtenant AND a.v LIKE '%' AND TRY_CAST(a.v AS INT) IS NULL AND CAST(a.v AS INT) = 2
;;
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE a.i::VARCHAR::INT + 2147483000 > 0
;;
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE a.i * 1000000000 > 0
;;
# LEAK (fails on f63f608): the principal gets ('error', 'Invalid Input Error: Division by zero in expression (100 % (rid - 11)). Use TRY(...) to return NULL for this expression, or SET error_on_division_by_zero=false to return NULL for all divisi
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE 100 % (a.i - 11) = 0
;;
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE [1, 2][a.i - 10] = 1
;;
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE CASE WHEN a.i = 11 THEN error('x') END IS NULL
;;
# skip: differs from the materialised slice only by raising on a VISIBLE value (('error', 'Conversion Error: Date out of range: 2000-1--8')); plan-dependent, not recorded
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE make_date(2000, 1, a.i - 10) > DATE '2000-01-01'
;;
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE repeat('x', a.i - 12) = ''
;;
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE a.i IN (SELECT 1 // (a.i - 11))
;;
# LEAK (fails on f63f608): the principal gets ('error', 'Invalid Input Error: Division by zero in expression (1 // (rid - 11)). Use TRY(...) to return NULL for this expression, or SET error_on_division_by_zero=false to return NULL for all divisio
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE a.i > 0 GROUP BY a.i HAVING 1 // (a.i - 11) = 0
;;
SELECT count(*) FROM (SELECT a.i FROM wide a JOIN refs b ON a.i = b.rid WHERE a.i > 0) q WHERE 1 // (q.i - 11) = 0
;;
# LEAK (fails on f63f608): the principal gets ('error', 'Invalid Input Error: Division by zero in expression (1 // (rid - 11)). Use TRY(...) to return NULL for this expression, or SET error_on_division_by_zero=false to return NULL for all divisio
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid JOIN refs c ON c.rid = b.rid WHERE 1 // (a.i - 11) = 0
;;
SELECT count(*) FROM wide a, refs b WHERE a.i = b.rid AND b.rid = a.i AND 1 // (b.rid - 11) = 0
;;
SELECT count(*) FROM wide a JOIN refs b ON a.id = b.rid - 10 WHERE 1 // (b.rid - 11) = 0
;;
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE TRY(1 // (a.i - 11)) = 0
;;
# LEAK (fails on f63f608): the principal gets ('error', 'Invalid Input Error: Division by zero in expression (1 // (rid - 11)). Use TRY(...) to return NULL for this expression, or SET error_on_division_by_zero=false to return NULL for all divisio
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE coalesce(1 // (a.i - 11), 0) = 0
;;
SELECT count(*) FROM wide a SEMI JOIN refs b ON a.i = b.rid WHERE 1 // (a.i - 11) = 0
;;
SELECT count(*) FROM wide a ANTI JOIN refs b ON a.i = b.rid WHERE 1 // (a.i - 11) = 0
;;
SELECT count(*) FROM wide a WHERE a.i IN (SELECT rid FROM refs) AND 1 // (a.i - 11) = 0
;;
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE a.i > 0 QUALIFY 1 // (a.i - 11) = 0
;;
SELECT count(*) FROM wide a ASOF JOIN refs b ON a.i >= b.rid WHERE 1 // (b.rid - 11) = 0
;;
SELECT count(*) FROM wide a POSITIONAL JOIN refs b WHERE 1 // (b.rid - 11) = 0
;;
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid UNION ALL SELECT count(*) FROM refs c WHERE c.rid > 0
;;
SELECT count(*) FROM (SELECT rid FROM refs UNION SELECT i FROM wide) u JOIN wide a ON a.i = u.rid WHERE 1 // (u.rid - 11) = 0
;;
WITH RECURSIVE r(x) AS (SELECT rid FROM refs UNION ALL SELECT x + 1 FROM r WHERE x < 3) SELECT count(*) FROM r JOIN wide a ON a.i = r.x WHERE 1 // (r.x - 11) = 0
