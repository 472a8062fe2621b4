SELECT count(*) FROM wide a, refs b WHERE a.v = 'x'
;;
SELECT count(*) FROM wide a, refs b WHERE year(a.dt) = 2024
;;
SELECT count(*) FROM wide a, refs b WHERE year(a.ts) = 2024
;;
SELECT count(*) FROM wide a, refs b WHERE a.tstz::VARCHAR LIKE '2024%'
;;
SELECT count(*) FROM wide a, refs b WHERE a.ts::VARCHAR LIKE '2024%'
;;
SELECT count(*) FROM wide a, refs b WHERE a.tns::VARCHAR LIKE '2024%'
;;
SELECT count(*) FROM wide a, refs b WHERE a.bl::VARCHAR LIKE '%x%'
;;
SELECT count(*) FROM wide a, refs b WHERE a.un::VARCHAR = '2'
;;
SELECT count(*) FROM wide a, refs b WHERE a.m::VARCHAR LIKE '%k%'
;;
SELECT count(*) FROM wide a, refs b WHERE a.j::VARCHAR LIKE '%k%'
;;
SELECT count(*) FROM wide a, refs b WHERE a.j = '{"k": 2}'
;;
SELECT count(*) FROM wide a, refs b WHERE a.iv::VARCHAR LIKE '2%'
;;
SELECT count(*) FROM wide a, refs b WHERE 'abc' LIKE a.p
;;
SELECT count(*) FROM wide a, refs b WHERE 'abc' ILIKE a.p
;;
SELECT count(*) FROM wide a, refs b WHERE 'abc' NOT LIKE a.p
;;
SELECT count(*) FROM wide a, refs b WHERE a.v LIKE a.p
;;
SELECT count(*) FROM wide a, refs b WHERE a.v SIMILAR TO a.p
;;
SELECT count(*) FROM wide a, refs b WHERE a.v GLOB a.p
;;
SELECT count(*) FROM wide a, refs b WHERE lower(a.v) = upper(a.p)
;;
SELECT count(*) FROM wide a, refs b WHERE substring(a.v, 2147483648, 2147483648) = 'x'
;;
SELECT count(*) FROM wide a, refs b WHERE substring(a.v, -2147483648, -2147483648) = 'x'
;;
SELECT count(*) FROM wide a, refs b WHERE substring(a.v, 0, -2147483648) = 'x'
;;
SELECT count(*) FROM wide a, refs b WHERE a.dbl::VARCHAR = 'x'
;;
SELECT count(*) FROM wide a, refs b WHERE a.f::DOUBLE = 2.5
;;
SELECT count(*) FROM wide a, refs b WHERE a.h::DOUBLE = 2
;;
SELECT count(*) FROM wide a, refs b WHERE a.un = union_value(n := 2)::UNION(n INTEGER, s VARCHAR)
;;
SELECT count(*) FROM wide a, refs b WHERE a.m = MAP {'k': 2}
;;
SELECT count(*) FROM wide a, refs b WHERE a.li = [2]
;;
SELECT count(*) FROM wide a, refs b WHERE a.iv = INTERVAL 2 DAY
;;
SELECT count(*) FROM wide a, refs b WHERE a.iv > INTERVAL 1 DAY
;;
SELECT count(*) FROM wide a, refs b WHERE a.v COLLATE nocase = 'X'
;;
SELECT count(*) FROM wide a, refs b WHERE a.v COLLATE de = 'X'
;;
SELECT count(*) FROM wide a, refs b WHERE a.v COLLATE nfc = 'X'
;;
SELECT count(*) FROM wide a, refs b WHERE a.v COLLATE noaccent = 'X'
;;
SELECT count(*) FROM wide a, refs b WHERE a.ut::INTEGER = 2
;;
SELECT count(*) FROM wide a, refs b WHERE a.i::DECIMAL(10,0) = 2
;;
SELECT count(*) FROM wide a, refs b WHERE a.bi::DECIMAL(19,0) = 2
;;
SELECT count(*) FROM wide a, refs b WHERE a.d38::DOUBLE = 2
;;
SELECT count(*) FROM wide a, refs b WHERE a.bo::VARCHAR = 'true'
;;
SELECT count(*) FROM wide a, refs b WHERE a.rec::VARCHAR LIKE '%2%'
;;
SELECT count(*) FROM wide a, refs b WHERE a.li::VARCHAR LIKE '%2%'
