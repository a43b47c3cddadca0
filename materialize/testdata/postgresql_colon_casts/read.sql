SELECT "_k0" AS "plan", CAST(coalesce(sum("_a0"), 0) AS bigint)::bigint AS "n", (sum("_a1") / sum("_a2")) AS "a" FROM "stored" WHERE "_v0" >= $1 GROUP BY "_k0"
