# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex' to INT32 when casting from source column rtenant")
SELECT count(*) FROM refs a JOIN (VALUES ('2'), ('3')) t(s) ON a.rtenant = t.s WHERE CAST(t.s AS INT) = 2
;;
SELECT count(*) FROM refs a JOIN refs b ON a.rtenant = b.rtenant WHERE CAST(b.rtenant AS INT) = 2 AND b.rid = 12
;;
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE CAST(a.v AS INT) = 2 AND b.rtenant > 'globex'
;;
# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex' to INT32 when casting from source column rtenant")
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE a.v::INT = 2
;;
# LEAK (fails on f63f608): the principal gets ('error', 'Conversion Error: invalid date field format: "globex", expected format is (YYYY-MM-DD) when casting from source column rtenant')
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE a.v::DATE = DATE '2024-01-01'
;;
# skip: differs from the materialised slice only by raising on a VISIBLE value (('error', 'Invalid Input Error: 2')); plan-dependent, not recorded
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE error(a.v) IS NULL
;;
# LEAK (fails on f63f608): the principal gets ('error', 'Invalid Input Error: Division by zero in expression (1000 // (rid - 11)). Use TRY(...) to return NULL for this expression, or SET error_on_division_by_zero=false to return NULL for all divi
SELECT count(*) FROM wide a JOIN refs b ON a.i = b.rid WHERE 1000 // (a.i - 11) = 1
;;
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE regexp_matches(a.v, '(')
;;
# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex' to INT32 when casting from source column rtenant")
SELECT count(*) FROM (SELECT a.v FROM wide a) x JOIN refs b ON x.v = b.rtenant WHERE CAST(x.v AS INT) = 2
;;
# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex' to INT32 when casting from source column rtenant")
WITH x AS (SELECT a.v FROM wide a) SELECT count(*) FROM x JOIN refs b ON x.v = b.rtenant WHERE CAST(x.v AS INT) = 2
;;
# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex' to INT32 when casting from source column rtenant")
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant GROUP BY a.v HAVING CAST(a.v AS INT) = 2
;;
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE b.rid > 0 QUALIFY CAST(a.v AS INT) = 2
;;
SELECT count(*) FROM refs b WHERE b.rtenant IN (SELECT a.v FROM wide a WHERE CAST(a.v AS INT) = 2)
;;
SELECT count(*) FROM refs b WHERE EXISTS (SELECT 1 FROM wide a WHERE a.v = b.rtenant AND CAST(a.v AS INT) = 2)
