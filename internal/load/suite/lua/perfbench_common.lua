-- perfbench_common.lua: code shared by perfbench's own sysbench 1.0 scripts.
--
-- The scripts run against the tables that sysbench's stock OLTP scripts
-- create (sbtest1..sbtestN with columns id, k, c, pad, a primary key on id and
-- a secondary index on k); load them with `sysbench oltp_read_write prepare`.
-- They run in autocommit mode: one event is one statement.
--
-- Every script selects its statement with --shape and takes --range_size as
-- the number of keys in an in-list or of rows in a range.

sysbench.cmdline.options = {
   tables = {"Number of tables", 1},
   table_size = {"Number of rows per table", 10000},
   range_size = {"Keys in an in-list, or rows in a range", 100},
   shape = {"Statement shape; see the script for the list", ""},
   zipf_exp = {"Exponent of the zipfian key distribution (0 < exp < 1)", 0.8},
   skip_trx = {"Accepted for symmetry with the stock scripts: " ..
                  "these scripts always run in autocommit mode", true},
}

local INT = sysbench.sql.type.INT
local CHAR = sysbench.sql.type.CHAR

-- pb is the namespace of the shared helpers.
pb = {}

-- A value for column c: ten groups of eleven random digits joined by
-- dashes, 119 characters, the shape of the rows the stock prepare loads.
local groups = {}
for i = 1, 10 do
   groups[i] = "###########"
end
pb.c_template = table.concat(groups, "-")

-- pb.check_shape fails the run unless --shape names one of shapes.
function pb.check_shape(script, shapes)
   local s = sysbench.opt.shape
   for _, v in ipairs(shapes) do
      if v == s then
         return s
      end
   end
   error(string.format("%s: --shape=%q is not one of: %s", script, s,
                       table.concat(shapes, ", ")))
end

-- pb.check_sizes fails the run on sizes the scripts cannot use.
function pb.check_sizes()
   if sysbench.opt.tables < 1 then
      error("--tables must be at least 1")
   end
   if sysbench.opt.table_size < 1 then
      error("--table_size must be at least 1")
   end
   if sysbench.opt.range_size < 1 then
      error("--range_size must be at least 1")
   end
end

-- pb.table picks the table of one event, uniformly.
function pb.table()
   return sysbench.rand.uniform(1, sysbench.opt.tables)
end

-- pb.key draws a key in [1, table_size] with the --rand-type distribution.
function pb.key()
   return sysbench.rand.default(1, sysbench.opt.table_size)
end

-- pb.placeholders returns "?, ?, ..., ?" with n marks.
function pb.placeholders(n)
   return string.rep("?, ", n - 1) .. "?"
end

-- pb.prepare prepares one statement per table. sql has a %d for the table
-- number; types lists the parameter types (INT, or {CHAR, len}). It returns
-- stmts[t] and params[t][i].
function pb.prepare(con, sql, types)
   local stmts, params = {}, {}
   for t = 1, sysbench.opt.tables do
      local st = con:prepare(string.format(sql, t))
      local ps = {}
      for i, ty in ipairs(types) do
         if type(ty) == "table" then
            ps[i] = st:bind_create(ty[1], ty[2])
         else
            ps[i] = st:bind_create(ty)
         end
      end
      if #ps > 0 then
         st:bind_param(unpack(ps))
      end
      stmts[t], params[t] = st, ps
   end
   return stmts, params
end

-- pb.ints returns a list of n INT parameter types.
function pb.ints(n)
   local types = {}
   for i = 1, n do
      types[i] = INT
   end
   return types
end

pb.INT = INT
pb.CHAR = CHAR

-- pb.middle returns the first of n consecutive keys centred in
-- [1, table_size], clamped to the table.
function pb.middle(n)
   local size = sysbench.opt.table_size
   local first = math.floor(size / 2) - math.floor(n / 2) + 1
   if first < 1 then
      first = 1
   end
   return first
end

-- Zipfian keys. sysbench 1.0 has no zipfian distribution, so keys are drawn
-- here with the method of Gray et al., "Quickly generating billion-record
-- synthetic databases" (SIGMOD 1994): key 1 is the most frequent and key i
-- has probability i^-theta / zeta(n, theta).

-- pb.zeta returns sum(i^-theta, i = 1..n). The first terms are summed
-- exactly and the tail is the Euler-Maclaurin approximation, so a table of
-- any size costs the same.
function pb.zeta(n, theta)
   local m = math.min(n, 10000)
   local s = 0
   for i = 1, m do
      s = s + i ^ (-theta)
   end
   if n > m then
      local integral = (n ^ (1 - theta) - m ^ (1 - theta)) / (1 - theta)
      local ends = (n ^ (-theta) - m ^ (-theta)) / 2
      local slope = theta * (m ^ (-theta - 1) - n ^ (-theta - 1)) / 12
      s = s + integral + ends + slope
   end
   return s
end

-- pb.zipf returns a generator of keys in [1, n] with exponent theta.
function pb.zipf(n, theta)
   if not (theta > 0 and theta < 1) then
      error(string.format("--zipf_exp=%s: the exponent must be between 0 " ..
                             "and 1, exclusive", tostring(theta)))
   end
   local zetan = pb.zeta(n, theta)
   local zeta2 = 1 + 2 ^ (-theta)
   local alpha = 1 / (1 - theta)
   local eta = (1 - (2 / n) ^ (1 - theta)) / (1 - zeta2 / zetan)
   local second = 1 + 0.5 ^ theta
   return function()
      local u = sysbench.rand.uniform_double()
      local uz = u * zetan
      if uz < 1 or n == 1 then
         return 1
      end
      if uz < second then
         return 2
      end
      local k = 1 + math.floor(n * (eta * u - eta + 1) ^ alpha)
      if k > n then
         k = n
      end
      return k
   end
end

-- pb.run wires a script into sysbench. setup(con) runs once per thread after
-- connecting and returns the event function and a cleanup function.
function pb.run(setup)
   local con, drv, ev, done

   local function start()
      ev, done = setup(con)
   end

   function init()
      pb.check_sizes()
   end

   function thread_init()
      drv = sysbench.sql.driver()
      con = drv:connect()
      start()
   end

   function event()
      ev()
   end

   function thread_done()
      if done then
         done()
      end
      con:disconnect()
   end

   -- After a lost connection sysbench reconnects (when the error is in
   -- --mysql-ignore-errors); prepared statements must be made again.
   function sysbench.hooks.before_restart_event(err)
      if err.sql_errno == 2013 or err.sql_errno == 2055 or
         err.sql_errno == 2006 or err.sql_errno == 2011 then
         if done then
            done()
         end
         start()
      end
   end
end

-- pb.close closes every statement in stmts.
function pb.close(stmts)
   for _, st in pairs(stmts) do
      st:close()
   end
end
