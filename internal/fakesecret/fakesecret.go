// Package fakesecret generates realistic but fake secrets for tests of the
// output filter: each has the shape of a real credential of its kind and is
// made from a seeded random source, so it is reproducible and never real.
package fakesecret

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Secret is one fake secret and the gitleaks (or toolwarden) rule that
// must redact it.
type Secret struct {
	Kind  string // what it imitates
	Rule  string // the rule ID expected in [REDACTED:rule]
	Value string // the secret itself, which must not survive filtering
	Line  string // the line it sits in, as a config file or log would hold it
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	alnum       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	digits      = "0123456789"
)

// All returns one secret of every family the filter must cover.
func All(seed uint64) []Secret {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	s := func(set string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[r.IntN(len(set))]
		}
		return string(b)
	}
	aws := "AKIA" + s(upperDigits, 16)
	gh := "ghp_" + s(alnum, 36)
	gl := "glpat-" + s(alnum, 20)
	slack := "xoxb-" + s(digits, 12) + "-" + s(digits, 13) + "-" + s(alnum, 24)
	google := "AIza" + s(alnum, 35)
	jwt := JWT(r)
	urlPass := s(alnum, 16)
	generic := s(alnum, 32)
	key := PrivateKey(r)
	return []Secret{
		{"AWS access key ID", "aws-access-token", aws, "aws_access_key_id = " + aws},
		{"GitHub personal access token", "github-pat", gh, "export GITHUB_TOKEN=" + gh},
		{"GitLab personal access token", "gitlab-pat", gl, "gitlab: " + gl},
		{"Slack bot token", "slack-bot-token", slack, "SLACK_BOT_TOKEN=" + slack},
		{"Google API key", "gcp-api-key", google, "maps_key: " + google},
		{"JSON Web Token", "jwt", jwt, "Authorization: Bearer " + jwt},
		{"password in a URL", "url-password", urlPass, "DATABASE_URL=postgres://app:" + urlPass + "@db.internal:5432/app"},
		{"generic high-entropy assignment", "generic-api-key", generic, `client_secret = "` + generic + `"`},
		{"private key block", "private-key", key, key},
	}
}

// Needle is the part of the secret a test looks for in filtered output:
// the value itself, or for a multi-line block its first body line (its
// BEGIN line is not secret).
func (s Secret) Needle() string {
	if lines := strings.Split(s.Value, "\n"); len(lines) > 1 {
		return lines[1]
	}
	return s.Value
}

// Controls are strings that look a little like secrets and must come
// through the filter unchanged.
var Controls = []string{
	"commit 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b (HEAD -> main)",
	"task 550e8400-e29b-41d4-a716-446655440000 is Pending",
	"Please enter your password to continue; the password must be 12 characters.",
	"The API key is read from the environment variable GEMINI_API_KEY.",
	"sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"password: ${DB_PASSWORD}",
	"see https://example.com/docs/auth?token=refresh for details",
}

// JWT is a well-formed, unsigned-looking HS256 token with a fake signature.
func JWT(r *rand.Rand) string {
	enc := base64.RawURLEncoding
	h := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	p := enc.EncodeToString(fmt.Appendf(nil, `{"sub":"%d","name":"Test User","iat":1700000000}`, r.IntN(1e9)))
	sig := make([]byte, 32)
	for i := range sig {
		sig[i] = byte(r.IntN(256))
	}
	return h + "." + p + "." + enc.EncodeToString(sig)
}

// PrivateKey is a PEM block of random bytes shaped like an RSA key.
func PrivateKey(r *rand.Rand) string {
	der := make([]byte, 600)
	for i := range der {
		der[i] = byte(r.IntN(256))
	}
	b64 := base64.StdEncoding.EncodeToString(der)
	var lines []string
	for len(b64) > 64 {
		lines, b64 = append(lines, b64[:64]), b64[64:]
	}
	lines = append(lines, b64)
	return "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Join(lines, "\n") + "\n-----END RSA PRIVATE KEY-----"
}
