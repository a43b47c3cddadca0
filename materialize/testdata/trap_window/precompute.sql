SELECT "event" AS "_c0", count(*) OVER (PARTITION BY "event") AS "_c1", "event" AS "e" FROM "events"
