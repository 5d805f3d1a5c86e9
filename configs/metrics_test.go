package configs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMetricsAddr(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // substrings of the error; none means it loads
	}{
		{name: "off by default", file: "log:\n  level: info\n"},
		{name: "loopback", file: "metrics:\n  addr: 127.0.0.1:9464\n"},
		{name: "localhost", file: "metrics:\n  addr: localhost:0\n"},
		{name: "all interfaces without allow_remote", file: "metrics:\n  addr: 0.0.0.0:9464\n",
			want: []string{"file.yaml:2: metrics.addr:", `"0.0.0.0:9464" is not a loopback address`, "metrics.allow_remote"}},
		{name: "empty host is every interface", file: "metrics:\n  addr: \":9464\"\n",
			want: []string{"metrics.addr:", "not a loopback address"}},
		{name: "a LAN address without allow_remote", file: "metrics:\n  addr: 192.168.1.5:9464\n",
			want: []string{"metrics.addr:", "metrics.allow_remote"}},
		{name: "http.allow_remote does not widen metrics", file: "http:\n  allow_remote: true\nmetrics:\n  addr: 0.0.0.0:9464\n",
			want: []string{"metrics.addr:", "metrics.allow_remote"}},
		{name: "no port", file: "metrics:\n  addr: localhost\n", want: []string{"metrics.addr:", "not host:port"}},
		{name: "unknown key", file: "metrics:\n  adr: 127.0.0.1:9464\n", want: []string{"metrics.adr: unknown key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			writeFile(t, "file.yaml", tt.file)
			_, err := Load(Options{File: "file.yaml"})
			if len(tt.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

func TestMetricsAllowRemoteIsAWidening(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "metrics:\n  addr: 0.0.0.0:9464\n  allow_remote: true\n")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, []string{`metrics.allow_remote is true: metrics.addr "0.0.0.0:9464" may listen off loopback (from file.yaml)`}, l.Widenings)
}
