SELECT "_k0" AS "event", coalesce(sum("_a0"), 0) AS "count(*)" FROM "stored" GROUP BY "_k0" HAVING coalesce(sum("_a0"), 0) > ? LIMIT ? OFFSET ?
