-- The "kernel across processes" rows of `pti-trace merge`'s summary: for each kernel, how many
-- processes ran it, the fewest and most launches of one process, and the least, average and
-- most time one process spent in it.
WITH per_process AS (
    SELECT name, rank, host, pid, COUNT(*) AS launches, SUM(duration_ns) AS total_ns
    FROM device_op WHERE kind = 'kernel'
    GROUP BY name, rank, host, pid
)
SELECT name, COUNT(*) AS processes,
    MIN(launches) AS min_launches, MAX(launches) AS max_launches,
    MIN(total_ns) AS min_ns, AVG(total_ns) AS avg_ns, MAX(total_ns) AS max_ns
FROM per_process GROUP BY name ORDER BY name
