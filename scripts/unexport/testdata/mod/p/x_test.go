package p_test

import (
	"errors"
	"testing"

	"example.com/m/p"
)

func TestX(t *testing.T) {
	p.Hook = nil
	if !errors.Is(p.ErrX, p.ErrX) || p.Kind(1) != 1 || p.Gen(1) != 1 {
		t.Fatal()
	}
}
