// Package record is public: its names are not listed.
package record

func Anything() {}
