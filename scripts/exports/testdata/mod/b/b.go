package b

import "example.com/m/a"

func Run() int {
	var _ a.Named
	return a.Used + a.New().M() + a.Generic(1) + a.Default().Size
}
