SELECT "_k0" AS "e", coalesce(sum("_a0"), 0) AS "n" FROM "stored" WHERE "date_from" >= ? GROUP BY "_k0"
