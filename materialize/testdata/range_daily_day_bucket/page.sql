SELECT "_k0" AS "day", coalesce(sum("_a0"), 0) AS "events" FROM "stored" WHERE "date_from" >= ? AND "date_to" < ? GROUP BY "date_from", "date_to", "_k0" ORDER BY 1 ASC LIMIT ? OFFSET ?
