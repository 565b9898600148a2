package symbols

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// errKernelHidden: /proc/kallsyms shows every address as 0 (kernel.kptr_restrict,
// or not root): kernel frames cannot be named.
var errKernelHidden = errors.New("kernel symbol addresses are hidden")

// euid is os.Geteuid; tests replace it.
var euid = os.Geteuid

// hiddenFix says how to see kernel symbol addresses; root, who sees them
// unless kernel.kptr_restrict is 2, is not told to run as root.
func hiddenFix() string {
	if euid() == 0 {
		return "sysctl -w kernel.kptr_restrict=0: at 2 they are hidden even from root"
	}
	return "run as root, or sysctl -w kernel.kptr_restrict=0"
}

// maxKernelSymbolSpan bounds how far past a kernel symbol's address an
// address is still taken to be in it (kallsyms has no sizes).
const maxKernelSymbolSpan = 1 << 20

// kernel is the kernel's text symbols from /proc/kallsyms.
type kernel struct {
	syms []ksym // sorted by address
}

type ksym struct {
	addr   uint64
	name   string
	module string
}

// parseKallsyms parses /proc/kallsyms ("ffffffff81000000 T _text",
// "ffffffffc0a01000 t fn\t[module]"), keeping text symbols. It fails with
// errKernelHidden when every address is 0.
func parseKallsyms(r io.Reader) (*kernel, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	k := &kernel{}
	lines, zero := 0, 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		lines++
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("kallsyms line %d: bad address %q", lines, f[0])
		}
		if addr == 0 {
			zero++
			continue
		}
		switch f[1] {
		case "t", "T", "w", "W":
		default:
			continue
		}
		s := ksym{addr: addr, name: f[2]}
		if len(f) > 3 {
			s.module = strings.Trim(f[3], "[]")
		}
		k.syms = append(k.syms, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read kallsyms: %w", err)
	}
	if lines > 0 && zero == lines {
		return nil, fmt.Errorf("%w (%s)", errKernelHidden, hiddenFix())
	}
	sort.SliceStable(k.syms, func(i, j int) bool { return k.syms[i].addr < k.syms[j].addr })
	return k, nil
}

// Symbols is the number of text symbols.
func (k *kernel) Symbols() int { return len(k.syms) }

// Lookup names a kernel address: the closest text symbol at or below it,
// and its module ("" for the kernel image).
func (k *kernel) Lookup(addr uint64) (name, module string, ok bool) {
	i := sort.Search(len(k.syms), func(i int) bool { return k.syms[i].addr > addr }) - 1
	if i < 0 || addr-k.syms[i].addr > maxKernelSymbolSpan {
		return "", "", false
	}
	return k.syms[i].name, k.syms[i].module, true
}
