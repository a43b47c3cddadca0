SELECT "_k0" AS "day", coalesce(sum("_a0"), 0) AS "purchases", sum("_a1") AS "revenue" FROM "stored" WHERE "country" = ? AND "date_from" >= ? AND "date_to" < ? GROUP BY "_k0" ORDER BY 1 ASC
