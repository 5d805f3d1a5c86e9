package egress_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/egress"
	"github.com/toolwarden/toolwarden/egress/egresstest"
)

// dlpClient is a client of a proxy brokering localhost (TLS terminated,
// so the data-loss checks read every request), with the checks off or
// on.
func dlpClient(b *testing.B, on bool, h http.Handler) (*http.Client, string) {
	ca := egresstest.NewCA(b)
	port := egresstest.Port(ca.Server(b, h, "localhost"))
	r := newRig(b, rigOpts{
		net: configs.Network{Allow: []string{"localhost:" + port}, UpstreamCAFile: ca.File,
			Credentials: []configs.Credential{{Host: "localhost", Header: "Authorization", ValueEnv: "TOKEN", Placeholder: placeholder}},
			DLP:         configs.NetworkDLP{Off: !on, MaxBodyBytes: 1 << 30}},
		resolver: egresstest.Resolver{"localhost": {"127.0.0.1"}},
		env:      map[string]string{"TOKEN": "Bearer real"},
		limits:   egress.Limits{MaxBytesDown: 1 << 40, MaxBytesUp: 1 << 40},
		scan:     scanner(b),
	})
	pool := ca.Pool()
	pool.AppendCertsFromPEM(r.proxy.CAPEM())
	c, base := r.client(pool), "https://localhost:"+port
	resp, err := c.Get(base + "/warm-up") // the filter's rules compile on first use
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	return c, base
}

var onOff = map[bool]string{false: "dlp-off", true: "dlp-on"}

// BenchmarkDLPSetup: a new connection to a brokered host and one request
// with a query and a few headers, the checks off and on; p50-ms is the
// median.
func BenchmarkDLPSetup(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(onOff[on], func(b *testing.B) {
			c, base := dlpClient(b, on, http.HandlerFunc(hello))
			var took []time.Duration
			for b.Loop() {
				req, _ := http.NewRequest("GET", base+"/repos/golang/go/issues?state=open&page=2&per_page=30", nil)
				req.Header.Set("Authorization", "Bearer "+placeholder)
				req.Header.Set("Accept", "application/vnd.github+json")
				start := time.Now()
				resp, err := c.Do(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatal(err, resp)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

// BenchmarkDLPUpload100MB: a 100 MB upload of text to a brokered host,
// the checks off and on in the same run; on/off is the throughput ratio.
func BenchmarkDLPUpload100MB(b *testing.B) {
	const size = 100 << 20
	words := strings.Fields("the quick brown fox jumps over lazy dog config value name id 2026 user path error ok")
	rng := rand.New(rand.NewPCG(1, 2))
	var text bytes.Buffer
	for text.Len() < size {
		text.WriteString(words[rng.IntN(len(words))])
		text.WriteByte(" \n"[rng.IntN(8)/7])
	}
	body := text.Bytes()[:size]
	sink := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })
	off, base := dlpClient(b, false, sink)
	on, baseOn := dlpClient(b, true, sink)
	b.SetBytes(2 * size)
	d := map[bool]time.Duration{}
	timed := func(c *http.Client, url string, on bool) {
		start := time.Now()
		resp, err := c.Post(url+"/up", "text/plain", bytes.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatal(err, resp)
		}
		resp.Body.Close()
		d[on] += time.Since(start)
	}
	i := 0
	for b.Loop() {
		if i++; i%2 == 0 {
			timed(off, base, false)
			timed(on, baseOn, true)
		} else {
			timed(on, baseOn, true)
			timed(off, base, false)
		}
	}
	b.ReportMetric(float64(d[false])/float64(d[true]), "on/off")
	b.ReportMetric(size/1e6/(float64(d[false])/float64(b.N)/1e9), "off-MB/s")
	b.ReportMetric(size/1e6/(float64(d[true])/float64(b.N)/1e9), "on-MB/s")
}
