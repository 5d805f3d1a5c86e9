package egress_test

import (
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/egress"
	"github.com/toolwarden/toolwarden/egress/egresstest"
)

// benchClients are a direct client and one through the proxy, both to a
// local HTTPS server of a test CA.
func benchClients(b *testing.B, h http.Handler) (direct, proxied *http.Client, url string) {
	ca := egresstest.NewCA(b)
	port := egresstest.Port(ca.Server(b, h, "localhost"))
	r := newRig(b, rigOpts{net: allow("localhost:" + port), resolver: egresstest.Resolver{"localhost": {"127.0.0.1"}},
		limits: egress.Limits{MaxBytesDown: 1 << 40, MaxBytesUp: 1 << 40}})
	direct = &http.Client{Transport: &http.Transport{TLSClientConfig: r.client(ca.Pool()).Transport.(*http.Transport).TLSClientConfig, DisableKeepAlives: true}}
	return direct, r.client(ca.Pool()), "https://localhost:" + port + "/"
}

func get(b *testing.B, c *http.Client, url string) {
	resp, err := c.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// BenchmarkConnectionSetup: a new TLS connection and one small request,
// direct and through the proxy (CONNECT, lookup, SNI check, tunnel);
// p50-ms is the median.
func BenchmarkConnectionSetup(b *testing.B) {
	for _, via := range []string{"direct", "proxy"} {
		b.Run(via, func(b *testing.B) {
			direct, proxied, url := benchClients(b, http.HandlerFunc(hello))
			c := map[string]*http.Client{"direct": direct, "proxy": proxied}[via]
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				get(b, c, url)
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

// BenchmarkTransfer100MB: a 100 MB download over TLS, direct and through
// the proxy in the same run; proxy/direct is the throughput ratio.
func BenchmarkTransfer100MB(b *testing.B) {
	const size = 100 << 20
	chunk := make([]byte, 1<<20)
	direct, proxied, url := benchClients(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for range size / len(chunk) {
			w.Write(chunk)
		}
	}))
	b.SetBytes(2 * size)
	var d, p time.Duration
	timed := func(c *http.Client, sum *time.Duration) {
		start := time.Now()
		get(b, c, url)
		*sum += time.Since(start)
	}
	i := 0
	for b.Loop() {
		// Alternate which goes first: the machine's load drifts.
		if i++; i%2 == 0 {
			timed(direct, &d)
			timed(proxied, &p)
		} else {
			timed(proxied, &p)
			timed(direct, &d)
		}
	}
	b.ReportMetric(float64(d)/float64(p), "proxy/direct")
	b.ReportMetric(size/1e6/(float64(d)/float64(b.N)/1e9), "direct-MB/s")
	b.ReportMetric(size/1e6/(float64(p)/float64(b.N)/1e9), "proxy-MB/s")
}
