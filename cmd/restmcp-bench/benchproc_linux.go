package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes cmd's process die with this one, however this one
// ends (prctl(2) PR_SET_PDEATHSIG, SIGKILL).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
