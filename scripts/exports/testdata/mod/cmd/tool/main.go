// Command tool is a command: its exported names are not listed.
package main

func Unused() int { return 1 }

func main() {}
