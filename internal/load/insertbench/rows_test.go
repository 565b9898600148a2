package insertbench

import (
	"bytes"
	"database/sql"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/mysqld/sandbox"
)

// wantRow is a row as the benchmark defines it: drawn, from client i's
// generator (seed Seed, i), in this order: the padding's length, the
// offset of its random half in the letters (drawn first, 4096+padMax of
// them), the cash register, customer, product and price.
type wantRow struct {
	reg, cust, prod, price int64
	data                   string
}

func wantRows(seed uint64, client, n, padMin, padMax int) []wantRow {
	rng := rand.New(rand.NewPCG(seed, uint64(client)))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	letters := make([]byte, 4096+padMax)
	for i := range letters {
		letters[i] = alphabet[rng.IntN(len(alphabet))]
	}
	out := make([]wantRow, n)
	for i := range out {
		l := padMin + rng.IntN(padMax-padMin+1)
		off := rng.IntN(len(letters) - padMax)
		out[i].data = strings.Repeat("a", l-l/2) + string(letters[off:off+l/2])
		out[i].reg, out[i].cust, out[i].prod, out[i].price = rng.Int64N(cashRegisters), rng.Int64N(customers), rng.Int64N(products), rng.Int64N(maxPrice)
	}
	return out
}

// TestStoredRows reads back every row l.i0 stored and compares it with the
// rows the benchmark defines (checkStored). Padding over 250 bytes takes a
// longer length prefix on the wire; 1,050 rows in batches of 100 end with
// a statement of 50.
func TestStoredRows(t *testing.T) {
	srv := testdb.Shared(t)
	root := rootDB(t, srv)
	for _, pad := range [][2]int{{10, 20}, {0, 600}} {
		o := DefaultOptions(mustStep(t, "l.i0"))
		o.Tables, o.Table, o.Rows, o.PadMin, o.PadMax = 2, "stored", 1_050, pad[0], pad[1]
		checkStored(t, root, o, stepRun(t, srv, root, o))
	}
}

// TestStoredRowsLargePackets: statements of more than 16 MB, sent as
// several packets, store their rows as drawn.
func TestStoredRowsLargePackets(t *testing.T) {
	srv := testdb.New(t, testdb.Options{Options: []string{"--max-allowed-packet=64M"}})
	root := rootDB(t, srv)
	o := DefaultOptions(mustStep(t, "l.i0"))
	o.Tables, o.Table, o.Rows, o.RowsPerCommit, o.PadMin, o.PadMax = 1, "large", 9_000, 4_500, 3_800, 4_000
	// A row takes 14 bytes of types, 40 of numbers, 20 of time stamp and
	// 3 of length before its padding.
	if size := o.RowsPerCommit * (77 + o.PadMin); size <= maxPayload {
		t.Fatalf("statements of at least %d bytes: not over 16 MB", size)
	}
	checkStored(t, root, o, stepRun(t, srv, root, o))
}

func rootDB(t *testing.T, srv *sandbox.Server) *sql.DB {
	t.Helper()
	root, err := srv.Root()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	root.SetMaxOpenConns(1)
	if _, err := root.Exec("USE " + srv.Database); err != nil {
		t.Fatal(err)
	}
	return root
}

// checkStored reads back every row of the tables of o, a run of l.i0 that
// gave res, and compares them with the rows the benchmark defines: as
// many as asked, ids 1 to N in key order, the columns of the secondary
// indexes and the padding (its length between pad_min and pad_max) as
// drawn, the time stamp within the load.
func checkStored(t *testing.T, root *sql.DB, o Options, res *Result) {
	t.Helper()
	first := res.Start.UTC().Truncate(time.Second).Format(time.DateTime)
	last := res.End.UTC().Format(time.DateTime)
	for c := 1; c <= o.Tables; c++ {
		want := wantRows(o.Seed, c, int(o.Rows), o.PadMin, o.PadMax)
		rows, err := root.Query("SELECT transactionid, dateandtime, cashregisterid, customerid, productid, price, data " +
			"FROM " + o.tableName(c) + " ORDER BY transactionid")
		if err != nil {
			t.Fatal(err)
		}
		n, bad := 0, 0
		var short, long bool // padding of at most 250 bytes, of more
		for rows.Next() {
			var id, reg, cust, prod, price int64
			var stamp string
			var data []byte
			if err := rows.Scan(&id, &stamp, &reg, &cust, &prod, &price, &data); err != nil {
				t.Fatal(err)
			}
			short, long = short || len(data) <= 250, long || len(data) > 250
			ok := n < len(want) && id == int64(n+1) && stamp >= first && stamp <= last && len(data) >= o.PadMin && len(data) <= o.PadMax
			if ok {
				w := want[n]
				ok = reg == w.reg && cust == w.cust && prod == w.prod && price == w.price && bytes.Equal(data, []byte(w.data))
			}
			if !ok && bad < 3 {
				bad++
				t.Errorf("pad %d-%d, table %d, row %d: id %d, %s, %d %d %d %d, %.40q; want %.60v, stamped %s-%s",
					o.PadMin, o.PadMax, c, n+1, id, stamp, reg, cust, prod, price, data, want[min(n, len(want)-1)], first, last)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if n != int(o.Rows) {
			t.Errorf("pad %d-%d, table %d: %d rows stored, want %d", o.PadMin, o.PadMax, c, n, o.Rows)
		}
		if short != (o.PadMin <= 250) || long != (o.PadMax > 250) {
			t.Errorf("pad %d-%d, table %d: padding of at most 250 bytes seen: %v, of more: %v", o.PadMin, o.PadMax, c, short, long)
		}
	}
}
