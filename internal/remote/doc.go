// Package remote runs perfbench on test servers over the system's OpenSSH
// client (ssh), so that the user's ~/.ssh/config, keys, agent, jump hosts
// and host key checking apply as they do for everything else; no Go SSH
// library, no agent to install.
//
// A hosts file (parseHosts) names the servers. A Group opens one shared
// connection per host (ssh ControlMaster, its socket in a private folder):
//
//	g, _ := remote.NewGroup()
//	defer g.Close()
//	ready := remote.Prepare(ctx, g, hosts, binary, plan) // connect, copy perfbench, doctor, the plan's needs
//	c := ready[0].Conn
//	c.Run(ctx, []string{ready[0].Installed.Path, "run", ...}, remote.RunOptions{
//		Stdin:  password,                                 // secrets on stdin, never in argv
//		Stdout: remote.NewConsole(os.Stderr).Writer("h1: "),
//	})
//	p, _ := c.Pull(ctx, ready[0].Installed.Path, "out", "OUT/h1", nil) // files back as written
//	defer p.Finish()
//
// Every remote command runs in a session of its own on the host; when ctx
// ends, Run stops the whole session (SIGTERM, then SIGKILL after a grace
// period) and checks that nothing of it is left. perfbench never turns
// host key checking off: an unknown or changed key is an error that says
// how to accept it.
package remote
