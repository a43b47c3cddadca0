SELECT count(*) AS "_a0", "timestamp" AS "a", "timestamp" AS "b" FROM "events" GROUP BY "timestamp"
