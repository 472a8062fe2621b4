SELECT count(*) FROM plain c WHERE CAST(c.v AS INT) = 2
;;
SELECT count(*) FROM plain c, refs b WHERE CAST(c.v AS INT) = 2
;;
SELECT count(*) FROM wide a, plain c WHERE a.v = c.v AND CAST(a.v AS INT) = 2
;;
# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex-secret-1' to INT32 when casting from source column v")
SELECT count(*) FROM wide a, plain c WHERE a.v = c.v AND CAST(c.v AS INT) = 2
;;
# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex-secret-1' to INT32 when casting from source column v")
SELECT count(*) FROM wide a JOIN plain c ON a.v = c.v WHERE CAST(c.v AS INT) = 2
;;
SELECT count(*) FROM wide a, plain c WHERE a.id = c.id AND CAST(c.v AS INT) = 2
;;
# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex' to INT32 when casting from source column rtenant")
SELECT count(*) FROM refs a, plain c WHERE a.rtenant = c.v AND CAST(c.v AS INT) = 2
;;
SELECT count(*) FROM plain a, wide c WHERE a.v = c.v AND CAST(c.v AS INT) = 2
;;
# LEAK (fails on f63f608): the principal gets ('error', "Conversion Error: Could not convert string 'globex-secret-1' to INT32 when casting from source column v")
SELECT count(*) FROM wide a, plain c WHERE a.v = c.v AND CAST(c.v AS INT) = 2 AND a.id > 0
;;
SELECT count(*) FROM wide a, plain c WHERE a.i = c.i AND 100 // c.n = 1
;;
SELECT count(*) FROM wide a, plain c WHERE a.i = c.i AND c.i + 1 = 3
