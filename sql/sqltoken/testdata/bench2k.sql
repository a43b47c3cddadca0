-- Weekly revenue and activity per country and plan, for the sales dashboard.
-- Every filter is optional in the UI; the defaults are set on the variables.
SELECT
    date(timestamp) AS day,
    json_extract(properties, '$.country') AS "country",
    json_extract(properties, '$.plan') AS plan,
    count(*) AS events,
    count(DISTINCT distinct_id) AS users,
    sum(CASE WHEN event = 'purchase' THEN 1 ELSE 0 END) AS purchases,
    sum(coalesce(json_extract(properties, '$.amount'), 0)) AS revenue,
    avg(json_extract(properties, '$.amount')) AS average_basket,
    min(timestamp) AS first_seen,
    max(timestamp) AS last_seen
FROM events
WHERE event IN ('$pageview', 'purchase', 'signed_up', '$autocapture')
  AND timestamp >= {variables.since}
  AND timestamp < { variables.until }
  /* the plan filter: '{variables.ignored}' is text inside a comment */
  AND json_extract(properties, '$.plan') IN {variables.plans}
  AND json_extract(properties, '$.country') <> 'it''s {not a placeholder}'
  AND json_extract(properties, '$.amount') >= {variables.min_amount}
  AND distinct_id NOT IN (SELECT distinct_id FROM "blocked users" WHERE reason <> 'test')
  AND json_extract(properties, '$.browser') = {variables.browser}
  AND json_extract(properties, '$.os') <> 'Linux'
  AND length(distinct_id) > 3
  AND (json_extract(properties, '$current_url') LIKE '%/pricing%'
       OR json_extract(properties, '$current_url') LIKE '%/checkout%'
       OR json_extract(properties, '$current_url') LIKE '%/signup%')
GROUP BY 1, 2, 3
HAVING count(*) > 0 AND sum(coalesce(json_extract(properties, '$.amount'), 0)) >= 0
ORDER BY 1 DESC, 2, 3
LIMIT 1000
-- Columns: day, country, plan, events, users, purchases, revenue,
-- average_basket, first_seen, last_seen. Revenue is in euros, amounts
-- are stored as numbers in the properties of purchase events only.
/* Notes for maintainers:
   - the 'blocked users' table is refreshed nightly;
   - browsers are spelled as the tracker reports them ("Chrome", "Safari");
   - keep this query under 2 KB so that it stays readable in the editor. */
