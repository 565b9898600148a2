package b

import (
	"testing"

	"example.com/m/a"
	"example.com/m/h"
)

func TestRun(t *testing.T) {
	h.Help(t)
	_ = a.OnlyTested{}
}
