package runner

import "testing"

func TestDecideOutcome(t *testing.T) {
	tests := []struct {
		name string
		f    stepFacts
		want stepOutcome
	}{
		{"sysbench ran past the window and exited 0", stepFacts{exitCode: 0}, stepOK},
		{"custom command ran past the window and exited 0", stepFacts{custom: true}, stepOK},
		{"custom command killed by the tail's stop", stepFacts{custom: true, exitCode: -1}, stepOK},
		{"interrupted wins over everything", stepFacts{interrupted: true, serverDown: true, measureErr: true, loadEnded: true, exitCode: 1}, stepInterrupted},
		{"server down wins over a measure error", stepFacts{serverDown: true, measureErr: true, loadEnded: true}, stepServerDown},
		{"measure error wins over the load's end", stepFacts{measureErr: true, loadEnded: true, endedInWarmup: true}, stepMeasureFailed},
		{"load ended in the warm-up", stepFacts{loadEnded: true, endedInWarmup: true, custom: true}, stepEndedInWarmup},
		{"sysbench ended in the window with status 0", stepFacts{loadEnded: true}, stepEndedInWindow},
		{"custom command failed in the window", stepFacts{loadEnded: true, custom: true, exitCode: 2}, stepEndedInWindow},
		{"custom command killed in the window", stepFacts{loadEnded: true, custom: true, exitCode: -1}, stepEndedInWindow},
		{"custom command ended in the window with status 0", stepFacts{loadEnded: true, custom: true}, stepShortWindow},
		{"sysbench failed after the window", stepFacts{exitCode: 1}, stepLoadFailed},
		{"sysbench killed after the window", stepFacts{exitCode: -1}, stepLoadFailed},
		{"sysbench printed FATAL and exited 0", stepFacts{fatal: true}, stepLoadFailed},
		{"custom command failed after the window", stepFacts{custom: true, exitCode: 3}, stepFailedAfterWindow},
		{"FATAL text of a custom command is not a failure", stepFacts{custom: true, fatal: true}, stepOK},
	}
	for _, tt := range tests {
		if got := decideOutcome(tt.f); got != tt.want {
			t.Errorf("%s: decideOutcome(%+v) = %d, want %d", tt.name, tt.f, got, tt.want)
		}
	}
}
