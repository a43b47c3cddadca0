SELECT "_k0" AS "plan", coalesce(sum("_a0"), 0)::bigint AS "n", (sum("_a1") / CAST(sum("_a2") AS double precision)) AS "a" FROM "stored" WHERE "_v0" >= $1 GROUP BY "_k0" LIMIT $2 OFFSET $3
