package conformance

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// The requestState of the multi round-trip fixtures (mrtr.go). This file
// has no build tag, so that its test runs in every go test run; only a
// conformance build links the package.

// stateKey signs the requestStates this process hands out, so that a
// client cannot forge or alter one (the suite's tampered-state scenario).
var stateKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}()

// signState is the requestState of round of tool: the two in clear and
// their HMAC.
func signState(tool string, round int) string {
	payload := tool + "/" + strconv.Itoa(round)
	return payload + "." + base64.RawURLEncoding.EncodeToString(stateMAC(payload))
}

func stateMAC(payload string) []byte {
	m := hmac.New(sha256.New, stateKey)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// checkState returns the round state says tool is at: 0 for no state, an
// error for a state this process did not sign for tool.
func checkState(tool, state string) (int, error) {
	if state == "" {
		return 0, nil
	}
	payload, sig, ok := strings.Cut(state, ".")
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(mac, stateMAC(payload)) {
		return 0, fmt.Errorf("requestState failed its integrity check: send back the requestState the server returned, unchanged")
	}
	name, round, _ := strings.Cut(payload, "/")
	n, err := strconv.Atoi(round)
	if name != tool || err != nil {
		return 0, fmt.Errorf("requestState was issued for another call than %s", tool)
	}
	return n, nil
}
