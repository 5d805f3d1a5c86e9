package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/toolwarden/toolwarden/scripts/bench/internal/stdiorpc"
)

// idleMemory is what one idle server held.
type idleMemory struct {
	own      int64 // the server process's PSS, kB
	ownAnon  int64 // the anonymous part of own
	children int   // processes it started that were alive
	childPSS int64 // their PSS, kB
}

// idleOnce starts command over stdio, lists its tools, makes the call if
// one is given, waits idle with its input open, reads the memory of it
// and its descendants, then closes its input and waits for its exit.
func idleOnce(command, call string, idle time.Duration) (idleMemory, error) {
	argv := strings.Fields(command)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return idleMemory{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return idleMemory{}, err
	}
	if err := cmd.Start(); err != nil {
		return idleMemory{}, err
	}
	defer func() {
		_ = stdin.Close()
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		t := time.AfterFunc(30*time.Second, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		_ = cmd.Wait()
		t.Stop()
	}()
	r := bufio.NewReaderSize(stdout, 1<<20)
	if err := handshake(stdin, r, call); err != nil {
		return idleMemory{}, fmt.Errorf("%w (stderr: %.2000s)", err, stderr.String())
	}
	time.Sleep(idle)
	var m idleMemory
	own, err := readMemory(cmd.Process.Pid)
	if err != nil {
		return m, err
	}
	m.own, m.ownAnon = own.pss, own.anon
	for _, pid := range descendants(cmd.Process.Pid) {
		if c, err := readMemory(pid); err == nil {
			m.children++
			m.childPSS += c.pss
		}
	}
	return m, nil
}

// handshake does initialize, tools/list and the call, if any.
func handshake(w io.Writer, r *bufio.Reader, call string) error {
	if _, err := stdiorpc.ListTools(w, r, "footprint"); err != nil {
		return err
	}
	if call == "" {
		return nil
	}
	if _, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":%s}`+"\n", call); err != nil {
		return err
	}
	res, err := stdiorpc.Answer(r, "3")
	if err != nil {
		return fmt.Errorf("tools/call: %w", err)
	}
	var out struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(res, &out) == nil && out.IsError {
		return fmt.Errorf("tools/call answered an error: %.500s", res)
	}
	return nil
}
