-- For each kernel, the rank that spent the most time in it (ties: the lowest rank; a process without one last), with its
-- time and the average over the ranks that ran it: the imbalance to look at first.
WITH per_rank AS (
    SELECT name, rank, SUM(duration_ns) AS total_ns
    FROM device_op WHERE kind = 'kernel' GROUP BY name, rank
), placed AS (
    SELECT name, rank, total_ns,
        ROW_NUMBER() OVER (PARTITION BY name ORDER BY total_ns DESC, rank NULLS LAST) AS place,
        AVG(total_ns) OVER (PARTITION BY name) AS avg_rank_ns
    FROM per_rank
)
SELECT name, rank AS slowest_rank, total_ns AS slowest_ns, avg_rank_ns
FROM placed WHERE place = 1 ORDER BY name
