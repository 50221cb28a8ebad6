-- Time in API calls per rank and API (a SYCL runtime call contains the OpenCL or Level Zero
-- calls it makes: compare within an API, not across).
SELECT rank, api_group, COUNT(*) AS calls, SUM(duration_ns) AS total_ns
FROM api_call GROUP BY rank, api_group ORDER BY rank NULLS LAST, api_group
