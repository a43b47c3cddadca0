SELECT "_k0" AS "day", CAST(coalesce(sum("_a0"), 0) AS bigint) AS "n" FROM "stored" WHERE "date_from" >= $1 GROUP BY "date_from", "_k0"
