package osstat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// Sentinels callers can branch on. A process that does not exist (any
// more) is procfs.ErrGone.
var (
	// errNoBlockDevice: the folder is on a file system without a block
	// device (tmpfs, overlay, NFS...), so there are no disk stats for it.
	errNoBlockDevice = errors.New("no block device")
	// errNotSupported: the operation needs Linux.
	errNotSupported = errors.New("not supported on this system")
)

// FS reads /proc and /sys under Root: "/" (or "") for the running system,
// a fixture folder in tests.
type FS struct {
	Root string
	// Ticks is the clock tick rate of /proc's CPU times (USER_HZ); zero
	// means the running system's (procfs.ClockTicks).
	Ticks float64

	since *since // see Since
}

// since is an earlier reading of a process and which of its threads may
// have run after it.
type since struct {
	prev *Process
	ran  func(tid int, start uint64) bool
}

// Since returns f reading a process's threads (ReadProcess, Snapshot) from
// prev, an earlier reading of the same process, where ran(tid, start)
// says the thread did not run since: a thread that did not run changed
// nothing /proc shows of it (its CPU times and context switches), and
// reading thousands of idle threads again is most of a reading's cost.
// The others are read. A kept thread is matched by its tid and the start
// time of prev: a thread that exited in between and whose tid a new
// thread took (pid_max wrapping within one window) would be kept with the
// old row.
func (f FS) Since(prev *Process, ran func(tid int, start uint64) bool) FS {
	if prev != nil && ran != nil {
		f.since = &since{prev: prev, ran: ran}
	} else {
		f.since = nil
	}
	return f
}

// proc is the /proc under Root.
func (f FS) proc() procfs.FS { return procfs.New(f.Root) }

func (f FS) path(parts ...string) string {
	root := f.Root
	if root == "" {
		root = "/"
	}
	return filepath.Join(append([]string{root}, parts...)...)
}

func (f FS) ticks() float64 {
	if f.Ticks > 0 {
		return f.Ticks
	}
	return float64(procfs.ClockTicks())
}

// thread is one thread's CPU time and context switches.
type thread struct {
	TID       int
	StartTime uint64 // clock ticks after boot: tells a reused TID apart
	UTime     uint64 // clock ticks
	STime     uint64
	// Voluntary and Involuntary are the thread's context switches.
	Voluntary   uint64
	Involuntary uint64
}

// Process is one reading of a process and its threads.
type Process struct {
	// Stat is /proc/PID/stat: its CPU times include exited threads.
	Stat procfs.Stat
	// Status is /proc/PID/status (RSS; its context switches are the main
	// thread's only).
	Status procfs.Status
	// IO is /proc/PID/io, nil when it could not be read (IOErr says why:
	// reading another user's io needs root or CAP_SYS_PTRACE).
	IO    *procIO
	IOErr error
	// Threads are the live threads, by TID.
	Threads []thread
	// Vanished counts threads listed under task/ that exited before they
	// could be read.
	Vanished int
	// Kept counts the threads taken from an earlier reading (see
	// FS.Since).
	Kept int
}

// ReadProcess reads process pid and all its threads. A process that does
// not exist (any more) is procfs.ErrGone.
func (f FS) ReadProcess(pid int) (*Process, error) {
	proc := f.proc().Proc(pid)
	var p Process
	var err error
	if p.Stat, err = proc.Stat(); err != nil {
		return nil, err
	}
	if p.Status, err = proc.Status(); err != nil {
		return nil, err
	}
	if b, err := proc.ReadFile("io"); err != nil {
		if errors.Is(err, procfs.ErrGone) {
			return nil, err
		}
		p.IOErr = err
		if pe := (*fs.PathError)(nil); !errors.As(err, &pe) {
			// An error that does not name the file yet.
			p.IOErr = fmt.Errorf("read %s: %w", proc.Path("io"), err)
		}
	} else {
		io, err := parseIO(b)
		if err != nil {
			return nil, fmt.Errorf("pid %d io: %w", pid, err)
		}
		p.IO = &io
	}
	tids, err := proc.Tasks()
	if err != nil {
		return nil, err
	}
	kept, tids := f.keep(tids)
	threads, vanished, err := f.readThreads(pid, tids)
	if err != nil {
		return nil, err
	}
	p.Threads, p.Vanished, p.Kept = append(threads, kept...), vanished, len(kept)
	sort.Slice(p.Threads, func(i, j int) bool { return p.Threads[i].TID < p.Threads[j].TID })
	return &p, nil
}

// keep splits tids into the threads f.since takes from its earlier
// reading (listed then, by tid, and did not run since: see Since) and
// those to read.
func (f FS) keep(tids []int) (kept []thread, read []int) {
	if f.since == nil {
		return nil, tids
	}
	prev := make(map[int]thread, len(f.since.prev.Threads))
	for _, t := range f.since.prev.Threads {
		prev[t.TID] = t
	}
	for _, tid := range tids {
		if t, ok := prev[tid]; ok && !f.since.ran(tid, t.StartTime) {
			kept = append(kept, t)
		} else {
			read = append(read, tid)
		}
	}
	return kept, read
}

