SELECT "_k0" AS "event", (CAST(sum("_a0") AS REAL) / sum("_a1")) AS "mean", round((CAST(sum("_a2") AS REAL) / sum("_a3")), 2) AS "r" FROM "stored" WHERE "until" < ? GROUP BY "_k0" LIMIT ? OFFSET ?
