package httpserve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
)

// notifyCount is how many progress notifications the notifying tool
// sends during one call: enough that, were they shared out between the
// call's stream and the session's GET stream, some would land on each.
const notifyCount = 30

// notifyingServer is bareServer with one tool, "notify", that sends
// notifyCount progress notifications and a log message for its call,
// each after a short pause, then answers.
func notifyingServer() httpserve.Server {
	s := bareServer()
	s.MCP = server.NewMCPServer("bare", "1", server.WithToolCapabilities(false), server.WithLogging())
	s.MCP.AddTool(mcp.NewTool("notify"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv := server.ServerFromContext(ctx)
		for i := range notifyCount {
			// A pause between notifications lets every reader of the
			// session wait on it, as a tool doing real work would.
			time.Sleep(2 * time.Millisecond)
			if err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": req.Params.Meta.ProgressToken, "progress": i + 1, "total": notifyCount,
			}); err != nil {
				return nil, err
			}
		}
		if err := srv.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelError, "notify", "done")); err != nil {
			return nil, err
		}
		return mcp.NewToolResultText(sessionTraits(ctx)), nil
	})
	return s
}

// sessionTraits names what the session in ctx is, as handlers and mcp-go
// ask (type assertions): the client's name, the negotiated revision, and
// each optional session interface it implements.
func sessionTraits(ctx context.Context) string {
	cs := server.ClientSessionFromContext(ctx)
	var traits []string
	if s, ok := cs.(server.SessionWithClientInfo); ok {
		traits = append(traits, "client="+s.GetClientInfo().Name)
	}
	if s, ok := cs.(server.SessionWithProtocolVersion); ok {
		traits = append(traits, "revision="+s.ProtocolVersion())
	}
	for name, ok := range map[string]bool{
		"logging":     is[server.SessionWithLogging](cs),
		"tools":       is[server.SessionWithTools](cs),
		"resources":   is[server.SessionWithResources](cs),
		"templates":   is[server.SessionWithResourceTemplates](cs),
		"sampling":    is[server.SessionWithSampling](cs),
		"elicitation": is[server.SessionWithElicitation](cs),
		"roots":       is[server.SessionWithRoots](cs),
		"streamable":  is[server.SessionWithStreamableHTTPConfig](cs),
	} {
		if ok {
			traits = append(traits, name)
		}
	}
	sort.Strings(traits)
	return strings.Join(traits, " ")
}

func is[T any](v any) bool {
	_, ok := v.(T)
	return ok
}

// sseEvents reads the data lines of an event stream until it ends, each
// decoded as a JSON-RPC message, calling got for each.
func sseEvents(t *testing.T, res *http.Response, got func(map[string]any)) {
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var msg map[string]any
		if assert.NoError(t, json.Unmarshal([]byte(data), &msg), data) {
			got(msg)
		}
	}
}

