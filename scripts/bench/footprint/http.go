package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolwarden/toolwarden/scripts/bench/internal/stdiorpc"
)

// sessionCost is a server's memory before and after the idle sessions.
type sessionCost struct{ before, after memory }

// sessionsOnce starts command on a free loopback port, reads its memory,
// opens n sessions, waits idle and reads it again.
func sessionsOnce(command, token string, n int, idle time.Duration) (sessionCost, error) {
	addr, err := freeAddr()
	if err != nil {
		return sessionCost{}, err
	}
	argv := append(strings.Fields(command), addr)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return sessionCost{}, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		t := time.AfterFunc(30*time.Second, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		<-exited
		t.Stop()
	}()
	url := "http://" + addr + "/mcp"
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: 30 * time.Second}
	if err := waitUp(addr, exited); err != nil {
		return sessionCost{}, fmt.Errorf("%w (stderr: %.2000s)", err, stderr.String())
	}
	// One session first, so that what the first one builds once is not
	// counted as the sessions' cost.
	if _, err := openSession(c, url, token); err != nil {
		return sessionCost{}, err
	}
	time.Sleep(idle)
	var cost sessionCost
	if cost.before, err = readMemory(cmd.Process.Pid); err != nil {
		return cost, err
	}
	if err := openSessions(c, url, token, n); err != nil {
		return cost, fmt.Errorf("%w (stderr: %.2000s)", err, stderr.String())
	}
	c.CloseIdleConnections()
	time.Sleep(idle)
	cost.after, err = readMemory(cmd.Process.Pid)
	return cost, err
}

// openSessions opens n sessions, 8 at a time.
func openSessions(c *http.Client, url, token string, n int) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				if _, err := openSession(c, url, token); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// openSession sends initialize and notifications/initialized; it returns
// the session's ID.
func openSession(c *http.Client, url, token string) (string, error) {
	id, err := post(c, url, token, "", stdiorpc.Initialize("footprint"))
	if err != nil {
		return "", fmt.Errorf("initialize: %w", err)
	}
	if id == "" {
		return "", fmt.Errorf("initialize: no Mcp-Session-Id")
	}
	if _, err := post(c, url, token, id, stdiorpc.Initialized); err != nil {
		return "", fmt.Errorf("notifications/initialized: %w", err)
	}
	return id, nil
}

func post(c *http.Client, url, token, session, body string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, b)
	}
	return resp.Header.Get("Mcp-Session-Id"), nil
}

// waitUp waits until the server answers HTTP, or exits.
func waitUp(addr string, exited <-chan struct{}) error {
	for range 300 {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("server exited")
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("server not listening after 30 s")
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
