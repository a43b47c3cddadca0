SELECT "_k0" AS "h", CAST(coalesce(sum("_a0"), 0) AS bigint) AS "n" FROM "stored" WHERE "date_from" >= $1 AND "_v1" = $2 GROUP BY "_k0" ORDER BY 1 ASC
