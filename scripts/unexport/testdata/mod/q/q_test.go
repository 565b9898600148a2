package q

import (
	"testing"

	"example.com/m/p"
)

func TestQ(t *testing.T) { p.Tested() }
