package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// serverPackage is the package of the example server, built by go build.
const serverPackage = "github.com/endpointkit/endpointkit/examples/server"

// buildServer builds examples/server into dir and returns the binary's
// path. It runs the go command of PATH, from the current directory, which
// must be inside the module.
func buildServer(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "server")
	// Without the symbol table and DWARF, which the run does not use: the
	// link takes about half the time.
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags=-s -w", "-o", bin, serverPackage)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", serverPackage, err, out)
	}
	return bin, nil
}

// proc is a server in a process of its own, its stdout and stderr in a log
// file.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	// exited is closed when the process has exited, err then what Wait
	// returned.
	exited chan struct{}
	err    error
}

// startProc starts bin with args, logging to logPath, and waits up to
// timeout for a line of its stdout that ready matches: its first submatch
// is returned (the base URL). The process is stopped again on any error.
func startProc(ctx context.Context, name, logPath string, ready *regexp.Regexp, timeout time.Duration, bin string, args ...string) (*proc, string, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		log.Close()
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, "", fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	found := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		// Every line goes to the log; the first that matches is the
		// address.
		defer close(copied)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(log, line)
			if m := ready.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(log, stdout) //nolint:errcheck // a line longer than the scanner's buffer: keep draining
	}()
	go func() {
		<-copied // Wait closes stdout: read it all first
		p.err = cmd.Wait()
		log.Close()
		close(p.exited)
	}()
	select {
	case addr := <-found:
		return p, addr, nil
	case <-p.exited:
		return nil, "", fmt.Errorf("%s exited before serving (%v):\n%s", name, p.err, p.tail())
	case <-time.After(timeout):
		err = fmt.Errorf("%s did not serve within %s:\n%s", name, timeout, p.tail())
	case <-ctx.Done():
		err = ctx.Err()
	}
	p.stop() //nolint:errcheck // already failing
	return nil, "", err
}

// stop asks the process to shut down (SIGTERM, which a shell does not
// leave ignored in a background job as it does SIGINT), kills it after
// 15 s, and
// returns an error when it did not exit cleanly.
func (p *proc) stop() error {
	select {
	case <-p.exited:
	default:
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("stop %s: %w", p.name, err)
		}
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			p.cmd.Process.Kill() //nolint:errcheck // it may have exited meanwhile
			<-p.exited
			return fmt.Errorf("%s did not stop within 15s of SIGTERM:\n%s", p.name, p.tail())
		}
	}
	if p.err != nil {
		return fmt.Errorf("%s: %w\n%s", p.name, p.err, p.tail())
	}
	return nil
}

// stopAll stops procs at once and returns their errors.
func stopAll(procs []*proc) error {
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = p.stop() }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// alive returns an error when the process has exited.
func (p *proc) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited (%v):\n%s", p.name, p.err, p.tail())
	default:
		return nil
	}
}

// tail is the end of the process's log: its last 20 lines, at most 4 KiB.
func (p *proc) tail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	var sb strings.Builder
	for _, l := range lines {
		sb.WriteString("  | ")
		sb.Write(l)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// clockTicks is the unit of the CPU times of /proc/<pid>/stat (USER_HZ,
// 100 on Linux whatever the kernel's own tick).
const clockTicks = 100

// cpu is the CPU time, user and system, the process has used so far, and
// false where it cannot be read (no /proc, or the process is gone): the
// work it did for the requests of a cell, however long a loaded machine
// made them wait, which the requests' times and rates count too.
func (p *proc) cpu() (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, false
	}
	return statCPU(string(b))
}

// switches is the number of times the process's threads have been
// switched out so far, voluntarily (a thread that waits: for the
// network, a lock, a wakeup) and not (a thread the kernel preempted), and
// false where it cannot be read: the scheduling a request costs, which a
// CPU profile does not show (its samples land on running threads) and an
// in-process benchmark does not meet. Threads that ended are not counted.
func (p *proc) switches() (int64, bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", p.cmd.Process.Pid))
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var n int64
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", p.cmd.Process.Pid, t.Name()))
		if err != nil {
			continue // the thread ended meanwhile
		}
		c, ok := statusSwitches(string(b))
		if !ok {
			return 0, false
		}
		n += c
	}
	return n, true
}

// statusSwitches reads voluntary_ctxt_switches and
// nonvoluntary_ctxt_switches from the text of a /proc/<pid>/status and
// returns their sum; false when either is missing or not a number.
func statusSwitches(status string) (int64, bool) {
	var sum int64
	found := 0
	for line := range strings.SplitSeq(status, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "voluntary_ctxt_switches" && name != "nonvoluntary_ctxt_switches") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		sum += n
		found++
	}
	return sum, found == 2
}

// statCPU reads utime and stime, the 14th and 15th fields, from the text
// of a /proc/<pid>/stat. The 2nd, the command's name in parentheses, may
// hold spaces and parentheses itself: the fields are counted after the
// last ')'.
func statCPU(stat string) (time.Duration, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is the 3rd field (the state): utime is f[11], stime f[12].
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * time.Second / clockTicks, true
}
