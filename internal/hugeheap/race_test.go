//go:build race

package hugeheap

// raceEnabled: the race detector's shadow memory faults outside the heap.
const raceEnabled = true
