//go:build unix

package suite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteScriptsPlantedLink: a script's path that is a symbolic link is
// refused with its path and its target keeps its content; the folder is
// written otherwise.
func TestWriteScriptsPlantedLink(t *testing.T) {
	dir := t.TempDir()
	if err := WriteScripts(dir); err != nil {
		t.Fatal(err)
	}
	names := scriptNames()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("victim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, names[len(names)-1])
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteScripts(dir); err == nil || !strings.Contains(err.Error(), link+" is a symbolic link") {
		t.Errorf("a script path that is a link: %v; want a refusal naming %s", err, link)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "victim\n" {
		t.Errorf("the link's target was written: %q, %v", b, err)
	}
}
