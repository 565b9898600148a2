package remote

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
)

// platform is what uname -s and uname -m say of a machine, or what a
// binary needs of one.
type platform struct {
	OS   string // Linux
	Arch string // x86_64, aarch64, ...
}

func (p platform) String() string { return p.OS + " " + p.Arch }

// elfArch maps an ELF machine to uname -m; ok is false for one perfbench
// does not know.
func elfArch(f *elf.File) (string, bool) {
	switch f.Machine {
	case elf.EM_X86_64:
		return "x86_64", true
	case elf.EM_AARCH64:
		return "aarch64", true
	case elf.EM_386:
		return "i686", true
	case elf.EM_PPC64:
		if f.ByteOrder == binary.LittleEndian {
			return "ppc64le", true
		}
		return "ppc64", true
	case elf.EM_S390:
		return "s390x", true
	case elf.EM_RISCV:
		return "riscv64", true
	case elf.EM_LOONGARCH:
		return "loongarch64", true
	}
	return f.Machine.String(), false
}

// binaryPlatform reads the platform a Linux executable runs on from its
// ELF header.
func binaryPlatform(path string) (platform, error) {
	f, err := elf.Open(path)
	if err != nil {
		return platform{}, fmt.Errorf("read the platform of %s: %w", path, err)
	}
	defer f.Close()
	if f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
		return platform{}, fmt.Errorf("read the platform of %s: built for %v, not Linux", path, f.OSABI)
	}
	arch, ok := elfArch(f)
	if !ok {
		return platform{}, fmt.Errorf("read the platform of %s: unknown machine %s", path, arch)
	}
	return platform{OS: "Linux", Arch: arch}, nil
}

// runs reports whether a binary for p runs on a host whose uname says
// host: 32-bit x86 names its machine i386 to i686.
func (p platform) runs(host platform) bool {
	if p.OS != host.OS {
		return false
	}
	if p.Arch == "i686" {
		switch host.Arch {
		case "i386", "i486", "i586", "i686":
			return true
		}
	}
	return p.Arch == host.Arch
}

// Installed is a perfbench binary on a host.
type Installed struct {
	// Path is the binary's absolute path on the host.
	Path string
	// Copied is false when an identical binary was there already.
	Copied bool
	// Size is the binary's size in bytes.
	Size int64
}

// Install puts binary (a perfbench executable here) on the host as
// bin/perfbench under the work folder, unless an identical one is there
// (as Connect found it, or the last Install left it).
// It refuses, before copying anything, a host whose uname -s and -m do not
// run the binary.
func (c *Conn) Install(ctx context.Context, binary string) (Installed, error) {
	want, err := binaryPlatform(binary)
	if err != nil {
		return Installed{}, err
	}
	host := platform{OS: c.OS, Arch: c.Arch}
	if !want.runs(host) {
		return Installed{}, fmt.Errorf("host %s (%s): %w: the host is %s and %s is built for %s; build perfbench for the host "+
			"(GOOS=linux GOARCH=... go build ./cmd/perfbench) and give that binary",
			c.Host.Name, c.Host.Destination, errPlatform, host, binary, want)
	}
	f, err := os.Open(binary)
	if err != nil {
		return Installed{}, fmt.Errorf("copy perfbench to host %s: %w", c.Host.Name, err)
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return Installed{}, fmt.Errorf("copy perfbench to host %s: read %s: %w", c.Host.Name, binary, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if c.WorkDir != "" && c.installSum == sum {
		return Installed{Path: c.WorkDir + "/bin/perfbench", Size: size}, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Installed{}, fmt.Errorf("copy perfbench to host %s: %w", c.Host.Name, err)
	}
	// Written under a temporary name and renamed: a run using the old
	// binary keeps it, and a cut copy leaves no broken perfbench.
	script := fmt.Sprintf(`mkdir -p %s/bin && cd %s/bin && t=.perfbench.$$ && cat >"$t" && chmod 755 "$t" && mv -f "$t" `+
		`perfbench && cd .. && pwd && sha256sum bin/perfbench`,
		quote(c.Host.WorkDir), quote(c.Host.WorkDir))
	cmd := c.command(ctx, script)
	cmd.Stdin = f
	var stdout strings.Builder
	var stderr tailWriter
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Installed{}, fmt.Errorf("copy perfbench to host %s: %w", c.Host.Name, ctx.Err())
		}
		return Installed{}, fmt.Errorf("copy perfbench: %w", c.sshError(err, stderr.String()))
	}
	// The last two lines (a login shell's startup files may print before).
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) >= 2 {
		lines = lines[len(lines)-2:]
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[1], sum+" ") {
		return Installed{}, fmt.Errorf("copy perfbench to host %s: the copy's checksum is not %s: %q", c.Host.Name, sum, stdout.String())
	}
	c.WorkDir, c.installSum = lines[0], sum
	return Installed{Path: c.WorkDir + "/bin/perfbench", Copied: true, Size: size}, nil
}
