SELECT "event" AS "_k0", count(*) AS "_a0" FROM "events" GROUP BY "event"
