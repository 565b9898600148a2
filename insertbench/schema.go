package insertbench

import (
	"database/sql/driver"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Value ranges of the generated columns, as the benchmark draws them:
// uniform in [0, n).
const (
	cashRegisters = 1000
	customers     = 100_000
	products      = 10_000
	maxPrice      = 500
)

// The secondary indexes, by the suffix of their names.
var secondaryIndexes = []struct{ suffix, columns string }{
	{"marketsegment", "price, customerid"},
	{"registersegment", "cashregisterid, price, customerid"},
	{"pdc", "price, dateandtime, customerid"},
}

func createTableSQL(table, engine string) string {
	return "CREATE TABLE " + table + ` (
  transactionid BIGINT NOT NULL AUTO_INCREMENT,
  dateandtime DATETIME,
  cashregisterid INT NOT NULL,
  customerid INT NOT NULL,
  productid INT NOT NULL,
  price INT NOT NULL,
  data VARCHAR(4000),
  PRIMARY KEY (transactionid)
) ENGINE=` + engine
}

// addIndexesSQL adds the three secondary indexes in one statement, so the
// server may build them in one pass over the table.
func addIndexesSQL(table string) string {
	var b strings.Builder
	b.WriteString("ALTER TABLE " + table)
	for i, x := range secondaryIndexes {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " ADD INDEX %s_%s (%s)", table, x.suffix, x.columns)
	}
	return b.String()
}

const insertColumns = 7

// insertSQL inserts rows rows with their ids given.
func insertSQL(table string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (transactionid, dateandtime, cashregisterid, customerid, productid, price, data) VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("(?,?,?,?,?,?,?)")
	}
	return b.String()
}

// deleteSQL deletes the ids in [?, ?): the oldest rows of the queue.
func deleteSQL(table string) string {
	return "DELETE FROM " + table + " WHERE transactionid >= ? AND transactionid < ?"
}

// rangeQueries are the range queries of the qr steps, one per secondary
// index, each reading the index alone (it covers the columns) from a
// random starting key; every query picks one of them at random.
func rangeQueries(table string, limit int) []string {
	return []string{
		fmt.Sprintf("SELECT price, customerid FROM %[1]s FORCE INDEX (%[1]s_marketsegment) WHERE price >= ? ORDER BY price, customerid LIMIT %[2]d", table, limit),
		fmt.Sprintf("SELECT cashregisterid, price, customerid FROM %[1]s FORCE INDEX (%[1]s_registersegment) WHERE cashregisterid > ? ORDER BY cashregisterid, price, customerid LIMIT %[2]d", table, limit),
		fmt.Sprintf("SELECT price, dateandtime, customerid FROM %[1]s FORCE INDEX (%[1]s_pdc) WHERE price >= ? ORDER BY price, dateandtime, customerid LIMIT %[2]d", table, limit),
	}
}

// rangeQueryBound is the exclusive upper bound of the random starting key
// of range query i.
var rangeQueryBound = []int{maxPrice, cashRegisters, maxPrice}

// pointQuerySQL looks up ids ids by primary key, as the qp steps do.
func pointQuerySQL(table string, ids int) string {
	return "SELECT transactionid, productid, data FROM " + table + " WHERE transactionid IN (" +
		strings.TrimSuffix(strings.Repeat("?,", ids), ",") + ")"
}

// rowGen makes the rows of one client. Its buffers are reused from batch to
// batch: the driver has copied a batch into its packet when Exec returns.
// A batch allocates only its numbers, 8 bytes each (Go's tiny
// allocator packs them two to a block): a table of the numbers made once
// was measured slower, its random reads missing the caches.
type rowGen struct {
	rng            *rand.Rand
	padMin, padMax int
	letters        []byte // random letters the padding takes slices of
	pad            []byte // this batch's padding, padMax bytes per row
	// pads[i][l-padMin] is row i's padding of length l, a slice of pad
	// made into an interface value once.
	pads [][]driver.Value
	args []driver.Value
	// stamp is the time stamp of the rows, formatted as the driver
	// would send a time.Time (a string, in UTC), once per second: at
	// stampSec.
	stamp    driver.Value
	stampSec int64
}

func newRowGen(rng *rand.Rand, rowsPerCommit, padMin, padMax int) *rowGen {
	g := &rowGen{
		rng:     rng,
		padMin:  padMin,
		padMax:  padMax,
		letters: make([]byte, 4096+padMax),
		pad:     make([]byte, rowsPerCommit*padMax),
		pads:    make([][]driver.Value, rowsPerCommit),
		args:    make([]driver.Value, rowsPerCommit*insertColumns),
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for i := range g.letters {
		g.letters[i] = alphabet[rng.IntN(len(alphabet))]
	}
	for i := range g.pads {
		g.pads[i] = make([]driver.Value, padMax-padMin+1)
		for l := padMin; l <= padMax; l++ {
			g.pads[i][l-padMin] = g.pad[i*padMax : i*padMax+l]
		}
	}
	return g
}

// stampOf returns now as the rows' time stamp: "YYYY-MM-DD hh:mm:ss" in
// UTC, what the MySQL driver sends for a time.Time without its fraction
// (the column keeps whole seconds).
func (g *rowGen) stampOf(now time.Time) driver.Value {
	if sec := now.Unix(); g.stamp == nil || sec != g.stampSec {
		g.stamp, g.stampSec = now.UTC().AppendFormat(nil, time.DateTime), sec
	}
	return g.stamp
}

// batch returns the arguments of n rows with ids firstID, firstID+1, ...
// stamped now. The padding of a row is padMin to padMax bytes, the first
// half the letter 'a', the rest random letters.
func (g *rowGen) batch(firstID int64, n int, now time.Time) []driver.Value {
	a := g.args[:n*insertColumns]
	stamp := g.stampOf(now)
	for i := range n {
		l := g.padMin + g.rng.IntN(g.padMax-g.padMin+1)
		pad := g.pad[i*g.padMax : i*g.padMax+l]
		fixed := l - l/2
		for j := range fixed {
			pad[j] = 'a'
		}
		off := g.rng.IntN(len(g.letters) - g.padMax)
		copy(pad[fixed:], g.letters[off:])
		r := a[i*insertColumns : (i+1)*insertColumns]
		r[0] = firstID + int64(i)
		r[1] = stamp
		r[2] = g.rng.Int64N(cashRegisters)
		r[3] = g.rng.Int64N(customers)
		r[4] = g.rng.Int64N(products)
		r[5] = g.rng.Int64N(maxPrice)
		r[6] = g.pads[i][l-g.padMin]
	}
	return a
}
