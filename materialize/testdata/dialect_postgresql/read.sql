SELECT "_k0" AS "day", coalesce(sum("_a0"), 0) AS "n" FROM "stored" WHERE "date_from" >= $1 GROUP BY "date_from", "_k0"
