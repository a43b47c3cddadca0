SELECT date("timestamp") AS "_k0", "distinct_id" AS "_d0", "event" AS "events" FROM "events" GROUP BY date("timestamp"), "event", "distinct_id"
