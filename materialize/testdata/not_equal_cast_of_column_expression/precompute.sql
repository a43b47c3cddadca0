SELECT count(*) AS "_a0", "timestamp"::date AS "_v0" FROM "events" GROUP BY "timestamp"::date
