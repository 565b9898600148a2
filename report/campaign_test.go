package report

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/perfbench/perfbench/report/internal/campaign"
)

// campaignDir writes the full generated campaign (8,400 Records, 314 MB)
// once per test binary, into campaignPath.
var campaignDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "perfbench-campaign")
	if err != nil {
		return "", err
	}
	campaignPath = dir
	_, _, err = campaign.Write(campaign.Full, dir)
	return dir, err
})

var campaignPath string

// TestMain removes the campaign after the benchmarks that wrote it.
func TestMain(m *testing.M) {
	code := m.Run()
	if campaignPath != "" {
		os.RemoveAll(campaignPath)
	}
	os.Exit(code)
}

func benchCampaign(b *testing.B) string {
	b.Helper()
	dir, err := campaignDir()
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkCampaignLoad reads the 8,400 Records of a generated campaign:
// go test -run '^$' -bench Campaign ./report
func BenchmarkCampaignLoad(b *testing.B) {
	dir := benchCampaign(b)
	var size int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if fi, err := d.Info(); err == nil && !d.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	b.SetBytes(size)
	for b.Loop() {
		in, err := LoadInput([]string{dir})
		if err != nil {
			b.Fatal(err)
		}
		if len(in.Records) != campaign.Full.Count() {
			b.Fatalf("%d Records loaded, want %d", len(in.Records), campaign.Full.Count())
		}
	}
}

// BenchmarkCampaignTable renders each table of the campaign's report as
// text, from Records already loaded.
func BenchmarkCampaignTable(b *testing.B) {
	dir := benchCampaign(b)
	in, err := LoadInput([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	for _, id := range TableIDs {
		b.Run(id, func(b *testing.B) {
			for b.Loop() {
				if err := Write(io.Discard, "text", in.Records, nil, Options{Tables: []string{id}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
