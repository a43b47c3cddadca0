SELECT "e"."event" AS "_k0", count(*) AS "_a0", "u"."plan" AS "plan" FROM "events" AS "e" JOIN "users" AS "u" ON "u"."id" = "e"."distinct_id" GROUP BY "e"."event", "u"."plan"
