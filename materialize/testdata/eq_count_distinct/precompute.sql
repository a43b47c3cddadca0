SELECT "event" AS "_k0", count(DISTINCT "distinct_id") AS "_a0", "event" AS "event" FROM "events" GROUP BY "event"
