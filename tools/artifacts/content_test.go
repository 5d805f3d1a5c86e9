package artifacts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecodeContentSizes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		size int64
	}{{"", 0}, {"YQ==", 1}, {"YWI=", 2}, {"YWJj", 3}, {"YWJjZA==", 4}} {
		size, _, err := decodeContent(tc.in, "base64")
		require.NoError(t, err)
		require.Equal(t, tc.size, size, tc.in)
	}
	for _, in := range []string{"YQ", "YQ=", "YW\nJj", "YWJj\r\n"} {
		_, _, err := decodeContent(in, "base64")
		require.Error(t, err, "%q", in)
	}
	_, _, err := decodeContent("x", "hex")
	require.Error(t, err)
}

func TestContentType(t *testing.T) {
	ct, err := contentType("", "text")
	require.NoError(t, err)
	require.Equal(t, "text/plain; charset=utf-8", ct)
	ct, err = contentType("Text/Markdown; Charset=UTF-8", "text")
	require.NoError(t, err)
	require.Equal(t, "text/markdown; charset=UTF-8", ct)
	for _, bad := range []string{"markdown", "text/plain\r\nX-Amz-Acl: public-read", "text/plain; a=\"\x00\"", strings.Repeat("a", 300) + "/b"} {
		_, err := contentType(bad, "text")
		require.Error(t, err, "%q", bad)
	}
}

func TestIsText(t *testing.T) {
	require.True(t, isText([]byte("héllo\n\tworld\r\n")))
	require.False(t, isText([]byte{0x00}))
	require.False(t, isText([]byte{0xff, 0xfe}))
	require.False(t, isText([]byte("a\x1bb")))
}
