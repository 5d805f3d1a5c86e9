// Command relay is the floor of any stdio MCP proxy: it starts the
// command given as its arguments and copies each line of its own stdin to
// the command's stdin, and each line of the command's stdout to its own,
// parsing nothing. What a client pays for calling a server through it,
// over calling the server directly, is the extra process hop alone
// (scripts/bench/upstream.sh).
//
//	relay bareserver --root /ws
package main

import (
	"bufio"
	"io"
	"log"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: relay COMMAND [ARG...]")
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	go func() {
		copyLines(in, os.Stdin)
		_ = in.Close() // the command sees the end of its input
	}()
	copyLines(os.Stdout, out)
	if err := cmd.Wait(); err != nil {
		log.Fatal(err)
	}
}

// copyLines writes each whole line read from r to w, one write a line,
// until r ends or w fails.
func copyLines(w io.Writer, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
