package q

import "example.com/m/p"

func Q() string { return p.Used() }
