package remote

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfbench/perfbench/record"
)

// Pulling files back as they are written.
//
// The controller runs "perfbench hosts watch DIR" on the host over the
// shared connection and keeps its standard input open, sending a heartbeat
// on it (see guard.go: the watcher ends when the heartbeat stops). The watcher scans
// DIR every interval and writes each new or changed file to its standard
// output as an entry of a tar stream, once the file has kept its size and
// modification time over two scans (a file still being written waits) and
// its name does not start with a dot (temporary files, such as the ones
// Records are written to before their rename, are not sent; folders whose
// name starts with a dot, such as records/.replaced/, are searched). When
// its standard input ends (the controller is done, or gone), it sends what
// it has not sent yet, whether stable or not, ends the stream and exits.
// The controller writes each entry under the local folder (to a temporary
// name, then renamed, as Records are: a reader never sees half a file) and refuses an
// entry that is not a plain file or whose path leaves the folder. One
// stream per host: no connection per file, no polling round trips, and the
// files arrive within two intervals of being written.

// watchCommand is the perfbench command that serves a folder's files.
var watchCommand = []string{"hosts", "watch"}

// DefaultWatchInterval is how often the watcher scans its folder.
const DefaultWatchInterval = 500 * time.Millisecond

type fileState struct {
	size  int64
	mtime time.Time
}

// Serve is the watcher: it writes the files of dir to out as a tar stream
// as they appear, until stdin ends (then it sends the rest and returns) or
// ctx ends. With heartbeat > 0, stdin carries the controller's heartbeats:
// when heartbeat passes without one, the link is taken for lost, the
// host's sshd process of the connection is ended and Serve returns at
// once (even from a write the lost link blocks).
func Serve(ctx context.Context, dir string, stdin io.Reader, out io.Writer, interval, heartbeat time.Duration) error {
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	hb := readHeartbeats(stdin, heartbeat > 0)
	defer hb.close()
	w := &watcher{dir: dir, tw: tar.NewWriter(out), sent: map[string]fileState{}, seen: map[string]fileState{}}
	var serveErr error
	finished := make(chan struct{})
	go func() {
		serveErr = w.serve(ctx, hb.eof, interval)
		close(finished)
	}()
	if heartbeat > 0 {
		if _, err := hb.wait(heartbeat, ctx.Done(), finished); err != nil {
			endSSHSession()
			return fmt.Errorf("watch %s: %w for %s: the link dropped", dir, err, heartbeat)
		}
		if ctx.Err() != nil {
			return ctx.Err() // the loop may be blocked in a write
		}
	}
	<-finished
	return serveErr
}

// serve is Serve's loop: a sweep every interval, and a final one when eof
// is closed.
func (w *watcher) serve(ctx context.Context, eof <-chan struct{}, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := w.sweep(false); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-eof:
			if err := w.sweep(true); err != nil {
				return err
			}
			return w.tw.Close()
		case <-t.C:
		}
	}
}

type watcher struct {
	dir  string
	tw   *tar.Writer
	sent map[string]fileState // what was sent of each file
	seen map[string]fileState // what the last scan found of a file not sent as it is
}

// sweep sends the files that are stable (or all changed ones when final).
func (w *watcher) sweep(final bool) error {
	err := filepath.WalkDir(w.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == w.dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // not made yet
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while scanning
			}
			return err
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed while scanning
		}
		rel, err := filepath.Rel(w.dir, path)
		if err != nil {
			return err
		}
		st := fileState{size: info.Size(), mtime: info.ModTime()}
		if w.sent[rel] == st {
			return nil
		}
		if !final && w.seen[rel] != st {
			w.seen[rel] = st
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil // removed since: it is not there to send
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), ModTime: st.mtime}
		if err := w.tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := w.tw.Write(data); err != nil {
			return err
		}
		w.sent[rel] = st
		delete(w.seen, rel)
		return nil
	})
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.dir, err)
	}
	return w.tw.Flush()
}

// receive writes the files of a tar stream from Serve under dir, calling
// got with each one's slash-separated path relative to dir.
func receive(r io.Reader, dir string, got func(string)) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the files stream: %w", err)
		}
		rel := filepath.FromSlash(h.Name)
		if h.Typeflag != tar.TypeReg || !filepath.IsLocal(rel) {
			return fmt.Errorf("refuse %q from the files stream: not a plain file inside the folder", h.Name)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return fmt.Errorf("read %s from the files stream: %w", h.Name, err)
		}
		if err := record.WriteFileAtomic(filepath.Join(dir, rel), data); err != nil {
			return err
		}
		if got != nil {
			got(h.Name)
		}
	}
}

// Pull copies the files that appear under remoteDir on the host (relative
// to the work folder unless absolute) into localDir as they appear, with
// the perfbench at bin on the host (see Install). got, if not nil, is
// called from another goroutine with each file's slash-separated path
// relative to localDir once it is written. Finish ends the pull.
func (c *Conn) Pull(ctx context.Context, bin, remoteDir, localDir string, got func(string)) (*pull, error) {
	argv := append([]string{bin}, watchCommand...)
	argv = append(argv, "--interval", DefaultWatchInterval.String(), "--heartbeat", heartbeatTimeout.String(), remoteDir)
	cmd := c.command(ctx, "cd "+quote(c.Host.WorkDir)+" && exec "+quote(argv...))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("host %s: pull %s: %w", c.Host.Name, remoteDir, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("host %s: pull %s: %w", c.Host.Name, remoteDir, err)
	}
	var stderr tailWriter
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("host %s: pull %s: start ssh: %w", c.Host.Name, remoteDir, err)
	}
	p := &pull{stopBeats: heartbeats(stdin), done: make(chan error, 1)}
	go func() {
		rerr := receive(stdout, localDir, got)
		io.Copy(io.Discard, stdout)
		werr := cmd.Wait()
		switch {
		case ctx.Err() != nil:
			p.done <- fmt.Errorf("host %s: pull %s: %w", c.Host.Name, remoteDir, ctx.Err())
		case werr != nil:
			p.done <- fmt.Errorf("pull %s: %w", remoteDir, c.sshError(werr, stderr.String()))
		case rerr != nil:
			p.done <- fmt.Errorf("host %s: pull %s: %w", c.Host.Name, remoteDir, rerr)
		default:
			p.done <- nil
		}
	}()
	return p, nil
}

// pull is a running pull; see Conn.Pull.
type pull struct {
	stopBeats func() // stops the heartbeats and closes the watcher's input
	done      chan error
}

// Finish asks the host for the files not sent yet, waits until they are
// written and ends the pull.
func (p *pull) Finish() error {
	p.stopBeats()
	return <-p.done
}
