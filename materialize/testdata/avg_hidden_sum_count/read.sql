SELECT "_k0" AS "event", (sum("_a0") / CAST(sum("_a1") AS REAL)) AS "mean", round((sum("_a2") / CAST(sum("_a3") AS REAL)), 2) AS "r" FROM "stored" WHERE "until" < ? GROUP BY "_k0"
