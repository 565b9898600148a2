//go:build darwin

package p

func darwinTable() string { return Table }
