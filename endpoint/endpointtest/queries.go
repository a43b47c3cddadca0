package endpointtest

// DailyPurchases is a SQL endpoint's query over the demo events (SQLite):
// daily purchases and revenue of one country between two dates, with the
// variables country (String), from and to (Date). Its country and amount
// are columns of a derived table, so that it can be materialized.
const DailyPurchases = `SELECT date(timestamp) AS day, count(*) AS purchases, sum(amount) AS revenue
FROM (SELECT timestamp, json_extract(properties, '$.country') AS country, json_extract(properties, '$.amount') AS amount
      FROM events WHERE event = 'purchase') AS p
WHERE country = {variables.country} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY day ORDER BY day`
