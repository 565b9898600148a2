// Package demo is perfbench demo: the whole product at work on one machine,
// with one command, on real MariaDB releases.
//
//	res, err := demo.Run(ctx, demo.Options{Out: "perfbench-demo", Quick: true, Progress: os.Stderr})
//	res.Guide(os.Stdout)
//
// Run, in order:
//
//  1. Checks the programs it needs (Tools: mariadbd, mariadb-install-db,
//     mariadb, my_print_defaults, sysbench; perf is optional). As root it
//     installs the missing ones with apt-get (installCommand); otherwise it
//     fails with errMissingTools and the command to run.
//  2. Reads the installed server's release (mariadbd --version) and fetches
//     another point release of the same series without installing it
//     (fetchOther): `apt-cache madison mariadb-server-core` lists what is on
//     offer, pickOther chooses the newest other release, `apt-get download`
//     and `dpkg-deb -x` unpack it into a cache folder (defaultCacheDir), where
//     later runs find it. When none can be had (no network, nothing on
//     offer), it says why and goes on with the installed release alone.
//  3. Writes the plan (planTOML) into the output folder as plan.toml: the
//     older release as the base, the newer one, and the installed release
//     with the binary log synced at every commit (variantOptions), a
//     configuration whose cost shows on writes and not on reads, then the
//     base again under a second label (an A/A pair, aa_of), whose rQPS the
//     report prints as the noise floor next to the others; point,
//     range and write steps, interleaved repeats, short windows
//     (fullSettings, or quickSettings for CI).
//  4. Runs it with package runner: sandbox servers on their own data
//     directories under the output folder, counters attached, one Record
//     per window. Every server is stopped at the end, also on Ctrl-C.
//  5. Writes the report in every format (report.txt in the layout of
//     published posts, report.md, report.html, report.csv, report.json,
//     report.bench.txt) and the charts (charts/), and removes the servers'
//     data directories unless Options.KeepServers.
package demo
