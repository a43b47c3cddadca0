//go:build unix

package exampleserver

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes dir's lock file, waiting while another process holds it,
// so that the test binaries go test runs side by side build into dir one
// at a time: the later ones then find the server up to date, and none
// writes over an executable another is starting.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
