SELECT count(*) AS "_a0", "event" AS "e" FROM "events" WHERE "event" ILIKE 'p%' GROUP BY "event"
