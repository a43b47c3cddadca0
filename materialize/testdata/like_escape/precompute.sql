SELECT count(*) AS "_a0", "event" AS "pattern" FROM "events" GROUP BY "event"
