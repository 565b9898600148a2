// Command gencampaign writes a generated campaign of Records into a folder
// (42 steps × 10 versions × 4 hosts × 5 repeats by default), for measuring
// perfbench report at the scale of a real campaign.
//
//	go run ./internal/report/internal/campaign/gencampaign DIR
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/perfbench/perfbench/internal/report/internal/campaign"
)

func main() {
	s := campaign.Full
	flag.IntVar(&s.Steps, "steps", s.Steps, "steps (at most 42)")
	flag.IntVar(&s.Versions, "versions", s.Versions, "versions")
	flag.IntVar(&s.Hosts, "hosts", s.Hosts, "hosts")
	flag.IntVar(&s.Repeats, "repeats", s.Repeats, "repeats of each step")
	flag.Uint64Var(&s.Seed, "seed", s.Seed, "seed of the made-up numbers")
	flag.Parse()
	if flag.NArg() != 1 || s.Steps < 1 || s.Steps > len(campaign.Steps) {
		fmt.Fprintln(os.Stderr, "usage: gencampaign [-steps N] [-versions N] [-hosts N] [-repeats N] [-seed N] DIR")
		os.Exit(2)
	}
	files, bytes, err := campaign.Write(s, flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencampaign:", err)
		os.Exit(1)
	}
	fmt.Printf("%d Records, %.0f MB in %s\n", files, float64(bytes)/1e6, flag.Arg(0))
}
