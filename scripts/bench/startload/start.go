package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/toolwarden/toolwarden/scripts/bench/internal/stdiorpc"
)

// start is what one start of a server measured.
type start struct {
	// list is spawn to the tools/list answer; exit is spawn to the
	// process's exit once its input is closed; cpu is its user and system
	// time over its whole life (children it waited for included); call is
	// the first tools/call's answer, from its write (--call).
	list, exit, cpu, call time.Duration
	tools                 int
}

// startOnce spawns command, lists its tools as a client would, makes the
// call of params if any, then closes its input and waits for it to exit
// (killing it past timeout).
func startOnce(command, params string, timeout time.Duration) (start, error) {
	argv := strings.Fields(command)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return start{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return start{}, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return start{}, err
	}
	kill := time.AfterFunc(timeout, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer kill.Stop()
	var s start
	out := bufio.NewReaderSize(stdout, 1<<20)
	s.tools, err = listTools(stdin, out)
	s.list = time.Since(t0)
	if err == nil && params != "" {
		s.call, err = firstCall(stdin, out, params)
	}
	_ = stdin.Close()
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	werr := cmd.Wait()
	s.exit = time.Since(t0)
	if ps := cmd.ProcessState; ps != nil {
		s.cpu = ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		return s, fmt.Errorf("%w (wait: %v; stderr: %.2000s)", err, werr, stderr.String())
	}
	return s, nil
}

// listTools does the handshake and returns the number of tools listed.
func listTools(w io.Writer, r *bufio.Reader) (int, error) {
	res, err := stdiorpc.ListTools(w, r, "startload")
	if err != nil {
		return 0, err
	}
	var list struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		return 0, fmt.Errorf("tools/list: %w", err)
	}
	return len(list.Tools), nil
}

// firstCall makes one tools/call of params and times it from its write to
// its answer (an error result counts: it was answered).
func firstCall(w io.Writer, r *bufio.Reader, params string) (time.Duration, error) {
	t0 := time.Now()
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":`+params+"}\n"); err != nil {
		return 0, err
	}
	if _, err := stdiorpc.Answer(r, "3"); err != nil {
		return 0, fmt.Errorf("tools/call: %w", err)
	}
	return time.Since(t0), nil
}
