package insertbench

import (
	"bytes"
	"encoding/binary"
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
		fmt.Sprintf("SELECT cashregisterid, price, customerid FROM %[1]s FORCE INDEX (%[1]s_registersegment) WHERE "+
			"cashregisterid > ? ORDER BY cashregisterid, price, customerid LIMIT %[2]d", table, limit),
		fmt.Sprintf("SELECT price, dateandtime, customerid FROM %[1]s FORCE INDEX (%[1]s_pdc) WHERE price >= ? ORDER BY "+
			"price, dateandtime, customerid LIMIT %[2]d", table, limit),
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

// rowTypes are the protocol types of a row's parameters, those the MySQL
// driver gives the values: the numbers int64, the time stamp and the
// padding []byte.
var rowTypes = [insertColumns]byte{typeLongLong, typeString, typeLongLong, typeLongLong, typeLongLong, typeLongLong, typeString}

// rowGen makes the rows of one client, appending their values to a
// COM_STMT_EXECUTE packet as the binary protocol has them: nothing is
// allocated per row.
type rowGen struct {
	rng            *rand.Rand
	padMin, padMax int
	letters        []byte // random letters the padding takes slices of
	as             []byte // padMax letters 'a'
	// stamp is the time stamp of the rows, formatted as the driver
	// would send a time.Time (a string, in UTC), once per second: at
	// stampSec.
	stamp    []byte
	stampSec int64
}

func newRowGen(rng *rand.Rand, padMin, padMax int) *rowGen {
	g := &rowGen{
		rng:     rng,
		padMin:  padMin,
		padMax:  padMax,
		letters: make([]byte, 4096+padMax),
		as:      bytes.Repeat([]byte("a"), padMax),
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for i := range g.letters {
		g.letters[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return g
}

// stampOf returns now as the rows' time stamp: "YYYY-MM-DD hh:mm:ss" in
// UTC, what the MySQL driver sends for a time.Time without its fraction
// (the column keeps whole seconds).
func (g *rowGen) stampOf(now time.Time) []byte {
	if sec := now.Unix(); g.stamp == nil || sec != g.stampSec {
		g.stamp, g.stampSec = now.UTC().AppendFormat(g.stamp[:0], time.DateTime), sec
	}
	return g.stamp
}

// appendRows appends to b the values of n rows with ids firstID,
// firstID+1, ... stamped now. The padding of a row is padMin to padMax
// bytes, the first half the letter 'a', the rest random letters.
func (g *rowGen) appendRows(b []byte, firstID int64, n int, now time.Time) []byte {
	stamp := g.stampOf(now)
	for i := range n {
		l := g.padMin + g.rng.IntN(g.padMax-g.padMin+1)
		off := g.rng.IntN(len(g.letters) - g.padMax)
		b = binary.LittleEndian.AppendUint64(b, uint64(firstID+int64(i)))
		b = append(append(b, byte(len(stamp))), stamp...)
		b = binary.LittleEndian.AppendUint64(b, uint64(g.rng.Int64N(cashRegisters)))
		b = binary.LittleEndian.AppendUint64(b, uint64(g.rng.Int64N(customers)))
		b = binary.LittleEndian.AppendUint64(b, uint64(g.rng.Int64N(products)))
		b = binary.LittleEndian.AppendUint64(b, uint64(g.rng.Int64N(maxPrice)))
		b = appendLenEnc(b, uint64(l))
		b = append(append(b, g.as[:l-l/2]...), g.letters[off:off+l/2]...)
	}
	return b
}
