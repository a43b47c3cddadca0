SELECT count(*) AS "_a0", "event" AS "e" FROM "events" GROUP BY "event"
