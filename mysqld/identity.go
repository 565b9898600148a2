package mysqld

import (
	"bytes"
	"context"
	"database/sql"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/perfbench/perfbench/record"
)

// keyVariables are the server variables recorded in record.Server.Variables:
// the configuration that moves benchmark results. Variables a server lacks
// are left out.
var keyVariables = []string{
	"binlog_format",
	"character_set_server",
	"collation_server",
	"default_storage_engine",
	"innodb_adaptive_hash_index",
	"innodb_buffer_pool_instances",
	"innodb_buffer_pool_size",
	"innodb_change_buffering",
	"innodb_doublewrite",
	"innodb_flush_log_at_trx_commit",
	"innodb_flush_method",
	"innodb_io_capacity",
	"innodb_io_capacity_max",
	"innodb_log_buffer_size",
	"innodb_log_file_size",
	"innodb_page_cleaners",
	"innodb_page_size",
	"innodb_purge_threads",
	"innodb_read_io_threads",
	"innodb_redo_log_capacity",
	"innodb_use_native_aio",
	"innodb_write_io_threads",
	"log_bin",
	"max_connections",
	"performance_schema",
	"query_cache_size",
	"query_cache_type",
	"sync_binlog",
	"table_open_cache",
	"thread_cache_size",
	"thread_handling",
	"thread_pool_size",
	"transaction_isolation",
	"tx_isolation",
	"version_compile_machine",
}

// Server returns the identity of the server behind the connection, running
// as pid (0 to skip the process's binary): version, version_comment,
// basedir, datadir, port, socket, keyVariables, and the executable's path and
// GNU build-id. A binary that cannot be read (not root) is a warning, not an
// error.
func (d *DB) Server(ctx context.Context, pid int) (*record.Server, []string, error) {
	s := &record.Server{Pid: pid}
	var warnings []string
	var port sql.NullInt64
	var version, comment, basedir, datadir, socket sql.NullString
	err := d.query(ctx, "Com_select", "SELECT @@version, @@version_comment, @@basedir, @@datadir, @@port, @@socket", func(rows *sql.Rows) error {
		if !rows.Next() {
			return errors.New("no row")
		}
		return rows.Scan(&version, &comment, &basedir, &datadir, &port, &socket)
	})
	if err != nil {
		return nil, nil, d.wrap(err, "read the server's identity from %s", d.Endpoint)
	}
	s.Version, s.VersionComment = version.String, comment.String
	s.Basedir, s.Datadir, s.Socket = basedir.String, datadir.String, socket.String
	s.Port = int(port.Int64)

	var quoted []string
	for _, v := range keyVariables {
		quoted = append(quoted, "'"+v+"'")
	}
	vars := map[string]string{}
	err = d.query(ctx, "Com_show_variables", "SHOW GLOBAL VARIABLES WHERE Variable_name IN ("+strings.Join(quoted, ",")+")", func(rows *sql.Rows) error {
		for rows.Next() {
			var n string
			var v sql.NullString
			if err := rows.Scan(&n, &v); err != nil {
				return err
			}
			vars[strings.ToLower(n)] = v.String
		}
		return nil
	})
	if err != nil {
		warnings = append(warnings, redact(fmt.Sprintf("read server variables: %v", err), d.password))
	} else if len(vars) > 0 {
		s.Variables = vars
	}

	if pid != 0 {
		p, err := d.proc.basic(pid)
		if err == nil {
			s.Exe = p.Exe
			if p.Deleted {
				warnings = append(warnings, fmt.Sprintf("the executable of pid %d (%s) was replaced or deleted after the server "+
					"started: the build-id is the running binary's", pid, p.Exe))
			}
		}
		id, err := d.proc.BuildID(pid)
		if err != nil {
			warnings = append(warnings, err.Error())
		} else {
			s.BuildID = id
		}
	}
	return s, warnings, nil
}

// BuildID returns the GNU build-id of pid's executable, read through
// /proc/PID/exe (which works even when the file was replaced on disk).
func (p Proc) BuildID(pid int) (string, error) {
	f, err := os.Open(p.fs().Proc(pid).Path("exe"))
	if err != nil {
		return "", fmt.Errorf("read the build-id of pid %d: %w", pid, err)
	}
	defer f.Close()
	id, err := buildID(f)
	if err != nil {
		return "", fmt.Errorf("read the build-id of pid %d: %w", pid, err)
	}
	return id, nil
}

// errNoBuildID means the ELF file has no NT_GNU_BUILD_ID note.
var errNoBuildID = errors.New("no GNU build-id note")

// buildID returns the NT_GNU_BUILD_ID note of an ELF file as lower-case hex,
// as `readelf -n` and `file` print it.
func buildID(r io.ReaderAt) (string, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return "", fmt.Errorf("read ELF: %w", err)
	}
	defer f.Close()
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_NOTE {
			continue
		}
		b, err := sec.Data()
		if err != nil {
			continue
		}
		if id, ok := findBuildID(b, f.ByteOrder); ok {
			return id, nil
		}
	}
	// Stripped of section headers: look at the program headers.
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_NOTE {
			continue
		}
		b := make([]byte, prog.Filesz)
		if _, err := prog.ReadAt(b, 0); err != nil {
			continue
		}
		if id, ok := findBuildID(b, f.ByteOrder); ok {
			return id, nil
		}
	}
	return "", errNoBuildID
}

// findBuildID walks ELF notes (namesz, descsz, type, name, desc; name and
// desc padded to 4 bytes) for type 3 (NT_GNU_BUILD_ID) named "GNU".
func findBuildID(b []byte, bo binary.ByteOrder) (string, bool) {
	const ntGNUBuildID = 3
	for len(b) >= 12 {
		namesz := int(bo.Uint32(b[0:]))
		descsz := int(bo.Uint32(b[4:]))
		typ := bo.Uint32(b[8:])
		b = b[12:]
		nameEnd := align4(namesz)
		if namesz < 0 || descsz < 0 || nameEnd > len(b) || nameEnd+align4(descsz) > len(b)+3 || nameEnd+descsz > len(b) {
			return "", false
		}
		name := bytes.TrimRight(b[:namesz], "\x00")
		desc := b[nameEnd : nameEnd+descsz]
		if typ == ntGNUBuildID && string(name) == "GNU" && len(desc) > 0 {
			return hex.EncodeToString(desc), true
		}
		next := nameEnd + align4(descsz)
		if next > len(b) {
			return "", false
		}
		b = b[next:]
	}
	return "", false
}

func align4(n int) int { return (n + 3) &^ 3 }
