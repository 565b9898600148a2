package calibrate

import "runtime"

// loops are the calibration loops, by GOARCH; each one's counts are those
// of its .s file, which TestLoopByConstruction disassembles and counts.
var loops = map[string]workload{
	// workload_amd64.s: 8 ADDQ, DECQ, LEAQ, JNZ.
	"amd64": {supported: true, instructions: 11, cycles: 8, branches: 1, adds: 8, text: "8 dependent ADDs, DEC, LEA, JNZ"},
	// workload_arm64.s: 8 ADD, SUB, CBNZ.
	"arm64": {supported: true, instructions: 10, cycles: 8, branches: 1, adds: 8, text: "8 dependent ADDs, SUB, CBNZ"},
}

// loop is this architecture's; not supported where there is none.
var loop = loops[runtime.GOARCH]

// workload is the calibration loop of this architecture and what one
// iteration costs, by construction (see the .s files).
type workload struct {
	supported bool
	// instructions and branches are retired per iteration; cycles is the
	// length of the iteration's dependency chain: adds ADDs of 1 cycle.
	instructions, cycles, branches float64
	adds                           uint64
	text                           string
}

// describe names the loop: "amd64 loop of 8 dependent ADDs, DEC, LEA, JNZ:
// 11 instructions and 8 cycles per iteration".
func (w workload) describe() string {
	return runtime.GOARCH + " loop of " + w.text + ": " + fmtNum(w.instructions) + " instructions and " + fmtNum(w.cycles) + " cycles per iteration"
}

// chunk is the most iterations spin runs in one call: the assembly loop
// cannot be preempted, so the garbage collector's stop-the-world phases
// wait for it; 1<<20 iterations take a few milliseconds.
const chunk = 1 << 20

// spinChunks runs the loop n times, in chunks, and returns the chain's sum.
func spinChunks(n uint64) uint64 {
	var sum uint64
	for n > 0 {
		k := min(n, chunk)
		sum += spin(k)
		n -= k
	}
	return sum
}
