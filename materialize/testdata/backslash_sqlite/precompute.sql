SELECT count(*) AS "_a0", "distinct_id" AS "u" FROM "events" WHERE "event" = 'a\\' GROUP BY "distinct_id"
