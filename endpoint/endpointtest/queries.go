package endpointtest

// DailyPurchases is a SQL endpoint's query over the demo events (SQLite):
// daily purchases and revenue of one country between two dates, with the
// variables country (String), from and to (Date). Its country and amount
// are columns of a derived table, so that it can be materialized; its
// amount is cast to an INTEGER (the demo's amounts are whole), since a sum
// of a number taken out of JSON, a REAL when it has a fraction, is not
// materialized where a read adds stored sums up again (a bucket coarser
// than its day, a String range).
const DailyPurchases = `SELECT date(timestamp) AS day, count(*) AS purchases, sum(amount) AS revenue
FROM (SELECT timestamp, json_extract(properties, '$.country') AS country, CAST(json_extract(properties, '$.amount') AS INTEGER) AS amount
      FROM events WHERE event = 'purchase') AS p
WHERE country = {variables.country} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY day ORDER BY day`
