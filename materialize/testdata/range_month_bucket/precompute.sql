SELECT "event" AS "_k0", sum(1) AS "_a0", strftime('%Y-%m-01 00:00:00', "timestamp") AS "since" FROM "events" GROUP BY "event", strftime('%Y-%m-01 00:00:00', "timestamp")
