-- The per-process rows of `pti-trace merge`'s summary: API calls, kernels and their total time,
-- other device operations, annotations and communication operations of each traced process.
WITH api AS (
    SELECT rank, host, pid, COUNT(*) AS api_calls
    FROM api_call GROUP BY rank, host, pid
), device AS (
    SELECT rank, host, pid,
        SUM(CASE WHEN kind = 'kernel' THEN 1 ELSE 0 END) AS kernels,
        SUM(CASE WHEN kind = 'kernel' THEN duration_ns ELSE 0 END) AS kernel_ns,
        SUM(CASE WHEN kind <> 'kernel' THEN 1 ELSE 0 END) AS other_ops
    FROM device_op GROUP BY rank, host, pid
), marks AS (
    SELECT rank, host, pid,
        SUM(CASE WHEN kind = 'annotation' THEN 1 ELSE 0 END) AS annotations,
        SUM(CASE WHEN kind = 'communication' THEN 1 ELSE 0 END) AS communication
    FROM annotation GROUP BY rank, host, pid
)
SELECT p.rank, p.pid, p.host,
    COALESCE(api.api_calls, 0) AS api_calls,
    COALESCE(device.kernels, 0) AS kernels,
    COALESCE(device.kernel_ns, 0) AS kernel_ns,
    COALESCE(device.other_ops, 0) AS other_ops,
    COALESCE(marks.annotations, 0) AS annotations,
    COALESCE(marks.communication, 0) AS communication
FROM process p
LEFT JOIN api ON api.rank IS NOT DISTINCT FROM p.rank
    AND api.host IS NOT DISTINCT FROM p.host AND api.pid = p.pid
LEFT JOIN device ON device.rank IS NOT DISTINCT FROM p.rank
    AND device.host IS NOT DISTINCT FROM p.host AND device.pid = p.pid
LEFT JOIN marks ON marks.rank IS NOT DISTINCT FROM p.rank
    AND marks.host IS NOT DISTINCT FROM p.host AND marks.pid = p.pid
ORDER BY p.rank NULLS LAST, p.pid
