package testenv

import (
	"net/http"
	"strings"
	"testing"
)

// PostMCP POSTs body to a streamable HTTP endpoint as an MCP client does
// (JSON, accepting JSON or an event stream) with the headers hdr ("Host"
// sets the request's Host); the response's body is closed when the test
// ends.
func PostMCP(t testing.TB, url string, hdr map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}
