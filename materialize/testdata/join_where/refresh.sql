DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT "e"."event" AS "_k0", count(*) AS "_a0", "u"."plan" AS "plan" FROM "events" AS "e" JOIN "users" AS "u" ON "u"."id" = "e"."distinct_id" GROUP BY "e"."event", "u"."plan";
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("plan");
