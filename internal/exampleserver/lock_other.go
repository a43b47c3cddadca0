//go:build !unix

package exampleserver

import "errors"

// lockDir cannot lock a directory here: Binary then builds into a new
// temporary directory of its own.
func lockDir(string) (func(), error) {
	return nil, errors.New("exampleserver: no file lock on this system")
}
