-- perfbench_updates.lua: one UPDATE of column c per event.
--
-- --shape selects the statement (R is --range_size):
--   inlist   UPDATE sbtestN SET c=? WHERE id IN (R random keys), the keys
--            sorted so that concurrent clients lock rows in the same order
--   one      UPDATE sbtest1 SET c=? WHERE id=M, M the middle row: every
--            update hits the same row
--   zipf     UPDATE sbtestN SET c=? WHERE id=?, keys zipfian with exponent
--            --zipf_exp (sysbench 1.0 has no zipfian --rand-type)
-- Random keys of inlist follow --rand-type.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
require("perfbench_common")

pb.run(function(con)
   local shape = pb.check_shape("perfbench_updates.lua",
                                {"inlist", "one", "zipf"})
   local c = {pb.CHAR, 120}
   local stmts, params, ev

   if shape == "inlist" then
      local n = sysbench.opt.range_size
      local types = pb.ints(n)
      table.insert(types, 1, c)
      stmts, params = pb.prepare(con, "UPDATE sbtest%d SET c=? WHERE id IN (" ..
                                    pb.placeholders(n) .. ")", types)
      local keys = {}
      ev = function()
         local t = pb.table()
         local ps = params[t]
         for i = 1, n do
            keys[i] = pb.key()
         end
         table.sort(keys)
         ps[1]:set_rand_str(pb.c_template)
         for i = 1, n do
            ps[i + 1]:set(keys[i])
         end
         stmts[t]:execute()
      end
   elseif shape == "one" then
      local st = con:prepare("UPDATE sbtest1 SET c=? WHERE id=?")
      local p = {st:bind_create(c[1], c[2]), st:bind_create(pb.INT)}
      st:bind_param(unpack(p))
      p[2]:set(pb.middle(1))
      stmts = {st}
      ev = function()
         p[1]:set_rand_str(pb.c_template)
         st:execute()
      end
   else
      local next_key = pb.zipf(sysbench.opt.table_size, sysbench.opt.zipf_exp)
      stmts, params = pb.prepare(con, "UPDATE sbtest%d SET c=? WHERE id=?",
                                 {c, pb.INT})
      ev = function()
         local t = pb.table()
         params[t][1]:set_rand_str(pb.c_template)
         params[t][2]:set(next_key())
         stmts[t]:execute()
      end
   end
   return ev, function() pb.close(stmts) end
end)
