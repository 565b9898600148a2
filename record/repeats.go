package record

// AutoRepeats is what a plan with repeats = "auto" asked of the step's
// repeats: perfbench run added rounds until the rQPS of every version
// against the base had a 95% interval within ±Precision, or the step had
// Max repeats. Reports use it to say where the maximum was reached.
type AutoRepeats struct {
	// Precision is the wanted half-width of the interval, relative to the
	// rQPS (0.02: ±2%).
	Precision float64 `json:"precision"`
	// Max is the most repeats the plan allowed a step.
	Max int `json:"max"`
	// Base is the plan's base version, the rQPS were computed against.
	Base string `json:"base"`
}
