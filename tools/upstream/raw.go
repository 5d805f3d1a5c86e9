package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// recorder is the upstream's transport with one addition: it keeps the
// raw result of every tools/list and prompts/list page. mcp-go's client
// decodes a listing into mcp.Tool or mcp.Prompt, which drop what their
// structs do not hold (most input schema keywords, fields they do not
// know); a pin is taken over the objects exactly as the upstream sent
// them.
//
// Which optional interfaces a transport has changes what mcp-go's client
// does (requests from the upstream, HTTP protocol headers), so recorder
// comes in one type per shape: see record.
type recorder struct {
	transport.Interface
	mu    sync.Mutex
	pages map[string][]json.RawMessage // by method
	// refused is told the method of each request from the upstream that
	// is refused (every one but ping).
	refused func(method string)
}

func (r *recorder) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	res, err := r.Interface.SendRequest(ctx, req)
	if err == nil && res != nil && res.Error == nil &&
		(req.Method == string(mcp.MethodToolsList) || req.Method == string(mcp.MethodPromptsList)) {
		r.mu.Lock()
		if r.pages == nil {
			r.pages = map[string][]json.RawMessage{}
		}
		r.pages[req.Method] = append(r.pages[req.Method], append(json.RawMessage(nil), res.Result...))
		r.mu.Unlock()
	}
	return res, err
}

// take returns the pages of method recorded since its last take.
func (r *recorder) take(method mcp.MCPMethod) []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pages[string(method)]
	delete(r.pages, string(method))
	return p
}

// bidiRecorder is a recorder of a transport that takes requests from the
// upstream (stdio).
type bidiRecorder struct {
	*recorder
	bidi transport.BidirectionalInterface
}

// SetRequestHandler answers ping with h and refuses every other request
// from the upstream (sampling, elicitation, roots): toolwarden forwards
// none of them to its clients or its model, and says so.
func (b bidiRecorder) SetRequestHandler(h transport.RequestHandler) {
	b.bidi.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		if req.Method == string(mcp.MethodPing) {
			return h(ctx, req)
		}
		if b.refused != nil {
			b.refused(req.Method)
		}
		return nil, fmt.Errorf("toolwarden refuses %s requests from upstream servers", req.Method)
	})
}

// httpRecorder is a recorder of streamable HTTP.
type httpRecorder struct {
	bidiRecorder
	http transport.HTTPConnection
}

func (h httpRecorder) SetProtocolVersion(v string) { h.http.SetProtocolVersion(v) }

// RequiresLegacyProtocol passes on the transport's answer, which mcp-go's
// client asks for.
func (h httpRecorder) RequiresLegacyProtocol() bool {
	l, ok := h.http.(interface{ RequiresLegacyProtocol() bool })
	return ok && l.RequiresLegacyProtocol()
}

// record wraps t in the recorder of its shape; rec is where to take the
// pages from.
func record(t transport.Interface) (wrapped transport.Interface, rec *recorder) {
	rec = &recorder{Interface: t}
	bidi, isBidi := t.(transport.BidirectionalInterface)
	httpConn, isHTTP := t.(transport.HTTPConnection)
	switch {
	case isBidi && isHTTP:
		return httpRecorder{bidiRecorder{rec, bidi}, httpConn}, rec
	case isBidi:
		return bidiRecorder{rec, bidi}, rec
	}
	return rec, rec
}

// rawTools are the tool objects of listing pages, in order, as sent.
func rawTools(pages []json.RawMessage) ([]json.RawMessage, error) {
	return rawItems(pages, func(p *rawPage) []json.RawMessage { return p.Tools })
}

// rawPrompts are the prompt objects of listing pages, in order, as sent.
func rawPrompts(pages []json.RawMessage) ([]json.RawMessage, error) {
	return rawItems(pages, func(p *rawPage) []json.RawMessage { return p.Prompts })
}

// rawPage is a tools/list or prompts/list page.
type rawPage struct {
	Tools   []json.RawMessage `json:"tools"`
	Prompts []json.RawMessage `json:"prompts"`
}

// rawItems are the items of listing pages, in order, as sent.
func rawItems(pages []json.RawMessage, items func(*rawPage) []json.RawMessage) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for _, p := range pages {
		var page rawPage
		if err := json.Unmarshal(p, &page); err != nil {
			return nil, err
		}
		out = append(out, items(&page)...)
	}
	return out, nil
}
