SELECT "event" AS "_k0", count(*) AS "_a0", date_trunc('day', ("timestamp")::timestamp) AS "to" FROM "events" GROUP BY "event", date_trunc('day', ("timestamp")::timestamp)
