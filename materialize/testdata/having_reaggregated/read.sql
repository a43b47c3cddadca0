SELECT "_k0" AS "event", coalesce(sum("_a0"), 0) AS "n" FROM "stored" WHERE "date_from" >= ? GROUP BY "_k0" HAVING (coalesce(sum("_a0"), 0)) > 10 AND max("_a1") > '2025-01-01' ORDER BY 2 DESC
