SELECT count(*) AS "_a0", "event" AS "e" FROM (SELECT * FROM "events") AS "p" GROUP BY "event"
