package page

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// keepAlive is how often an idle event stream sends a comment, so that a
// dead browser is noticed and proxies keep the stream open.
const keepAlive = 15 * time.Second

// events streams the waiting calls: first every one waiting now, then each
// call that starts ("pending") or stops ("done") waiting.
func (p *Page) events(w http.ResponseWriter, r *http.Request, s session) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	events, cancel := p.hub.Subscribe()
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(kind string, c card) {
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, b)
	}
	fmt.Fprint(w, "event: reset\ndata: {}\n\n")
	for _, req := range p.hub.List() {
		if s.sees(req.ID) {
			send("pending", p.card(req, s))
		}
	}
	flusher.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case e, open := <-events:
			if !open {
				return
			}
			if s.sees(e.Request.ID) {
				send(e.Kind, p.card(e.Request, s))
			}
		}
		flusher.Flush()
	}
}