// parallelThreads is the thread count above which readThreads reads with
// one goroutine per CPU: a server with thousands of threads is read in a
// fraction of the time, so the reading stays close to the counter read
// next to it.
const parallelThreads = 64

// readThreads reads the threads tids of pid, in any order; threads that
// exited before they could be read are counted in vanished.
func (f FS) readThreads(pid int, tids []int) (threads []thread, vanished int, err error) {
	workers := min(runtime.NumCPU(), 8)
	if len(tids) <= parallelThreads || workers < 2 {
		workers = 1
	}
	type result struct {
		threads  []thread
		vanished int
		err      error
	}
	results := make([]result, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := &results[w]
			for i := w; i < len(tids); i += workers {
				t, err := f.readThread(pid, tids[i])
				switch {
				case errors.Is(err, procfs.ErrGone):
					res.vanished++
				case err != nil:
					res.err = err
					return
				default:
					res.threads = append(res.threads, t)
				}
			}
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.err != nil {
			return nil, 0, r.err
		}
		threads = append(threads, r.threads...)
		vanished += r.vanished
	}
	return threads, vanished, nil
}

func (f FS) readThread(pid, tid int) (thread, error) {
	t := thread{TID: tid}
	task := f.proc().Proc(pid).Task(tid)
	st, err := task.Stat()
	if err != nil {
		return t, threadError(pid, tid, err)
	}
	status, err := task.Status()
	if err != nil {
		return t, threadError(pid, tid, err)
	}
	if !status.HasCtxt {
		return t, fmt.Errorf("pid %d thread %d status: %w: no context switch counts", pid, tid, errFormat)
	}
	t.StartTime, t.UTime, t.STime = st.StartTime, st.UTime, st.STime
	t.Voluntary, t.Involuntary = status.Voluntary, status.Involuntary
	return t, nil
}

// threadError names the thread an error of reading it is about; a thread
// that is gone is procfs.ErrGone as it is.
func threadError(pid, tid int, err error) error {
	if errors.Is(err, procfs.ErrGone) {
		return err
	}
	return fmt.Errorf("pid %d thread %d: %w", pid, tid, err)
}

// ReadHostCPU reads the host's CPU times from /proc/stat.
func (f FS) ReadHostCPU() (HostCPU, error) {
	p := f.proc().Path("stat")
	b, err := f.proc().ReadFile("stat")
	if err != nil {
		return HostCPU{}, fmt.Errorf("read %s: %w", p, err)
	}
	c, err := ParseHostCPU(b)
	if err != nil {
		return c, fmt.Errorf("%s: %w", p, err)
	}
	return c, nil
}

