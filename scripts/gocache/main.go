// Command gocache prepares, once per machine, the read-only GOCACHE that
// toolwarden's go scripts are built against, where `toolwarden serve`
// would prepare it on first start. scripts/sandbox-setup runs it so that
// tests do not wait for it. It takes the same machine-wide lock as the
// server, so it never builds beside a server that is already building.
//
//	go run ./scripts/gocache
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver"
	texec "github.com/toolwarden/toolwarden/tools/exec"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gocache: go env GOROOT:", err)
		os.Exit(1)
	}
	root := strings.TrimSpace(string(out))
	dir := mcpserver.GoCacheDir(configs.Exec{}, root)
	c := texec.NewGoCache(dir, root)
	if c.Ready() {
		return
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "gocache: preparing %s (1-3 minutes, once per machine)\n", dir)
	if err := c.Prepare(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "gocache:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "gocache: ready in %s\n", time.Since(start).Round(time.Second))
}
