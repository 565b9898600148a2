package a

// OnLinux is Linux's only; it names Options.Rate and Options.Gone.
func OnLinux() {}
