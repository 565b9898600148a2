// Package h is a test helper: other packages' tests count as its users.
package h

import "testing"

func Help(t testing.TB) {}

func Unhelpful() {}
