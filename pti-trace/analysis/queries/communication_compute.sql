-- Communication against compute per rank: time in communication operations (oneCCL's, as libpti
-- records them) and in kernels, and communication's share of the two.
WITH compute AS (
    SELECT rank, SUM(duration_ns) AS kernel_ns
    FROM device_op WHERE kind = 'kernel' GROUP BY rank
), communication AS (
    SELECT rank, SUM(duration_ns) AS communication_ns
    FROM annotation WHERE kind = 'communication' GROUP BY rank
), ranks AS (
    SELECT DISTINCT rank FROM process
)
SELECT r.rank,
    COALESCE(compute.kernel_ns, 0) AS kernel_ns,
    COALESCE(communication.communication_ns, 0) AS communication_ns,
    CASE WHEN COALESCE(compute.kernel_ns, 0) + COALESCE(communication.communication_ns, 0) = 0
        THEN NULL
        ELSE CAST(COALESCE(communication.communication_ns, 0) AS DOUBLE)
            / (COALESCE(compute.kernel_ns, 0) + COALESCE(communication.communication_ns, 0))
    END AS communication_share
FROM ranks r
LEFT JOIN compute ON compute.rank IS NOT DISTINCT FROM r.rank
LEFT JOIN communication ON communication.rank IS NOT DISTINCT FROM r.rank
ORDER BY r.rank NULLS LAST
