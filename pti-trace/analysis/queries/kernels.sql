-- Each kernel across every rank: launches, total time, and percentiles of one launch's time.
SELECT name, COUNT(*) AS launches, SUM(duration_ns) AS total_ns,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ns) AS p50_ns,
    percentile_cont(0.9) WITHIN GROUP (ORDER BY duration_ns) AS p90_ns,
    percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ns) AS p99_ns,
    MAX(duration_ns) AS max_ns
FROM device_op WHERE kind = 'kernel'
GROUP BY name ORDER BY total_ns DESC, name
