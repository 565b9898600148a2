-- perfbench_scan.lua: one full table scan per event that returns no rows:
--   SELECT id FROM sbtestN WHERE LENGTH(c) < 0
-- The condition is false for every row but the server must read each row to
-- know it, so one event reads table_size rows. Measure scans per 1,000 rows
-- read (the server's Rows_read, or Innodb_rows_read on MySQL).

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
require("perfbench_common")

pb.run(function(con)
   local stmts = pb.prepare(con, "SELECT id FROM sbtest%d WHERE LENGTH(c) < 0", {})
   local ev = function()
      stmts[pb.table()]:execute()
   end
   return ev, function() pb.close(stmts) end
end)
