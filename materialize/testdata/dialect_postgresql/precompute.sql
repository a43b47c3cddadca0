SELECT date_trunc('day', "timestamp") AS "_k0", count(*) AS "_a0", date_trunc('day', "timestamp") AS "date_from" FROM "events" WHERE "event" = 'it''s' GROUP BY date_trunc('day', "timestamp")
