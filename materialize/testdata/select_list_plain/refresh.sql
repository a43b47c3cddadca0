DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT "uuid" AS "_c1" FROM "events";
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
