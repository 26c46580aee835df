-- SPDX-License-Identifier: MIT
--
-- A workload of bench/stacks: Debian's sqlite3 building a table of @n rows
-- from a recursive CTE, then sorting, grouping and joining it, so the time
-- is in libsqlite3's VDBE, B-tree and sorter. In memory; fixed work:
--
--   sqlite3 :memory: '.parameter set @n 200000' '.read sqlite_queries.sql' ...
--
-- bench/stacks reads this file several times in one sqlite3 process.
CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, grp INTEGER, name TEXT, val REAL);
DELETE FROM t;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @n)
INSERT INTO t SELECT i, (i * 7919) % 1000, printf('name%08d', (i * 104729) % @n), (i * 31) % 997 / 7.0 FROM n;
SELECT count(*), sum(val) FROM (SELECT * FROM t ORDER BY name DESC LIMIT @n / 2);
SELECT grp, count(*), avg(val), max(name) FROM t GROUP BY grp ORDER BY 3 DESC LIMIT 3;
SELECT count(*) FROM t a JOIN t b ON a.id = b.grp * 100 WHERE a.val > b.val;
SELECT substr(name, 9, 4) AS k, count(*), min(val) FROM t GROUP BY k ORDER BY 2 DESC, 1 LIMIT 3;
