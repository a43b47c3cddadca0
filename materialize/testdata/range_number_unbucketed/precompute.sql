SELECT "event" AS "_k0", count(*) AS "_a0", "rowid" AS "max_id" FROM "events" WHERE length("uuid") > 3 GROUP BY "event", "rowid"
