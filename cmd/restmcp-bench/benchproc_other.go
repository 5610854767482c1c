//go:build !linux

package main

import "os/exec"

// dieWithParent does nothing outside Linux, which alone has a parent-death
// signal: a bench child is stopped when its context ends, and the
// upstream child also when its standard input closes.
func dieWithParent(*exec.Cmd) {}
