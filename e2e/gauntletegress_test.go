package e2e

import (
	"fmt"
	"net/http"
	"strings"
)

// egressCase is the part of a url, header or request_body case the
// egress mapping reads.
type egressCase struct {
	Method      string            `json:"method"`
	URL         string            `json:"url"`
	Headers     map[string]string `json:"headers"`
	ContentType string            `json:"content_type"`
	Body        string            `json:"body"`
}

// egressRequest is the request a sandboxed run_script sends through
// toolwarden's egress proxy to play an egress case: its method, URL,
// headers and body as the case gives them. Until the proxy is wired
// behind run_script on main (issue 36), TestGauntlet only builds it, so
// every egress case is known to map to one request, and records its
// target; the verdict will be the proxy's answer (a refusal is a block).
func egressRequest(p egressCase) (*http.Request, error) {
	method := p.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, p.URL, strings.NewReader(p.Body))
	if err != nil {
		return nil, err
	}
	if req.URL.Host == "" {
		return nil, fmt.Errorf("%s: no host", p.URL)
	}
	for k, v := range p.Headers {
		req.Header.Set(k, v)
	}
	if p.ContentType != "" {
		req.Header.Set("Content-Type", p.ContentType)
	}
	return req, nil
}
