SELECT count(*) AS "_a0", "event" AS "events" FROM "events" GROUP BY "event"
