// Package osstat reads what Linux accounts for a process, the host and a
// block device: a server's CPU time (user and system), context switches
// (voluntary and involuntary), IO (/proc/PID/io), resident memory, the
// host's busy CPU time (/proc/stat) and the disk stats of the device
// holding the server's data directory (/proc/diskstats).
//
// The files are read through internal/procfs, which also parses a
// process's and its threads' stat and status and the mount table; the
// parsers here take the bytes of the others (ParseHostCPU for /proc/stat,
// and /proc/PID/io and /proc/diskstats). An FS reads under a root folder,
// "/" on a live system and a fixture folder in tests. A process that does
// not exist (any more) is procfs.ErrGone.
// A Snapshot is one reading at an instant; Delta(a, b) turns two of them
// into the record.OS of a measured window, with warnings for what could not
// be counted.
//
// # Exited threads
//
// The CPU times in /proc/PID/stat and the IO in /proc/PID/io cover every
// thread the process ever had. Context switches do not: /proc/PID/status
// (and /proc/PID/sched) count the main thread only, and the totals the
// kernel keeps for exited threads are visible only to the process itself
// (getrusage). osstat therefore sums /proc/PID/task/TID/status over the
// live threads, matching threads of the two readings by TID and start time
// (TIDs are reused). A thread's switches are lost from the first reading on
// if it exits before the second, and a thread that starts and exits between
// them is never seen. Delta detects both, from the threads missing at the
// second reading and from CPU time of the process that its live threads do
// not account for, and says so in a warning. Servers that keep their
// connection threads for the whole step (sysbench does) lose nothing; for
// switches of short-lived threads use the context-switches perf event, which
// inherits into new threads and keeps the counts of exited ones.
//
// # Disk
//
// FS.DeviceOf finds the block device of a folder: stat gives its device
// number, /sys/dev/block/MAJOR:MINOR names it and tells a partition (whose
// whole disk it reports) and a device-mapper volume (with its dm name and
// the devices under it). File systems with anonymous device numbers (btrfs)
// are resolved through the mount table's source device; tmpfs, overlay and
// network file systems have no block device (errNoBlockDevice). The stats
// reported are those of the device itself: the partition or the volume,
// not the disks under it.
package osstat