// ReadDiskstats reads /proc/diskstats.
func (f FS) ReadDiskstats() ([]diskStats, error) {
	p := f.proc().Path("diskstats")
	b, err := f.proc().ReadFile("diskstats")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	d, err := parseDiskstats(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return d, nil
}

// ReadDisk reads the diskstats line of the device named name.
func (f FS) ReadDisk(name string) (diskStats, error) {
	all, err := f.ReadDiskstats()
	if err != nil {
		return diskStats{}, err
	}
	for _, d := range all {
		if d.Name == name {
			return d, nil
		}
	}
	return diskStats{}, fmt.Errorf("block device %s is not in %s: %w", name, f.proc().Path("diskstats"), errNoBlockDevice)
}

// Device is the block device holding a folder.
type Device struct {
	Major, Minor uint32
	// Name is the device's name in /proc/diskstats ("vda", "sda2", "dm-1"):
	// its stats are the ones perfbench reports.
	Name string
	// Partition is true for a partition; Disk is then the whole disk
	// ("sda"), else Name.
	Partition bool
	Disk      string
	// Mapper is the device-mapper name ("vg0-data") of a dm device, and
	// Slaves the devices it (or an md array) is built on.
	Mapper string
	Slaves []string
	// FSType and Source are set when the folder's file system has no device
	// number of its own (btrfs) and the device was found through the mount
	// table.
	FSType string
	Source string
}

// String describes the device for provenance and warnings:
// "sda2 (partition of sda)", "dm-1 (vg0-data on sda2)".
func (d Device) String() string {
	switch {
	case d.Partition:
		return fmt.Sprintf("%s (partition of %s)", d.Name, d.Disk)
	case d.Mapper != "" && len(d.Slaves) > 0:
		return fmt.Sprintf("%s (%s on %s)", d.Name, d.Mapper, strings.Join(d.Slaves, ", "))
	case d.Mapper != "":
		return fmt.Sprintf("%s (%s)", d.Name, d.Mapper)
	case len(d.Slaves) > 0:
		return fmt.Sprintf("%s (on %s)", d.Name, strings.Join(d.Slaves, ", "))
	}
	return d.Name
}

// BlockDevice resolves a device number (a folder's st_dev) to its block
// device through /sys/dev/block/MAJOR:MINOR and /proc/diskstats. Device
// numbers with major 0 (btrfs, overlay, tmpfs) are looked up in the mount
// table: a mount whose source is a /dev path resolves to that device, any
// other returns errNoBlockDevice.
func (f FS) BlockDevice(major, minor uint32) (Device, error) {
	if major == 0 {
		return f.deviceFromMount(major, minor)
	}
	d := Device{Major: major, Minor: minor}
	num := fmt.Sprintf("%d:%d", major, minor)
	link := f.path("sys", "dev", "block", num)
	dir, err := filepath.EvalSymlinks(link)
	if err != nil {
		return d, fmt.Errorf("resolve block device %s (%s): %w", num, link, errNoBlockDevice)
	}
	stats, err := f.ReadDiskstats()
	if err != nil {
		return d, err
	}
	for _, s := range stats {
		if s.Major == major && s.Minor == minor {
			d.Name = s.Name
		}
	}
	if d.Name == "" {
		return d, fmt.Errorf("block device %s (%s) has no line in %s: %w", num, filepath.Base(dir), f.proc().Path("diskstats"), errNoBlockDevice)
	}
	d.Disk = d.Name
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		d.Partition = true
		d.Disk = diskName(filepath.Dir(dir))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "dm", "name")); err == nil {
		d.Mapper = strings.TrimSpace(string(b))
	}
	if entries, err := os.ReadDir(filepath.Join(dir, "slaves")); err == nil {
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				d.Slaves = append(d.Slaves, e.Name())
			}
		}
	}
	return d, nil
}

// diskName returns a sysfs block device folder's kernel name: DEVNAME from
// its uevent, else the folder name (sysfs writes '/' in names as '!').
func diskName(dir string) string {
	if b, err := os.ReadFile(filepath.Join(dir, "uevent")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "DEVNAME="); ok {
				return v
			}
		}
	}
	return strings.ReplaceAll(filepath.Base(dir), "!", "/")
}

// deviceFromMount finds the block device of a mount with an anonymous device
// number through its source.
func (f FS) deviceFromMount(major, minor uint32) (Device, error) {
	num := fmt.Sprintf("%d:%d", major, minor)
	mounts, err := f.proc().Mountinfo()
	if err != nil {
		return Device{}, err
	}
	for _, m := range mounts {
		if m.Major != major || m.Minor != minor {
			continue
		}
		name, ok := strings.CutPrefix(m.Source, "/dev/")
		if !ok {
			return Device{}, fmt.Errorf("%s (device %s, %s from %q) has no block device: %w: disk stats are not available",
				m.MountPoint, num, m.FSType, m.Source, errNoBlockDevice)
		}
		if mapper, ok := strings.CutPrefix(name, "mapper/"); ok {
			name, err = f.mapperDevice(mapper)
			if err != nil {
				return Device{}, err
			}
		}
		stats, err := f.ReadDiskstats()
		if err != nil {
			return Device{}, err
		}
		for _, s := range stats {
			if s.Name == name {
				d, err := f.BlockDevice(s.Major, s.Minor)
				d.FSType, d.Source = m.FSType, m.Source
				return d, err
			}
		}
		return Device{}, fmt.Errorf("%s (device %s) is on %s, which is not in %s: %w",
			m.MountPoint, num, m.Source, f.proc().Path("diskstats"), errNoBlockDevice)
	}
	return Device{}, fmt.Errorf("device %s is not in the mount table: %w", num, errNoBlockDevice)
}

// mapperDevice returns the dm-N name of a device-mapper name.
func (f FS) mapperDevice(mapper string) (string, error) {
	dirs, _ := filepath.Glob(f.path("sys", "block", "dm-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "dm", "name"))
		if err == nil && strings.TrimSpace(string(b)) == mapper {
			return filepath.Base(d), nil
		}
	}
	return "", fmt.Errorf("device-mapper device %s is not under %s: %w", mapper, f.path("sys", "block"), errNoBlockDevice)
}

// DeviceOf returns the block device holding path, a path of the running
// system (it is not taken under Root; the device is resolved under Root).
func (f FS) DeviceOf(path string) (Device, error) {
	major, minor, err := statDev(path)
	if err != nil {
		return Device{}, fmt.Errorf("find the device of %s: %w", path, err)
	}
	d, err := f.BlockDevice(major, minor)
	if err != nil {
		return d, fmt.Errorf("find the device of %s: %w", path, err)
	}
	return d, nil
}
