package socket

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/toolwarden/toolwarden/approvals"
)

// Pick returns the sockets of the running servers in dir, or only the
// one --server names (its process ID, or its socket's path).
func Pick(dir, server string) ([]string, error) {
	socks, err := Sockets(dir)
	if err != nil {
		return nil, err
	}
	if server == "" {
		if len(socks) == 0 {
			return nil, fmt.Errorf("no toolwarden server with the terminal approver runs (no socket in %s; set approval.channel to include terminal)", dir)
		}
		return socks, nil
	}
	for _, s := range socks {
		if ServerName(s) == server || s == filepath.Clean(server) {
			return []string{s}, nil
		}
	}
	return nil, fmt.Errorf("no server %q in %s", server, dir)
}

// Pending is a waiting call and the server it waits on.
type Pending struct {
	Server string `json:"server"`
	approvals.Request
	socket string
	// done marks, in Watch, a call that stopped waiting; lost, a server
	// whose stream ended.
	done, lost bool
}

// ListAll gathers the waiting calls of every server in socks.
func ListAll(socks []string) ([]Pending, error) {
	var out []Pending
	var errs []error
	for _, s := range socks {
		c, err := Dial(s)
		if errors.Is(err, syscall.ECONNREFUSED) {
			continue // the socket of a server that was killed
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ServerName(s), err))
			continue
		}
		list, err := c.List()
		c.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ServerName(s), err))
		}
		for _, r := range list {
			out = append(out, Pending{Server: ServerName(s), Request: r, socket: s})
		}
	}
	return out, errors.Join(errs...)
}

// PrintList writes the waiting calls as a table, or as JSON; either way
// no character of theirs that a terminal acts on is written raw.
func PrintList(w io.Writer, ps []Pending, asJSON bool, now time.Time) error {
	if asJSON {
		if ps == nil {
			ps = []Pending{}
		}
		js, err := json.MarshalIndent(ps, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(jsonSafe(js), '\n'))
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSERVER\tTOOL\tIDENTITY\tSESSION\tLEFT\tACTION")
	for _, p := range ps {
		first, _, _ := strings.Cut(p.Preview, "\n")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", oneLine(p.ID), oneLine(p.Server), oneLine(p.Tool),
			oneLine(orLocal(p.Identity)), oneLine(p.Session), p.Expires.Sub(now).Round(time.Second), oneLine(clip(first, 80)))
	}
	return tw.Flush()
}

// Decide approves or denies the call id on whichever server of socks it
// waits.
func Decide(socks []string, id string, approve bool, reason string) (Pending, error) {
	ps, err := ListAll(socks)
	i := slices.IndexFunc(ps, func(p Pending) bool { return p.ID == id })
	if i < 0 {
		return Pending{}, errors.Join(fmt.Errorf("no call waits under approval ID %q (it ended, expired, or was decided)", id), err)
	}
	c, err := Dial(ps[i].socket)
	if err != nil {
		return Pending{}, err
	}
	defer c.Close()
	return ps[i], c.Decide(id, ps[i].Digest, approve, reason)
}

func orLocal(identity string) string {
	if identity == "" {
		return "(local)"
	}
	return identity
}

// clip shortens s to at most n runes, saying so.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
