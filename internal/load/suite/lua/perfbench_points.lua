-- perfbench_points.lua: one SELECT per event with an in-list of keys.
--
-- --shape selects the statement (R is --range_size):
--   random-points   SELECT id, k, c, pad FROM sbtestN WHERE k IN (R random keys)
--   hot-points      the same statement, always with the same R keys from the
--                   middle of the key range (contention on hot rows)
--   covered-pk      SELECT id FROM sbtestN WHERE id IN (R random keys)
--   notcovered-pk   SELECT id, c FROM sbtestN WHERE id IN (R random keys)
--   covered-si      SELECT k FROM sbtestN WHERE k IN (R random keys)
--   notcovered-si   SELECT k, c FROM sbtestN WHERE k IN (R random keys)
-- Random keys follow --rand-type.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
require("perfbench_common")

local shapes = {
   ["random-points"] = "SELECT id, k, c, pad FROM sbtest%%d WHERE k IN (%s)",
   ["hot-points"] = "SELECT id, k, c, pad FROM sbtest%%d WHERE k IN (%s)",
   ["covered-pk"] = "SELECT id FROM sbtest%%d WHERE id IN (%s)",
   ["notcovered-pk"] = "SELECT id, c FROM sbtest%%d WHERE id IN (%s)",
   ["covered-si"] = "SELECT k FROM sbtest%%d WHERE k IN (%s)",
   ["notcovered-si"] = "SELECT k, c FROM sbtest%%d WHERE k IN (%s)",
}

pb.run(function(con)
   local shape = pb.check_shape("perfbench_points.lua",
                                {"random-points", "hot-points", "covered-pk",
                                 "notcovered-pk", "covered-si", "notcovered-si"})
   local n = sysbench.opt.range_size
   local sql = string.format(shapes[shape], pb.placeholders(n))
   local stmts, params = pb.prepare(con, sql, pb.ints(n))

   local ev
   if shape == "hot-points" then
      local first = pb.middle(n)
      for t = 1, sysbench.opt.tables do
         for i = 1, n do
            params[t][i]:set(first + i - 1)
         end
      end
      ev = function()
         stmts[pb.table()]:execute()
      end
   else
      ev = function()
         local t = pb.table()
         local ps = params[t]
         for i = 1, n do
            ps[i]:set(pb.key())
         end
         stmts[t]:execute()
      end
   end
   return ev, function() pb.close(stmts) end
end)
