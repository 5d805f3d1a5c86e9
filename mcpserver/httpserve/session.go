package httpserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/internal/jsonrpcstrict"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// ruleSessionIdentity names the refusal of a session used with another
// identity's credentials, in the log and the audit line.
const ruleSessionIdentity = "http.session_identity"

// requireJSON answers a POST whose body is not declared as JSON with 415
// Unsupported Media Type (mcp-go would say 400).
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				http.Error(w, "unsupported media type: Content-Type must be application/json", http.StatusUnsupportedMediaType)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// bindStreamable lets a request into a streamable HTTP session only with
// its owner's credentials. A request that needs a session and names none
// gets 400; one naming an unknown, ended or another identity's session
// gets the same 404, so a session ID's owner cannot be told apart from a
// wrong guess. Before this, mcp-go served a leaked session ID with any
// valid token, and opened a GET event stream on any ID without checking it.
func (s Server) bindStreamable(ids *sessionIDs, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		need, err := needsSession(r)
		if err != nil {
			http.Error(w, "request body too large (http.max_body_bytes)", http.StatusRequestEntityTooLarge)
			return
		}
		if !need {
			next.ServeHTTP(w, r)
			return
		}
		id := r.Header.Get(server.HeaderKeySessionID)
		if id == "" {
			http.Error(w, "bad request: this request needs the Mcp-Session-Id header that initialize returned", http.StatusBadRequest)
			return
		}
		if s.ownSession(w, r, ids, id) {
			next.ServeHTTP(w, r)
		}
	})
}

// bindSSE lets a POST into a legacy SSE session's message endpoint only
// with its owner's credentials, answering as bindStreamable does.
func (s Server) bindSSE(ids *sessionIDs, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("sessionId")
		if id == "" || s.ownSession(w, r, ids, id) {
			next.ServeHTTP(w, r) // mcp-go refuses a missing sessionId itself
		}
	})
}

// ownSession reports whether session id belongs to the request's owner;
// if not, it answers 404, and a session of another owner is logged and
// audited as refused under http.session_identity.
func (s Server) ownSession(w http.ResponseWriter, r *http.Request, ids *sessionIDs, id string) bool {
	owner, live := ids.ownerOf(id)
	me := s.Owner(r.Context())
	if live && owner == me {
		return true
	}
	if live {
		s.refuseForeignSession(r, id, owner, me)
	}
	http.Error(w, "Invalid session ID", http.StatusNotFound)
	return false
}

// refuseForeignSession logs and audits a request for session id, owner's,
// made with another identity's (me's) credentials.
func (s Server) refuseForeignSession(r *http.Request, id, owner, me string) {
	digest := SessionDigest(id)
	s.Log.Warn("HTTP session used with another identity's credentials: refused as unknown",
		"rule", ruleSessionIdentity, "identity", me, "session_owner", owner, "session", digest,
		"method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	e := toolerr.New(toolerr.DeniedSession,
		"Use the session your own initialize returned, or send initialize for a new one.",
		"session %s belongs to another identity", digest).WithRule(ruleSessionIdentity)
	s.Refused(me, digest, e)
}

// needsSession reports whether mcp-go would look for a streamable HTTP
// session for r: a GET or DELETE, or a POST of a request or notification
// other than initialize, each of a protocol revision before 2026-07-28
// (whose requests carry their protocol metadata and have no session).
// It decides the revision as mcp-go does, from the Mcp-Protocol-Version
// header and, on a POST, the body's params._meta. A body that is not JSON
// or a response from the client is left to mcp-go.
func needsSession(r *http.Request) (bool, error) {
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return false, nil
	}
	switch r.Method {
	case http.MethodGet, http.MethodDelete:
		return true, nil
	case http.MethodPost:
	default:
		return false, nil
	}
	if checked, ok := r.Body.(*checkedBody); ok {
		return checkedNeedsSession(checked.msg), nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return false, err
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method mcp.MCPMethod   `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method == mcp.MethodInitialize || (msg.Method == "" && msg.ID != nil) {
		return false, nil
	}
	var meta struct {
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &meta) == nil && mcp.IsModernProtocol(meta.Params.Meta.ProtocolVersion()) {
		return false, nil
	}
	return true, nil
}

// checkedNeedsSession is needsSession for a POST whose body strictJSONRPC
// checked: the same answer from what the check learnt, without reading
// and decoding the whole body twice more. The check admits only exact
// member names, once each, and a string method, so its method and kind
// are what encoding/json reads; params._meta is decoded from the params
// bytes by encoding/json, as mcp-go does, when they may hold it.
func checkedNeedsSession(m jsonrpcstrict.Message) bool {
	if m.Method == string(mcp.MethodInitialize) || m.Kind == jsonrpcstrict.Response {
		return false
	}
	if !mayHoldMeta(m.Params) {
		return true
	}
	var params struct {
		Meta *mcp.Meta `json:"_meta"`
	}
	if m.Params != nil && json.Unmarshal(m.Params, &params) == nil && mcp.IsModernProtocol(params.Meta.ProtocolVersion()) {
		return false
	}
	return true
}

// mayHoldMeta reports whether params may have a member encoding/json
// reads as _meta: the name in any case (it matches names so, and none of
// its letters folds outside ASCII), or an escape that could spell it.
func mayHoldMeta(params []byte) bool {
	if bytes.IndexByte(params, '\\') >= 0 {
		return true
	}
	for i := bytes.IndexByte(params, '_'); i >= 0 && i+5 <= len(params); {
		if bytes.EqualFold(params[i:i+5], []byte("_meta")) {
			return true
		}
		next := bytes.IndexByte(params[i+1:], '_')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}
