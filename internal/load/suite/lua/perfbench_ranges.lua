-- perfbench_ranges.lua: one range SELECT per event.
--
-- --shape selects the statement (R is --range_size; x is a random key that
-- follows --rand-type):
--   covered-pk      SELECT id FROM sbtestN WHERE id BETWEEN x AND x+R-1
--   notcovered-pk   SELECT id, c FROM sbtestN WHERE id BETWEEN x AND x+R-1
--   covered-si      SELECT k FROM sbtestN WHERE k BETWEEN x AND x+R-1
--   notcovered-si   SELECT k, c FROM sbtestN WHERE k BETWEEN x AND x+R-1
--   count           SELECT COUNT(*) FROM sbtestN WHERE id BETWEEN x AND x+R-1

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
require("perfbench_common")

local shapes = {
   ["covered-pk"] = "SELECT id FROM sbtest%d WHERE id BETWEEN ? AND ?",
   ["notcovered-pk"] = "SELECT id, c FROM sbtest%d WHERE id BETWEEN ? AND ?",
   ["covered-si"] = "SELECT k FROM sbtest%d WHERE k BETWEEN ? AND ?",
   ["notcovered-si"] = "SELECT k, c FROM sbtest%d WHERE k BETWEEN ? AND ?",
   ["count"] = "SELECT COUNT(*) FROM sbtest%d WHERE id BETWEEN ? AND ?",
}

pb.run(function(con)
   local shape = pb.check_shape("perfbench_ranges.lua",
                                {"covered-pk", "notcovered-pk", "covered-si",
                                 "notcovered-si", "count"})
   local n = sysbench.opt.range_size
   local stmts, params = pb.prepare(con, shapes[shape], pb.ints(2))
   local ev = function()
      local t = pb.table()
      local x = pb.key()
      params[t][1]:set(x)
      params[t][2]:set(x + n - 1)
      stmts[t]:execute()
   end
   return ev, function() pb.close(stmts) end
end)