// TestNotificationsOnTheirRequestsStream: every notification a tools/call
// sends while it runs arrives on that call's own POST stream, before its
// answer, in order, the last one (sent just before the tool returns)
// included; with the session's GET stream open (before 2026-07-28), none
// arrives there. mcp-go v1.2.1 alone failed both (related.go): about half
// went to the GET stream, and the last one was sometimes dropped.
func TestNotificationsOnTheirRequestsStream(t *testing.T) {
	for _, revision := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(revision, func(t *testing.T) {
			srv := serveServer(t, notifyingServer(), httpserve.Options{
				Token: testToken, MaxBodyBytes: 64 << 10, MaxSessions: 3, IdleTimeout: time.Minute,
			})
			hdr := map[string]string{"Authorization": "Bearer " + testToken, "Mcp-Protocol-Version": revision}
			modern := revision == "2026-07-28"
			var onGet func() []map[string]any
			if !modern {
				hdr["Mcp-Session-Id"], onGet = sessionWithGetStream(t, srv.URL, hdr, revision)
			}
			for call := range 10 {
				meta := fmt.Sprintf(`"progressToken":"p%d"`, call)
				if modern {
					hdr["Mcp-Method"], hdr["Mcp-Name"] = "tools/call", "notify"
					meta += `,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"debug",` +
						`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`
				}
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"notify","_meta":{%s}}}`, 10+call, meta)
				res := testenv.PostMCP(t, srv.URL+"/mcp", hdr, body)
				require.Equal(t, http.StatusOK, res.StatusCode)
				require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
				var progress []float64
				logs, answered := 0, false
				sseEvents(t, res, func(m map[string]any) {
					require.False(t, answered, "a message after the answer: %v", m)
					switch m["method"] {
					case "notifications/progress":
						params := m["params"].(map[string]any)
						assert.Equal(t, fmt.Sprintf("p%d", call), params["progressToken"])
						progress = append(progress, params["progress"].(float64))
					case "notifications/message":
						require.Len(t, progress, notifyCount, "the log message comes last")
						logs++
					default:
						require.NotNil(t, m["result"], "the answer: %v", m)
						answered = true
						if !modern {
							// The handler saw its session as it is: the
							// client's info, the revision, every trait.
							text := m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
							assert.Equal(t, "client=raw elicitation logging resources revision="+revision+
								" roots sampling streamable templates tools", text)
						}
					}
				})
				require.True(t, answered, "call %d has its answer", call)
				require.Len(t, progress, notifyCount, "call %d: every progress notification on its own stream", call)
				for i, p := range progress {
					require.Equal(t, float64(i+1), p, "in order")
				}
				require.Equal(t, 1, logs, "call %d: its log message, sent last, on its own stream", call)
			}
			if onGet != nil {
				require.Empty(t, onGet(), "nothing related to a call on the GET stream")
			}
		})
	}
}

// sessionWithGetStream initializes a session of revision and opens its
// GET stream, read until the returned func is called; that func returns
// what arrived on it.
func sessionWithGetStream(t *testing.T, url string, hdr map[string]string, revision string) (string, func() []map[string]any) {
	t.Helper()
	init := testenv.PostMCP(t, url+"/mcp", hdr, strings.Replace(initBody, "2025-11-25", revision, 1))
	require.Equal(t, http.StatusOK, init.StatusCode)
	session := init.Header.Get("Mcp-Session-Id")
	withSession := map[string]string{"Mcp-Session-Id": session}
	for k, v := range hdr {
		withSession[k] = v
	}
	require.Equal(t, http.StatusAccepted, testenv.PostMCP(t, url+"/mcp", withSession, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).StatusCode)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/mcp", nil)
	require.NoError(t, err)
	for k, v := range withSession {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	get, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, get.StatusCode)
	var mu sync.Mutex
	var got []map[string]any
	done := make(chan struct{})
	go func() {
		defer close(done)
		sseEvents(t, get, func(m map[string]any) { mu.Lock(); got = append(got, m); mu.Unlock() })
	}()
	return session, func() []map[string]any {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

// TestListenAcknowledgedFirst: the acknowledgement of a 2026-07-28
// subscriptions/listen is the first message on its stream, before the
// answer, also when the listen subscribes to nothing the server offers
// and is answered at once. mcp-go v1.2.1 alone sometimes dropped it: its
// forwarder had taken it off the session's channel but not yet written it
// when the answer was written (the conformance suite's server-stateless
// saw the answer first about one run in two).
func TestListenAcknowledgedFirst(t *testing.T) {
	srv := serve(t, httpserve.Options{Token: testToken, MaxBodyBytes: 64 << 10, MaxSessions: 3, IdleTimeout: time.Minute})
	hdr := map[string]string{"Authorization": "Bearer " + testToken, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
	// The drop needs the forwarder to lose a race: rare alone, so many.
	for i := range 400 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, 100+i)
		res := testenv.PostMCP(t, srv.URL+"/mcp", hdr, body)
		require.Equal(t, http.StatusOK, res.StatusCode)
		var frames []map[string]any
		sseEvents(t, res, func(m map[string]any) { frames = append(frames, m) })
		require.Len(t, frames, 2, "listen %d: the acknowledgement, then the answer: %v", i, frames)
		require.Equal(t, "notifications/subscriptions/acknowledged", frames[0]["method"], "listen %d", i)
		require.NotNil(t, frames[1]["result"], "listen %d", i)
	}
}

// TestListenCarriesBroadcasts: a subscriptions/listen still carries the
// broadcasts it subscribed to, after its acknowledgement, each tagged
// with its subscription ID.
func TestListenCarriesBroadcasts(t *testing.T) {
	s := bareServer()
	s.MCP = server.NewMCPServer("bare", "1", server.WithToolCapabilities(true))
	srv := serveServer(t, s, httpserve.Options{Token: testToken, MaxBodyBytes: 64 << 10, MaxSessions: 3, IdleTimeout: time.Minute})
	hdr := map[string]string{"Authorization": "Bearer " + testToken, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
	res := testenv.PostMCP(t, srv.URL+"/mcp", hdr, `{"jsonrpc":"2.0","id":"l1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	frames := make(chan map[string]any, 10)
	go func() {
		defer close(frames)
		sseEvents(t, res, func(m map[string]any) { frames <- m })
	}()
	next := func() map[string]any {
		select {
		case m := <-frames:
			return m
		case <-time.After(30 * time.Second):
			t.Fatal("no frame on the listen stream")
			return nil
		}
	}
	require.Equal(t, "notifications/subscriptions/acknowledged", next()["method"])
	s.MCP.AddTool(mcp.NewTool("added"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	changed := next()
	require.Equal(t, "notifications/tools/list_changed", changed["method"])
	assert.Equal(t, "l1", changed["params"].(map[string]any)["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"])
	res.Body.Close()
}
