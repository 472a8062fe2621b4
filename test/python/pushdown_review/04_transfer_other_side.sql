# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex' to INT32 when casting from source column rtenant")
SELECT count(*) FROM refs a JOIN (VALUES ('12'), ('x')) t(s) ON a.rtenant = t.s WHERE CAST(t.s AS INT) = 2
;;
SELECT count(*) FROM refs a, (SELECT '2' AS s) t WHERE a.rtenant = t.s AND CAST(t.s AS INT) = 2
;;
SELECT count(*) FROM refs a, refs b WHERE a.rtenant = b.rtenant AND CAST(b.rtenant AS INT) = 2
;;
SELECT count(*) FROM wide a, range(3) t(x) WHERE a.bi = t.x AND 10 // (t.x - 2) = 1
;;
SELECT count(*) FROM wide a, range(3) t(x) WHERE a.bi = t.x AND t.x + 9223372036854775800 > 0
;;
SELECT count(*) FROM wide a JOIN (VALUES ('2')) t(s) ON a.v = t.s WHERE CAST(t.s AS INT) = 2
;;
SELECT count(*) FROM wide a JOIN (VALUES ('2')) t(s) ON a.v = t.s WHERE CAST(t.s || a.tenant AS INT) = 2
;;
# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex' to INT32 when casting from source column rtenant")
SELECT count(*) FROM wide a JOIN refs b ON a.v = b.rtenant WHERE CAST(a.v AS INT) = 2
;;
SELECT count(*) FROM refs a LEFT JOIN (VALUES ('2')) t(s) ON a.rtenant = t.s WHERE CAST(t.s AS INT) = 2
;;
SELECT count(*) FROM refs a WHERE a.rtenant IN (SELECT s FROM (VALUES ('2')) t(s) WHERE CAST(s AS INT) = 2)
;;
SELECT count(*) FROM refs a WHERE EXISTS (SELECT 1 FROM (VALUES ('2')) t(s) WHERE s = a.rtenant AND CAST(s AS INT) = 2)
;;
SELECT count(*) FROM refs a, (SELECT '2' AS s) t WHERE a.rtenant = t.s AND error('boom: ' || t.s) IS NULL
